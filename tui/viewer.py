"""``o``: a picture (a round's screenshot in replay, an approval's crop) opened where a
person can read it: the system's image viewer, or in ``handrail serve`` the browser.

Half-blocks in a terminal pane are a thumbnail; this is the full picture. What is opened
is never the file a log names: the picture, already decoded and checked by the pane
(replay: inside the run folder, its SHA-256 the one the chained record holds), is encoded
again as a PNG into a private folder (0700, files 0600) made for this process and removed
when it exits. So a log from elsewhere cannot hand the viewer a file that is something else
too (an HTML page named ``.jpg``), and a crop, masked as every picture is, leaves no copy
behind in a shared place. The viewer is started without a shell, its argument an absolute
path, its output discarded.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image as PILImage
from textual.app import App

_folder: Path | None = None


def viewer_command() -> str | None:
    """The system's opener (``xdg-open``; ``open`` on macOS), or None when there is none."""
    return shutil.which("open" if sys.platform == "darwin" else "xdg-open")


def private_folder() -> Path:
    """This process's folder for pictures handed to a viewer (made once, removed at exit)."""
    global _folder
    if _folder is None or not _folder.is_dir():
        _folder = Path(tempfile.mkdtemp(prefix="handrail-pictures-"))
        os.chmod(_folder, 0o700)
        atexit.register(shutil.rmtree, _folder, True)
    return _folder


def save_picture(image: PILImage.Image, name: str) -> Path:
    """``image`` as a fresh PNG named after ``name`` (its letters, digits and dashes only)
    in :func:`private_folder`, readable by this user alone."""
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in name)[:60] or "picture"
    path = private_folder() / f"{safe}.png"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as out:
        image.convert("RGB").save(out, format="PNG")
    return path


def open_picture(app: App[object], image: PILImage.Image, name: str) -> str:
    """Open ``image`` for the person; returns what happened, in words for a notice."""
    path = save_picture(image, name)
    if app.is_web:
        # textual-serve hands the file to the person's browser, which opens it in a tab.
        app.deliver_binary(path, open_method="browser", mime_type="image/png", name=path.name)
        return f"{path.name} opened in your browser"
    opener = viewer_command()
    if opener is None:
        return f"No picture viewer here (xdg-open): the picture is at {path}"
    try:
        subprocess.Popen(
            [opener, str(path)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        return f"The viewer did not start ({exc.strerror or exc}): the picture is at {path}"
    return f"Opened {path.name} in the picture viewer"

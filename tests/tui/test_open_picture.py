"""``o``: a round's screenshot (replay) or an approval's crop opened full size in the
picture viewer, as a fresh PNG in a private folder, never the file a log names.

The viewer is this test's own ``xdg-open`` on ``PATH``: a script that writes the path it
was given, so the test reads what the person's viewer would have opened.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
from pathlib import Path

import pytest
from PIL import Image

from tests.helpers.tui_driver import wait_until
from tests.tui.test_replay_screenshots import on_row, page_picture, replay, write_log
from tests.tui.test_tui_crop import ApprovalOnly, send_button_crop

OPENER = "open" if sys.platform == "darwin" else "xdg-open"


@pytest.fixture
def viewer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A picture viewer that writes down what it was asked to open; the file it writes."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    said = tmp_path / "opened.txt"
    script = bin_dir / OPENER
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> "{said}"\n')
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    return said


def opened(said: Path) -> Path:
    [line] = said.read_text().splitlines()
    return Path(line)


def assert_private_png(path: Path) -> Image.Image:
    assert path.is_absolute()
    assert path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    image = Image.open(path)
    image.load()
    return image


async def test_o_opens_the_rounds_screenshot_as_a_fresh_private_png(
    tmp_path: Path, viewer: Path
) -> None:
    log = write_log(tmp_path)
    app = replay(tmp_path, log)
    async with app.run_test(size=(160, 40)) as pilot:
        await on_row(app, 1)(pilot)
        await pilot.press("o")
        await wait_until(pilot, lambda: viewer.exists())
        await wait_until(
            pilot, lambda: any("picture viewer" in n.message for n in app._notifications)
        )
    path = opened(viewer)
    image = assert_private_png(path)
    assert image.size == (800, 500)
    # Not the run folder's file: a copy encoded afresh, outside the run folder.
    original = tmp_path / "run" / "rounds" / "round-001.jpg"
    assert not path.is_relative_to(tmp_path)
    assert (
        hashlib.sha256(path.read_bytes()).digest() != hashlib.sha256(original.read_bytes()).digest()
    )
    assert original.read_bytes() == page_picture()


async def test_o_on_a_round_without_a_picture_opens_nothing(tmp_path: Path, viewer: Path) -> None:
    app = replay(tmp_path, write_log(tmp_path))
    async with app.run_test(size=(160, 40)) as pilot:
        await on_row(app, 2)(pilot)  # its mask was refused: no picture
        await pilot.press("o")
        await wait_until(pilot, lambda: any("No picture" in n.message for n in app._notifications))
    assert not viewer.exists()


async def test_a_swapped_file_is_never_handed_to_the_viewer(tmp_path: Path, viewer: Path) -> None:
    """A log from elsewhere whose picture file is now a page (an HTML file named .jpg)."""
    log = write_log(tmp_path)
    (tmp_path / "run" / "rounds" / "round-001.jpg").write_text("<script>alert(1)</script>")
    app = replay(tmp_path, log)
    async with app.run_test(size=(160, 40)) as pilot:
        await on_row(app, 1)(pilot)
        await pilot.press("o")
        await wait_until(pilot, lambda: any("No picture" in n.message for n in app._notifications))
    assert not viewer.exists()


async def test_without_a_viewer_the_notice_names_the_picture(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    app = replay(tmp_path, write_log(tmp_path))
    async with app.run_test(size=(160, 40)) as pilot:
        await on_row(app, 1)(pilot)
        await pilot.press("o")
        await wait_until(
            pilot, lambda: any("No picture viewer" in n.message for n in app._notifications)
        )
        [note] = [n.message for n in app._notifications if "No picture viewer" in n.message]
    path = Path(note.rsplit(" at ", 1)[1])
    assert assert_private_png(path).size == (800, 500)


async def test_o_on_an_approval_opens_the_targets_picture(tmp_path: Path, viewer: Path) -> None:
    app = ApprovalOnly(send_button_crop(), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press("o")
        await wait_until(pilot, lambda: viewer.exists())
    image = assert_private_png(opened(viewer))
    assert image.size == (240, 120)
    assert image.getpixel((120, 60)) == (0x1A, 0x7F, 0x37)  # the button, as the crop had it

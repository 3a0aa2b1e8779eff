"""The real applications bench/bench_real_pages.py reads, each started on loopback from the
bench venv's own packages (bench/requirements.txt), and the Chromium all three tools share.

Every process here is started by us, in a temporary folder of its own (HOME and the
JUPYTER_* folders point there), and stopped by its PID; readiness is the process's own
announcement on its output (the URL it serves), never a fixed wait.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

CHROME = os.environ.get("CHROME_PATH", "/usr/bin/chromium")
CHROME_FLAGS = (
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
)
LOOPBACK_ONLY = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost"
"""Pages of real apps may name CDNs or font hosts: nothing leaves the machine."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def quiet_env(home: Path) -> dict[str, str]:
    """The environment of everything the bench starts: a HOME of its own, no telemetry."""
    env = dict(os.environ)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        JUPYTER_CONFIG_DIR=str(home / "jupyter" / "config"),
        JUPYTER_DATA_DIR=str(home / "jupyter" / "data"),
        JUPYTER_RUNTIME_DIR=str(home / "jupyter" / "runtime"),
        IPYTHONDIR=str(home / "ipython"),
        JUPYTER_PLATFORM_DIRS="1",
        ANONYMIZED_TELEMETRY="false",
        BROWSER_USE_CLOUD_SYNC="false",
        BROWSER_USE_SETUP_LOGGING="false",
        GRADIO_ANALYTICS_ENABLED="False",
        HF_HUB_OFFLINE="1",
        PYTHONUNBUFFERED="1",
    )
    return env


@dataclass
class Started:
    """A process of ours and the URL it announced."""

    name: str
    process: subprocess.Popen[str]
    url: str

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(5)


def _start(name: str, argv: list[str], env: dict[str, str], cwd: Path, announce: str) -> Started:
    """Start ``argv`` in its own process group and read its output until a line matches
    ``announce`` (a regex whose first group is the URL); the rest of its output is drained
    in a thread so it never blocks on a full pipe."""
    process = subprocess.Popen(
        argv,
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    pattern = re.compile(announce)
    assert process.stdout is not None
    seen: list[str] = []
    for line in process.stdout:
        seen.append(line)
        found = pattern.search(line)
        if found:
            threading.Thread(target=_drain, args=(process.stdout,), daemon=True).start()
            return Started(name, process, found.group(1))
    process.wait()
    raise SystemExit(f"{name} stopped before it served anything:\n{''.join(seen[-30:])}")


def _drain(stream: Any) -> None:
    for _ in stream:
        pass


def start_chrome(home: Path) -> Started:
    """One headless Chromium for all three tools; its URL is the DevTools HTTP endpoint."""
    profile = home / "chrome-profile"
    profile.mkdir(parents=True, exist_ok=True)
    argv = [
        CHROME,
        "--headless",
        *CHROME_FLAGS,
        LOOPBACK_ONLY,
        f"--user-data-dir={profile}",
        "--remote-debugging-port=0",
        "--window-size=1280,900",
        "about:blank",
    ]
    started = _start("chromium", argv, quiet_env(home), home, r"DevTools listening on (ws://\S+)")
    port = re.search(r":(\d+)/", started.url)
    assert port is not None
    started.url = f"http://127.0.0.1:{port.group(1)}"
    return started


NOTEBOOK = {
    "cells": [
        {
            "cell_type": "markdown",
            "metadata": {},
            "source": ["# Orders by region\n", "A small report: load, sum, plot."],
        },
        {
            "cell_type": "code",
            "execution_count": 1,
            "metadata": {},
            "outputs": [{"name": "stdout", "output_type": "stream", "text": ["loaded 4 rows\n"]}],
            "source": [
                "rows = [('north', 12), ('south', 7), ('east', 21), ('west', 3)]\n",
                "print(f'loaded {len(rows)} rows')",
            ],
        },
        {
            "cell_type": "code",
            "execution_count": 2,
            "metadata": {},
            "outputs": [
                {
                    "data": {"text/plain": ["43"]},
                    "execution_count": 2,
                    "metadata": {},
                    "output_type": "execute_result",
                }
            ],
            "source": ["sum(n for _, n in rows)"],
        },
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": []},
    ],
    "metadata": {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    },
    "nbformat": 4,
    "nbformat_minor": 5,
}


def start_jupyter(home: Path, python: str = sys.executable) -> tuple[Started, str]:
    """Jupyter Notebook 7 over a folder holding ``report.ipynb`` and two files, with a token
    we choose; returns it and the token (its pages take ``?token=``)."""
    root = home / "notebooks"
    root.mkdir(parents=True, exist_ok=True)
    (root / "report.ipynb").write_text(json.dumps(NOTEBOOK), encoding="utf-8")
    (root / "data.csv").write_text("region,orders\nnorth,12\nsouth,7\n", encoding="utf-8")
    (root / "notes.md").write_text("# Notes\n", encoding="utf-8")
    token = os.urandom(12).hex()
    argv = [
        python,
        "-m",
        "jupyter",
        "notebook",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={free_port()}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
    ]
    if os.geteuid() == 0:
        argv.append("--allow-root")
    started = _start(
        "jupyter", argv, quiet_env(home), root, r"(http://127\.0\.0\.1:\d+)/tree\?token="
    )
    return started, token


GRADIO_APP = """
import gradio as gr

def greet(name, excited, times):
    return ("Hello, " + (name or "nobody") + ("!" if excited else ".")) * int(times)

with gr.Blocks(title="Greeter") as demo:
    gr.Markdown("# Greeter\\nType a name and press Greet.")
    with gr.Row():
        name = gr.Textbox(label="Name", placeholder="Ada")
        times = gr.Slider(1, 5, value=1, step=1, label="Times")
    excited = gr.Checkbox(label="Excited")
    mood = gr.Radio(["calm", "busy"], label="Mood", value="calm")
    colour = gr.Dropdown(["red", "green", "blue"], label="Colour", value="green")
    out = gr.Textbox(label="Greeting")
    with gr.Accordion("Details", open=False):
        gr.Markdown("Nothing more.")
    gr.Button("Greet", variant="primary").click(greet, [name, excited, times], out)

demo.launch(server_name="127.0.0.1", server_port={port}, share=False, inbrowser=False)
"""


def start_gradio(home: Path, python: str = sys.executable) -> Started:
    """A small Gradio Blocks app (a form, a slider, a radio group, a dropdown, an accordion)."""
    app = home / "gradio_app.py"
    app.write_text(GRADIO_APP.replace("{port}", str(free_port())), encoding="utf-8")
    return _start(
        "gradio",
        [python, str(app)],
        quiet_env(home),
        home,
        r"Running on local URL:\s*(http://127\.0\.0\.1:\d+)",
    )


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def serve(directory: Path) -> Iterator[str]:
    """``directory`` over HTTP on loopback (the fixture site and its gallery)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()

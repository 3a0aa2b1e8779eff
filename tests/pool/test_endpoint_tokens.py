"""A grid endpoint's token never reaches the terminal or a log: endpoints are shown without
their query, and errors that quote a URL are masked (core/browser/find.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.audit.key import DATA_DIR_ENV
from core.cdp import mask_endpoints, shown_endpoint
from tui.cli.main import dispatch

TOKEN = "s3cr3t-grid-token"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"ws://grid-1:3000?token={TOKEN}", "ws://grid-1:3000?…"),
        (f"ws://grid-1:3000/devtools/browser/ab-12?token={TOKEN}&timeout=0",
         "ws://grid-1:3000/devtools/browser/ab-12?…"),
        (f"wss://ada:{TOKEN}@grid.example/chromium", "wss://…@grid.example/chromium"),
        ("ws://127.0.0.1:9222/devtools/browser/x", "ws://127.0.0.1:9222/devtools/browser/x"),
    ],
)  # fmt: skip
def test_an_endpoint_is_shown_without_its_credentials(url: str, shown: str) -> None:
    assert shown_endpoint(url) == shown


def test_errors_quoting_a_url_keep_their_words_but_not_the_token() -> None:
    said = mask_endpoints(
        f"could not connect to ws://127.0.0.1:1?token={TOKEN}&timeout=0: refused; "
        f"(see http://grid:3000/sessions?token={TOKEN})."
    )
    assert TOKEN not in said
    assert said == (
        "could not connect to ws://127.0.0.1:1?…: refused; (see http://grid:3000/sessions?…)."
    )


def test_a_grid_that_cannot_be_reached_is_said_without_its_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "data"))
    code = dispatch(
        ["pool", "start", "--name", "g", "--endpoint", f"ws://127.0.0.1:1?token={TOKEN}"]
    )
    out = capsys.readouterr()
    assert code == 2
    assert "could not reach the endpoint ws://127.0.0.1:1?…" in out.err
    assert TOKEN not in out.err + out.out


async def test_a_refused_connection_says_where_without_the_token() -> None:
    from core.browser.browser import Browser
    from core.browser.errors import BrowserError
    from core.cdp import CDPConnection, ConnectionClosed

    url = f"ws://127.0.0.1:1/devtools/browser/x?token={TOKEN}"
    with pytest.raises(ConnectionClosed) as closed:
        await CDPConnection.open(url)
    assert TOKEN not in str(closed.value) and "ws://127.0.0.1:1/devtools/browser/x?…" in str(
        closed.value
    )
    with pytest.raises(BrowserError) as refused:
        await Browser.connect(url)  # what a run in a grid slot says when its browser is gone
    assert TOKEN not in str(refused.value)

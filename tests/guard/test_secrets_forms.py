"""A page that echoes the canary secret disguised: no form of it reaches the model, the run
folder or the operational log. Real Chromium, the real SDK against the fake Messages API."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import quote

import pytest

from core.browser.browser import Tab
from core.guard.decision import ApprovalDecision
from core.run.events import ApprovalRequest, HumanRequest, HumanResponse
from core.run.session import RunSettings, run_session
from tests.helpers import load, page_eval
from tests.helpers.fake_anthropic import FakeAnthropic
from tests.helpers.site_server import FixtureSite

CANARY = "k9Tq2Wv7Lp4Xz8Rm"
FORMS = {
    "upper": CANARY.upper(),
    "lower": CANARY.lower(),
    "spaced": " ".join(CANARY),
    "dashed": "-".join(CANARY),
    "dotted": ". ".join(CANARY),
    "base64": base64.b64encode(CANARY.encode()).decode(),
    "url": "".join(f"%{ord(c):02X}" for c in CANARY),
    "html": "".join(f"&#{ord(c)};" for c in CANARY),
    "reversed": CANARY[::-1],
    "substring": CANARY[3:13],
}


def echo_url(site: FixtureSite) -> str:
    return site.url(f"/guard/echo.html?t={quote(CANARY)}")


async def test_the_echo_page_really_shows_every_form(tab: Tab, site: FixtureSite) -> None:
    # Without this, the test below could pass because the page showed nothing.
    await load(tab, echo_url(site))
    text = await page_eval(tab, "document.querySelector('#forms').innerText")
    for name, form in FORMS.items():
        assert f"{name}: {form}" in text


class NoOneAsked:
    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        raise AssertionError(f"asked to approve {request}")

    async def human(self, request: HumanRequest) -> HumanResponse:
        raise AssertionError(f"asked for a person: {request}")


async def test_no_form_of_the_secret_reaches_the_model_or_any_file(
    tmp_path: Path, site: FixtureSite, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CANARY_TOKEN", CANARY)
    fake.add_tool_use("finish", {"success": True, "answer": "read it", "reason": "done"})
    settings = RunSettings(
        task="Read the page",
        start_url=echo_url(site),
        model_spec="anthropic:claude-sonnet-5-5",
        approve="none",
        headless=True,
        profile=tmp_path / "profile",
        audit_dir=tmp_path / "logs",
        secrets=("TOKEN=CANARY_TOKEN",),
    )
    finished = await run_session(settings, supervisor=NoOneAsked())
    assert finished.exit_code == 0
    bodies = json.dumps(fake.message_bodies, ensure_ascii=False)
    assert "upper: <secret:TOKEN>" in bodies  # the page was read, the echo masked
    files = [p for p in (tmp_path / "logs").rglob("*") if p.is_file()]
    assert any(p.suffix == ".log" for p in files) and any(p.suffix == ".jsonl" for p in files)
    for name, form in FORMS.items():
        assert form not in bodies, name
        for path in files:
            assert form not in path.read_text(errors="replace"), (name, path)

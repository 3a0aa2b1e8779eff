"""Each round's screenshot: a small JPEG in the run folder, masked, named by the round record."""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import quote

import pytest
from PIL import Image

from core.audit.records import ScreenshotRef
from core.browser.browser import Browser, Tab
from core.hands.screenshot_mask import register
from core.run.round_shots import MAX_BYTES, MAX_WIDTH, SENSITIVE_ON_SCREEN, RoundShots
from core.run.session import RunSettings, run_session
from core.secrets import Secret, Secrets
from tests.helpers import load, page_eval
from tests.helpers.agent_run import Supervisor
from tests.helpers.loopback import second_site  # noqa: F401
from tests.helpers.site_server import FixtureSite
from tui.cli.main import build_parser, settings_from_args

# End to end: whole actions or runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow

CANARY = "k9Tq2Wv7Lp4Xz8Rm"


@pytest.fixture
async def masking(browser: Browser) -> AsyncIterator[Browser]:
    register(browser, Secrets([Secret("TOKEN", CANARY)]))
    yield browser
    register(browser, Secrets())


def opened(ref: ScreenshotRef, base: Path) -> Image.Image:
    assert ref.file is not None, ref.missing
    data = (base / ref.file).read_bytes()
    assert hashlib.sha256(data).hexdigest() == ref.sha256
    return Image.open(io.BytesIO(data))


async def test_a_secret_on_screen_is_black_in_the_round_screenshot(
    masking: Browser, tab: Tab, site: FixtureSite, tmp_path: Path
) -> None:
    await load(tab, site.url(f"/guard/shown.html?t={CANARY}"))
    ref = await RoundShots(masking, tmp_path / "run.jsonl").take(1)
    image = opened(ref, tmp_path).convert("L")
    box = await page_eval(tab, "document.querySelector('#part').getBoundingClientRect().toJSON()")
    scale = image.width / await page_eval(tab, "innerWidth")  # the picture is scaled down
    left, top = box["left"] * scale + 3, box["top"] * scale + 3
    right, bottom = box["right"] * scale - 3, box["bottom"] * scale - 3
    _, lightest = image.crop((left, top, right, bottom)).getextrema()
    assert lightest < 40  # JPEG blurs edges a little; unmasked, the letters sit on white


async def test_a_refused_mask_means_no_screenshot_and_says_why(
    masking: Browser,
    tab: Tab,
    site: FixtureSite,
    second_site: FixtureSite,  # noqa: F811
    tmp_path: Path,
) -> None:
    frame = second_site.url("/cdp/hello.html")
    await load(tab, site.url(f"/guard/shown.html?t=x&frame={quote(frame, safe='')}"))
    ref = await RoundShots(masking, tmp_path / "run.jsonl").take(4)
    assert ref.file is None
    assert ref.missing is not None and "frame from another site" in ref.missing
    assert not (tmp_path / "run" / "rounds").exists()


async def test_a_wide_viewport_is_scaled_down_and_capped(
    browser: Browser, tab: Tab, site: FixtureSite, tmp_path: Path
) -> None:
    await tab.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": 1800, "height": 1000, "deviceScaleFactor": 1, "mobile": False},
    )
    await load(tab, site.url("/observe/below.html"))
    ref = await RoundShots(browser, tmp_path / "run.jsonl").take(2)
    image = opened(ref, tmp_path)
    assert image.format == "JPEG"
    assert image.width == MAX_WIDTH and image.height == 1000 * MAX_WIDTH // 1800
    assert ref.file is not None and (tmp_path / ref.file).stat().st_size <= MAX_BYTES


def plan(tmp_path: Path) -> Path:
    path = tmp_path / "plan.jsonl"
    path.write_text(
        '{"tool": "click", "target": "Send"}\n'
        '{"tool": "finish", "input": {"success": true, "answer": "sent"}}\n'
    )
    return path


def round_records(tmp_path: Path) -> list[dict[str, object]]:
    (log,) = (tmp_path / "logs").glob("*.jsonl")
    records = [json.loads(line) for line in log.read_text().splitlines()]
    return [r for r in records if r["type"] == "round"]


async def test_each_round_record_names_its_screenshot(tmp_path: Path, site: FixtureSite) -> None:
    settings = RunSettings(
        task="Send the note",
        start_url=site.url("/observe/send.html"),
        model_spec=f"scripted:{plan(tmp_path)}",
        approve="none",
        headless=True,
        profile=tmp_path / "profile",
        audit_dir=tmp_path / "logs",
    )
    finished = await run_session(settings, supervisor=Supervisor())
    assert finished.outcome == "success"
    rounds = round_records(tmp_path)
    assert len(rounds) == 2
    first = ScreenshotRef.from_json(rounds[0]["screenshot"])
    assert first is not None
    assert first.file is not None and first.file.endswith("/rounds/round-001.jpg")
    # Round 1 observed the page before the click: its green button is in the picture.
    image = opened(first, tmp_path / "logs").convert("RGB")
    colours = {colour for _, colour in image.getcolors(maxcolors=1 << 20) or []}
    assert any(
        abs(r - 0x1A) < 20 and abs(g - 0x7F) < 20 and abs(b - 0x37) < 20 for r, g, b in colours
    )


async def test_no_screenshots_writes_no_pictures(tmp_path: Path, site: FixtureSite) -> None:
    args = build_parser().parse_args(
        [
            "run",
            "Send the note",
            "--no-screenshots",
            "--headless",
            "--approve",
            "none",
            "--model",
            f"scripted:{plan(tmp_path)}",
            "--start-url",
            site.url("/observe/send.html"),
            "--profile",
            str(tmp_path / "profile"),
            "--audit-dir",
            str(tmp_path / "logs"),
        ]
    )
    settings = settings_from_args(args, interactive_default="ask")
    await run_session(settings, supervisor=Supervisor())
    rounds = round_records(tmp_path)
    assert rounds and all("screenshot" not in r for r in rounds)
    assert not list((tmp_path / "logs").rglob("*.jpg"))


async def test_no_picture_is_kept_while_a_password_field_is_on_screen(
    tmp_path: Path, site: FixtureSite
) -> None:
    path = tmp_path / "plan.jsonl"
    path.write_text('{"tool": "finish", "input": {"success": false, "answer": "stopped"}}\n')
    settings = RunSettings(
        task="Look at the sign-in page",
        start_url=site.url("/agent/login.html"),
        model_spec=f"scripted:{path}",
        approve="none",
        headless=True,
        profile=tmp_path / "profile",
        audit_dir=tmp_path / "logs",
    )
    await run_session(settings, supervisor=Supervisor())
    (first,) = round_records(tmp_path)
    assert first["screenshot"] == {"missing": SENSITIVE_ON_SCREEN}
    assert not list((tmp_path / "logs").rglob("*.jpg"))


async def test_a_masked_round_picture_says_how_many_boxes_cover_secrets(
    masking: Browser, tab: Tab, site: FixtureSite, tmp_path: Path
) -> None:
    await load(tab, site.url(f"/guard/shown.html?t={CANARY}"))
    ref = await RoundShots(masking, tmp_path / "run.jsonl").take(1)
    assert ref.masked == 2  # the split text and the field's value
    assert ref.to_json()["masked"] == 2  # the round record says so to the auditor
    assert ScreenshotRef.from_json(ref.to_json()) == ref


async def test_an_unmasked_round_picture_says_nothing_of_masks(
    masking: Browser, tab: Tab, site: FixtureSite, tmp_path: Path
) -> None:
    await load(tab, site.url("/guard/shown.html?t=nothing-secret"))
    ref = await RoundShots(masking, tmp_path / "run.jsonl").take(1)
    assert ref.file is not None and ref.masked == 0
    assert "masked" not in ref.to_json()

"""The in-page marks of a driven tab: shown to the person, invisible to the page's script,
its hit tests and every screenshot. Checked on the pixels of real headless Chromium."""

from __future__ import annotations

import base64
import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PIL import Image

from core.browser.browser import Browser, Tab
from core.guard.decision import ApprovalDecision
from core.guard.policy import Gate
from core.hands import Page
from core.hands.badge import Badge
from core.hands.screenshot_mask import capture_masked
from core.model.spec import build_model
from core.run.agent import Agent, AgentConfig
from core.run.events import ApprovalRequest, HumanRequest, HumanResponse
from tests.helpers import index_of, load, open_page, page_eval
from tests.helpers.site_server import FixtureSite

BADGE_VIOLET = (116, 55, 218)  # the badge's violet over white
BADGE_AMBER = (182, 89, 21)  # "your turn"
OUTLINE = (255, 64, 160)  # the pending target's outline


@pytest.fixture
async def badge(browser: Browser) -> AsyncIterator[Badge]:
    marks = Badge(browser)
    yield marks
    await marks.clear()


async def raw_shot(tab: Tab) -> Image.Image:
    """What the screen shows, taken around handrail (no hiding, no mask)."""
    shot = await tab.send("Page.captureScreenshot", {"format": "png"})
    return Image.open(io.BytesIO(base64.b64decode(shot["data"]))).convert("RGB")


async def badge_point(tab: Tab) -> tuple[int, int]:
    """A point inside the badge (bottom centre of the viewport)."""
    width, height = await page_eval(tab, "[innerWidth, innerHeight]")
    return width // 2, height - 28


def near(colour: tuple[int, ...], wanted: tuple[int, int, int], tolerance: int = 24) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(colour, wanted, strict=False))


def shows(image: Image.Image, point: tuple[int, int], colour: tuple[int, int, int]) -> bool:
    """Whether the badge's ``colour`` is drawn around ``point`` (between its letters)."""
    x, y = point
    area = image.crop((x - 80, y - 8, x + 80, y + 8))
    return any(near(c, colour) for _, c in area.getcolors(maxcolors=1 << 16) or [])


async def test_the_badge_shows_on_screen(badge: Badge, tab: Tab, site: FixtureSite) -> None:
    await load(tab, site.url("/observe/badge.html"))
    assert await badge.driving()
    assert shows(await raw_shot(tab), await badge_point(tab), BADGE_VIOLET)


async def test_the_page_cannot_find_the_marks(badge: Badge, tab: Tab, site: FixtureSite) -> None:
    await load(tab, site.url("/observe/badge.html"))
    before = await page_eval(tab, "document.querySelectorAll('*').length")
    assert await badge.pointer(200, 100)
    assert await badge.pending((150, 80, 100, 40))
    assert await page_eval(tab, "document.querySelectorAll('*').length") == before
    assert await page_eval(tab, "document.body.shadowRoot") is None
    html = await page_eval(tab, "document.documentElement.outerHTML + document.body.innerText")
    assert "driving" not in html and "handrail" not in html


async def test_hit_tests_and_clicks_go_through_the_marks(
    badge: Badge, tab: Tab, site: FixtureSite
) -> None:
    await load(tab, site.url("/observe/badge.html"))
    x, y = await badge_point(tab)
    assert await badge.pointer(x, y)
    assert await badge.pending((x - 100, y - 20, 200, 40))
    assert await page_eval(tab, f"document.elementFromPoint({x}, {y}).id") == "under"
    for kind in ("mousePressed", "mouseReleased"):
        await tab.send(
            "Input.dispatchMouseEvent",
            {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
        )
    assert await page_eval(tab, "window.clicks") == 1


async def test_screenshots_never_show_the_marks(
    badge: Badge, browser: Browser, tab: Tab, site: FixtureSite
) -> None:
    await load(tab, site.url("/observe/badge.html"))
    point = await badge_point(tab)
    assert await badge.pending((point[0] - 100, point[1] - 20, 200, 40))
    shot = await capture_masked(browser, tab, timeout=20)
    image = Image.open(io.BytesIO(base64.b64decode(shot["data"]))).convert("RGB")
    area = image.crop((point[0] - 110, point[1] - 30, point[0] + 110, point[1] + 20))
    assert area.getcolors() == [(220 * 50, (255, 255, 255))]  # only the white page
    # ... and the person's view has them back right after.
    assert shows(await raw_shot(tab), point, BADGE_VIOLET)


async def test_page_styles_cannot_hide_or_restyle_the_badge(
    badge: Badge, tab: Tab, site: FixtureSite
) -> None:
    await load(tab, site.url("/observe/badge_hostile.html"))
    assert await badge.driving()
    assert shows(await raw_shot(tab), await badge_point(tab), BADGE_VIOLET)


async def test_a_hand_over_turns_the_badge_to_your_turn(
    badge: Badge, tab: Tab, site: FixtureSite
) -> None:
    await load(tab, site.url("/observe/badge.html"))
    assert await badge.your_turn()
    assert shows(await raw_shot(tab), await badge_point(tab), BADGE_AMBER)


async def test_a_page_whose_body_has_its_own_root_stays_unmarked(
    badge: Badge, tab: Tab, site: FixtureSite
) -> None:
    await load(tab, site.url("/observe/badge.html"))
    await page_eval(tab, "document.body.attachShadow({mode: 'open'}).innerHTML = '<slot></slot>'")
    assert not await badge.driving()
    assert await page_eval(tab, "document.body.shadowRoot.children.length") == 1


@pytest.fixture
async def hands(browser: Browser, tab: Tab) -> AsyncIterator[Page]:
    page = Page(browser, action_timeout=15)
    yield page
    page.close()


async def test_the_model_never_reads_the_marks(
    badge: Badge, hands: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(hands, site, "/observe/badge.html")
    assert await badge.pending((10, 10, 100, 40))
    snapshot, _ = await hands.observe()
    assert "handrail" not in snapshot.text and "driving" not in snapshot.text
    assert [e.name for e in snapshot.elements.values()] == ["Under"]
    # Our marks are counted as ours: their closed root does not send every digest looking
    # for hidden roots through the whole DOM tree.
    assert [a["pierced"] for a in snapshot.stats["roots"]] == [False]


async def test_the_hands_click_through_the_badge_and_pointer(
    badge: Badge, hands: Page, tab: Tab, site: FixtureSite
) -> None:
    snapshot = await open_page(hands, site, "/observe/badge.html")
    x, y = await badge_point(tab)
    assert await badge.pointer(x, y)
    result = await hands.click(index_of(snapshot, "Under"))
    assert result.ok, result.message
    assert await page_eval(tab, "window.clicks") == 1


class Watching:
    """A supervisor that looks at the screen while it is asked, then approves."""

    def __init__(self, tab: Tab) -> None:
        self.tab = tab
        self.seen: list[Image.Image] = []

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        self.seen.append(await raw_shot(self.tab))
        return ApprovalDecision("approved")

    async def human(self, request: HumanRequest) -> HumanResponse:
        return "resume"


async def test_an_approval_outlines_its_target_while_it_waits(
    browser: Browser, hands: Page, tab: Tab, site: FixtureSite, tmp_path: Path
) -> None:
    plan = tmp_path / "plan.jsonl"
    plan.write_text(
        '{"tool": "click", "target": "Under"}\n'
        '{"tool": "finish", "input": {"success": true, "answer": "clicked"}}\n'
    )
    await open_page(hands, site, "/observe/badge.html")
    supervisor = Watching(tab)
    marks = Badge(browser)
    agent = Agent(
        config=AgentConfig(task="Press the button", max_rounds=3),
        model=build_model(f"scripted:{plan}", base_url=None, env={}),
        page=hands,
        gate=Gate(mode="ask"),
        supervisor=supervisor,
        badge=marks,
    )
    try:
        finished = await agent.run()
    finally:
        await marks.clear()
    assert finished.outcome == "success"
    (screen,) = supervisor.seen
    box = await page_eval(tab, "document.querySelector('#under').getBoundingClientRect().toJSON()")
    edge = screen.crop((box["left"] - 6, box["top"] - 6, box["left"], box["bottom"]))
    assert any(near(c, OUTLINE) for _, c in edge.getcolors(maxcolors=1 << 16) or [])
    assert await page_eval(tab, "window.clicks") == 1


async def test_a_closed_root_of_the_page_beside_the_marks_is_still_found(
    badge: Badge, hands: Page, tab: Tab, site: FixtureSite
) -> None:
    # The count takes a shadow-root count made of our marks alone as nothing to look for;
    # a root of the page's own beside them must still make it look.
    await open_page(hands, site, "/closed/roots.html?case=light-child")
    assert await badge.pending((10, 10, 100, 40))
    snapshot, _ = await hands.observe()
    assert [f.name for f in snapshot.signals.password_fields] == ["Password"], snapshot.text
    assert [a["pierced"] for a in snapshot.stats["roots"]] == [True]

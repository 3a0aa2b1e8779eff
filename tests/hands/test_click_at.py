"""click_at (issue 26): a click on a point of the latest screenshot, for what the digest
cannot list. The red square of a canvas is found in the screenshot's own pixels, as a
vision model would find it, and the page's canvas says where the click landed: at device
scale 1 and 2, and after the page scrolled. An attacker's invisible overlay and another
site's frame are refused, whatever the point."""

from __future__ import annotations

import base64
import io
from collections.abc import AsyncIterator

import pytest
from PIL import Image

from core.actions import Action
from core.browser.browser import Tab
from core.guard.policy import Gate
from core.hands import Page
from core.hands.shot import PointHit
from tests.helpers import open_page, page_eval
from tests.helpers.site_server import FixtureSite

pytestmark = pytest.mark.slow

RED = (255, 0, 0)


async def shot(page: Page) -> Image.Image:
    result = await page.screenshot_base64()
    assert result.ok, result.message
    data = result.data or {}
    return Image.open(io.BytesIO(base64.b64decode(str(data["base64"])))).convert("RGB")


def centre_of(image: Image.Image, colour: tuple[int, int, int]) -> tuple[float, float]:
    """The centre of the pixels of ``colour`` in the image (what a vision model points at)."""
    xs: list[int] = []
    ys: list[int] = []
    pixels = image.load()
    assert pixels is not None
    for y in range(0, image.height, 2):
        for x in range(0, image.width, 2):
            if pixels[x, y] == colour:
                xs.append(x)
                ys.append(y)
    assert xs, "the colour is not in the screenshot"
    return (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2


@pytest.fixture
async def scale_two(tab: Tab) -> AsyncIterator[Tab]:
    await tab.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": 800, "height": 600, "deviceScaleFactor": 2, "mobile": False},
    )
    yield tab
    await tab.send("Emulation.clearDeviceMetricsOverride")


async def test_a_point_of_the_screenshot_clicks_the_canvas_there(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, "/hands/drag/canvas.html")
    x, y = centre_of(await shot(page), RED)
    result = await page.click_at(x, y)
    assert result.ok, result.message
    assert "canvas" in result.message, result.message
    clicks = await page_eval(tab, "window.clicks")
    assert len(clicks) == 1 and clicks[0]["square"], clicks


async def test_screenshot_pixels_map_through_the_device_scale(
    page: Page, scale_two: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, "/hands/drag/canvas.html")
    image = await shot(page)
    assert image.width == 1600  # two image pixels per CSS pixel
    x, y = centre_of(image, RED)
    result = await page.click_at(x, y)
    assert result.ok, result.message
    clicks = await page_eval(scale_two, "window.clicks")
    assert len(clicks) == 1 and clicks[0]["square"], clicks
    assert abs(clicks[0]["x"] - 230) <= 3 and abs(clicks[0]["y"] - 130) <= 3, clicks


async def test_after_a_scroll_the_point_is_the_same_spot_of_the_page(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, "/hands/drag/canvas.html")
    x, y = centre_of(await shot(page), RED)
    await page_eval(tab, "window.scrollTo(0, 60)")
    result = await page.click_at(x, y)
    assert result.ok, result.message
    clicks = await page_eval(tab, "window.clicks")
    assert len(clicks) == 1 and clicks[0]["square"], clicks


async def test_an_unnamed_icon_is_judged_as_the_button_around_it(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, "/hands/drag/canvas.html")
    x, y = centre_of(await shot(page), (0, 0xAA, 0))
    hit = await page.locate(x, y)
    assert isinstance(hit, PointHit) and hit.describe.startswith("<rect"), hit
    snapshot, _ = await page.observe()
    verdict = Gate(mode="risky").assess(Action("click_at", {"x": x, "y": y}), snapshot, hit=hit)
    assert verdict.risky and verdict.needs_approval, verdict
    assert "Delete account" in verdict.why, verdict.why
    # On the canvas nothing commits: ask mode asks, risky mode lets it through.
    cx, cy = centre_of(await shot(page), RED)
    canvas = await page.locate(cx, cy)
    assert isinstance(canvas, PointHit)
    plain = Gate(mode="risky").assess(Action("click_at", {"x": cx, "y": cy}), snapshot, hit=canvas)
    assert not plain.risky and not plain.needs_approval and not plain.refused, plain


async def test_without_a_screenshot_click_at_says_to_take_one(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, "/hands/drag/canvas.html")
    result = await page.click_at(100, 100)
    assert not result.ok
    assert "take one with `screenshot` first" in result.message, result.message
    assert await page_eval(tab, "window.clicks") == []


async def test_an_invisible_overlay_over_the_point_is_refused(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, "/guard/click-at-overlay.html")
    image = await shot(page)
    x, y = centre_of(image, (0x20, 0x50, 0xC0))  # the drawn "Read more"
    hit = await page.locate(x, y)
    assert isinstance(hit, PointHit)
    snapshot, _ = await page.observe()
    verdict = Gate(mode="none").assess(Action("click_at", {"x": x, "y": y}), snapshot, hit=hit)
    assert verdict.refused and "invisible element" in verdict.refused, verdict
    result = await page.click_at(x, y)
    assert not result.ok and "invisible element" in result.message, result.message
    assert await page_eval(tab, "window.events") == []


async def test_a_captcha_is_never_clicked_at_a_point_either(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    await open_page(page, site, "/guard/click-at-overlay.html")
    x, y = centre_of(await shot(page), (0xC0, 0, 0xC0))
    hit = await page.locate(x, y)
    assert isinstance(hit, PointHit)
    snapshot, _ = await page.observe()
    verdict = Gate(mode="none").assess(Action("click_at", {"x": x, "y": y}), snapshot, hit=hit)
    assert verdict.refused and "CAPTCHA" in verdict.refused, verdict
    assert await page_eval(tab, "window.events") == []


async def test_a_point_in_another_sites_frame_is_refused(
    page: Page, tab: Tab, site: FixtureSite, other_site: FixtureSite
) -> None:
    await open_page(page, site, f"/guard/click-at-overlay.html?other={other_site.origin}")
    assert await page_eval(tab, "window.otherReady")
    await shot(page)
    # The frame's box: (40, 200) to (340, 320) CSS pixels at scale 1.
    hit = await page.locate(190, 260)
    assert isinstance(hit, PointHit) and hit.frame, hit
    snapshot, _ = await page.observe()
    verdict = Gate(mode="none").assess(Action("click_at", {"x": 190, "y": 260}), snapshot, hit=hit)
    assert verdict.refused and "frame" in verdict.refused, verdict
    result = await page.click_at(190, 260)
    assert not result.ok and "frame from" in result.message, result.message

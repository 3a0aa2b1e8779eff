"""Screenshots cover every secret on screen, or are refused. Checked on the pixels."""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import quote

import pytest

from core.browser.browser import Browser, Tab
from core.hands.screenshot_mask import ScreenshotRefused, capture_masked, register
from core.secrets import Secret, Secrets
from tests.helpers import load, page_eval
from tests.helpers.loopback import second_site  # noqa: F401
from tests.helpers.site_server import FixtureSite

CANARY = "k9Tq2Wv7Lp4Xz8Rm"
Pixels = tuple[int, int, list[bytes]]


def decode_png(data: bytes, rows_wanted: int | None = None) -> Pixels:
    """Width, height and RGB rows of an 8-bit RGB(A) PNG as Chromium writes it (only the
    first ``rows_wanted`` rows, when given: decoding is slow in pure Python)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and color in (2, 6)
    channels = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height if rows_wanted is None else min(height, rows_wanted)):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up = previous[x]
            up_left = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 255
            elif kind == 2:
                line[x] = (line[x] + up) & 255
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                best = left if pa <= pb and pa <= pc else (up if pb <= pc else up_left)
                line[x] = (line[x] + best) & 255
        rows.append(bytes(b for i, b in enumerate(line) if i % channels < 3))
        previous = line
    return width, height, rows


def region(pixels: Pixels, box: dict[str, float]) -> set[bytes]:
    """The distinct RGB colours inside ``box`` (CSS px; the device scale factor is 1)."""
    _, _, rows = pixels
    colours = set()
    for y in range(int(box["top"]) + 1, int(box["bottom"]) - 1):
        row = rows[y]
        for x in range(int(box["left"]) + 1, int(box["right"]) - 1):
            colours.add(row[x * 3 : x * 3 + 3])
    return colours


async def shot(tab: Tab, masked: bool, browser: Browser, rows: int | None = None) -> Pixels:
    if masked:
        result = await capture_masked(browser, tab, timeout=20)
    else:
        result = await tab.send("Page.captureScreenshot", {"format": "png"})
    return decode_png(base64.b64decode(result["data"]), rows)


async def rect(tab: Tab, selector: str) -> dict[str, float]:
    box: dict[str, float] = await page_eval(
        tab, f"document.querySelector({selector!r}).getBoundingClientRect().toJSON()"
    )
    return box


@pytest.fixture
async def masking(browser: Browser) -> AsyncIterator[Browser]:
    register(browser, Secrets([Secret("TOKEN", CANARY)]))
    yield browser
    register(browser, Secrets())


async def test_a_screenshot_covers_the_secret_and_nothing_else(
    masking: Browser, tab: Tab, site: FixtureSite
) -> None:
    await load(tab, site.url(f"/guard/shown.html?t={CANARY}"))
    before = await shot(tab, False, masking)
    masked = await shot(tab, True, masking)
    after = await shot(tab, False, masking)
    black = {b"\x00\x00\x00"}
    for selector in ("#part", "#field"):
        where = await rect(tab, selector)
        assert len(region(before, where)) > 1, selector  # the secret is really drawn there
        assert region(masked, where) == black, selector
    plain = await rect(tab, "#plain")
    assert region(masked, plain) == region(before, plain) and len(region(before, plain)) > 1
    assert after == before  # the boxes are gone again


async def test_a_screenshot_over_a_frame_it_cannot_read_is_refused(
    masking: Browser,
    tab: Tab,
    site: FixtureSite,
    second_site: FixtureSite,  # noqa: F811
) -> None:
    frame = second_site.url("/cdp/hello.html")
    await load(tab, site.url(f"/guard/shown.html?t=nothing&frame={quote(frame, safe='')}"))
    with pytest.raises(ScreenshotRefused, match="frame from another site"):
        await capture_masked(masking, tab, timeout=20)


async def drawn_at(tab: Tab, site: FixtureSite, how: str, token: str) -> dict[str, float]:
    await load(tab, site.url(f"/guard/drawn.html?how={how}&t={quote(token)}"))
    assert await page_eval(tab, "window.drawn") is True
    where: dict[str, float] = await page_eval(tab, "window.where()")
    return where


# Every way a page can draw a value that is not a plain text node of the document.
DRAWN = (
    "open-shadow",
    "closed-shadow",
    "after-emoji",
    "uppercase",
    "letter-spacing",
    "rotated",
    "text-shadow-copy",
    "drop-shadow-copy",
    "reflected",
    "before-attr",
    "after-string",
    "marker",
    "quotes",
    "list-style-string",
    "counter-style",
    "field",
    "placeholder",
    "option",
    "same-origin-frame",
    "modal-dialog",
    "faded-page",
    "moving",
    "canvas",
    "img",
    "css-background",
    "svg-image",
    "video-poster",
)


@pytest.mark.parametrize("how", DRAWN)
async def test_a_secret_is_masked_however_the_page_draws_it(
    masking: Browser, tab: Tab, site: FixtureSite, how: str
) -> None:
    # A small viewport: the PNGs are decoded in pure Python.
    metrics = {"width": 720, "height": 400, "deviceScaleFactor": 1, "mobile": False}
    await tab.send("Emulation.setDeviceMetricsOverride", metrics)
    where = await drawn_at(tab, site, how, CANARY)
    rows = int(where["bottom"]) + 2
    shown = region(await shot(tab, False, masking, rows), where)
    masked = region(await shot(tab, True, masking, rows), where)
    await drawn_at(tab, site, how, "")
    empty = region(await shot(tab, False, masking, rows), where)
    assert shown != empty  # the secret really is drawn there
    # Covered by a black box, or not drawn at all (a hidden pseudo element).
    assert masked in ({b"\x00\x00\x00"}, empty)


async def test_a_page_whose_css_answers_the_mask_with_a_secret_is_refused(
    masking: Browser, tab: Tab, site: FixtureSite
) -> None:
    await drawn_at(tab, site, "shown-by-the-mask", CANARY)
    with pytest.raises(ScreenshotRefused, match="showed more of a secret"):
        await capture_masked(masking, tab, timeout=20)
    # The page is as it was: the boxes are gone, so the hidden copy is hidden again.
    assert (
        await page_eval(tab, "getComputedStyle(document.querySelector('#later')).display") == "none"
    )


async def test_the_screenshot_action_tells_the_model_the_image_is_masked(
    masking: Browser, tab: Tab, site: FixtureSite, tmp_path: Path
) -> None:
    from core.hands import Page

    page = Page(masking, screenshots_dir=tmp_path)
    try:
        assert (await page.navigate(site.url(f"/guard/shown.html?t={CANARY}"))).ok
        result = await page.screenshot()
        assert result.ok, result.message
        assert "2 places where a secret showed are covered by a box" in result.message
        assert result.data == {"masked": 2}
        assert (await page.navigate(site.url("/guard/shown.html?t=plain"))).ok
        plain = await page.screenshot()
        assert "covered" not in plain.message and plain.data is None
    finally:
        page.close()

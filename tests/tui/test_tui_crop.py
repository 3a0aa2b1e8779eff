"""The approval's picture of the target: taken from the real page (masked), and drawn in
the modal with half-blocks where the terminal has no graphics (as here: no tty)."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw

from core.actions import Action
from core.browser.browser import Browser, Tab
from core.hands.screenshot_mask import register
from core.run.events import ApprovalRequest, TargetCrop
from core.run.target_picture import crop_target
from core.secrets import Secret, Secrets
from tests.helpers import load, page_eval
from tests.helpers.pty_terminal import Terminal
from tests.helpers.site_server import FixtureSite
from tests.helpers.tui_driver import still_clock
from tui import observatory
from tui.observatory import ObservatoryApp
from tui.screens.approval import ApprovalScreen

GREEN = (0x1A, 0x7F, 0x37)
SECRET = "k9Tq2Wv7Lp4Xz8Rm"


async def box(tab: Tab, selector: str) -> tuple[float, float, float, float]:
    r = await page_eval(
        tab, f"document.querySelector({selector!r}).getBoundingClientRect().toJSON()"
    )
    return (r["x"], r["y"], r["width"], r["height"])


def picture(crop: TargetCrop) -> Image.Image:
    assert crop.png is not None, crop.missing
    return Image.open(io.BytesIO(crop.png)).convert("RGB")


@pytest.fixture
async def masking(browser: Browser) -> AsyncIterator[Browser]:
    register(browser, Secrets([Secret("KEY", SECRET)]))
    yield browser
    register(browser, Secrets())


async def test_the_crop_shows_the_target_where_its_outline_says(
    browser: Browser, tab: Tab, site: FixtureSite
) -> None:
    await load(tab, site.url("/observe/below.html"))
    await page_eval(tab, "window.scrollTo(0, 1100)")  # the clip must follow the scroll
    crop = await crop_target(browser, tab, await box(tab, "#send"), timeout=20)
    image = picture(crop)
    x, y, w, h = crop.outline
    assert image.getpixel((x + 4, y + h // 2)) == GREEN
    assert image.getpixel((x + w - 4, y + h // 2)) == GREEN
    assert image.getpixel((x - 8, y + h // 2)) == (255, 255, 255)  # the page around it


async def test_the_crop_masks_a_secret_beside_the_target(
    masking: Browser, tab: Tab, site: FixtureSite
) -> None:
    await load(tab, site.url("/observe/below.html"))
    await page_eval(tab, "window.scrollTo(0, 1100)")
    target = await box(tab, "#send")
    crop = await crop_target(masking, tab, target, timeout=20)
    key = await box(tab, "#key")
    image = picture(crop)
    scale = crop.outline[2] / target[2]
    left, top = target[0] - crop.outline[0] / scale, target[1] - crop.outline[1] / scale
    # The part of the secret inside the picture (it sits just right of the button).
    inner = (
        max(0, round((key[0] - left) * scale) + 2),
        max(0, round((key[1] - top) * scale) + 2),
        min(image.width, round((key[0] + key[2] - left) * scale) - 2),
        min(image.height, round((key[1] + key[3] - top) * scale) - 2),
    )
    assert inner[2] - inner[0] >= 6 and inner[3] - inner[1] >= 6, (inner, image.size)
    inside = image.crop(inner)
    assert {colour for _, colour in inside.getcolors(maxcolors=4096) or []} == {(0, 0, 0)}


async def test_an_offscreen_target_has_no_picture_and_says_why(
    browser: Browser, tab: Tab, site: FixtureSite
) -> None:
    await load(tab, site.url("/observe/below.html"))
    crop = await crop_target(browser, tab, await box(tab, "#send"), timeout=20)
    assert crop.png is None
    assert crop.missing == "the target is outside the visible part of the page"


def send_button_crop() -> TargetCrop:
    """A stand-in page: a green button on white, 240x120, the button at (60, 40)."""
    image = Image.new("RGB", (240, 120), (255, 255, 255))
    ImageDraw.Draw(image).rectangle((60, 40, 179, 79), fill=GREEN)
    data = io.BytesIO()
    image.save(data, format="PNG")
    return TargetCrop(data.getvalue(), outline=(60, 40, 120, 40))


def request(crop: TargetCrop) -> ApprovalRequest:
    return ApprovalRequest(
        round=3,
        action=Action("click", {"index": 7}, "Send the note", "tu_1"),
        url="http://127.0.0.1:8000/observe/send.html",
        title="Send a note",
        why="every page-changing action asks (--approve ask)",
        element_line="[7]<button type=submit>Send</button>",
        crop=crop,
    )


class ApprovalOnly(ObservatoryApp):
    CSS_PATH = Path(observatory.__file__).with_name("observatory.tcss")

    def __init__(self, crop: TargetCrop, config_dir: Path) -> None:
        # A clock that stands still: the approval counts its wait ("waiting 00:00").
        super().__init__(config_dir=config_dir, persist_theme=False, clock=still_clock)
        self.crop = crop

    def on_mount(self) -> None:
        super().on_mount()
        self.push_screen(ApprovalScreen(request(self.crop)))


def test_approval_shows_the_crop_in_half_blocks(snap_compare: Any, tmp_path: Path) -> None:
    assert snap_compare(ApprovalOnly(send_button_crop(), tmp_path), terminal_size=(120, 40))


async def test_approval_without_a_picture_says_why(tmp_path: Path) -> None:
    crop = TargetCrop(None, missing="no picture: the page shows a frame from another site")
    app = ApprovalOnly(crop, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        shown = app.screen.query_one("#approval-crop-missing")
        assert "frame from another site" in str(shown.render())


def test_at_80_columns_the_crop_follows_the_facts(snap_compare: Any, tmp_path: Path) -> None:
    async def run_before(pilot: Any) -> None:
        await pilot.pause()
        pilot.app.screen.query_one("#approval-body").scroll_end(animate=False)
        await pilot.pause()

    app = ApprovalOnly(send_button_crop(), tmp_path)
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


_UNSIZED_TERMINAL_SCRIPT = """
import asyncio
from PIL import Image
from textual.app import App
from tui.screens.approval import ApprovalScreen  # imports the picture code, as the observatory does
from tui.widgets.target_crop import picture

class One(App[None]):
    def compose(self):
        yield picture(Image.new("RGB", (84, 28), (0x1A, 0x7F, 0x37)), id="pic")

async def main():
    async with One().run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        lines = pilot.app.query_one("#pic").render_lines(pilot.app.query_one("#pic").region)
        print("CELLS", "".join(seg.text for line in lines for seg in line))

asyncio.run(main())
"""


def test_a_terminal_that_reports_no_size_still_gets_the_picture_in_half_blocks() -> None:
    """A pseudo-terminal nobody sized says 0x0; textual-image divides by that at import."""
    term = Terminal([sys.executable, "-c", _UNSIZED_TERMINAL_SCRIPT], dict(os.environ), size=(0, 0))
    try:
        out = term.read_to_end(timeout=120)  # until the child closes the terminal (it exits)
        code = term.proc.wait(timeout=60)
    finally:
        term.close()
    assert code == 0, out.decode(errors="replace")[-2000:]
    cells = out.decode(errors="replace").split("CELLS", 1)[-1]
    assert "▀" in cells or "▄" in cells, out.decode(errors="replace")[-2000:]


def test_the_crop_is_taken_at_the_targets_scale() -> None:
    """Text in the picture stays legible in half-blocks: a small target fills its picture, a
    wide one is shown from its start, never the 640x320 around it it was."""
    from core.run.target_picture import ASPECT, LEGIBLE_WIDTH, crop_region

    view = (1280.0, 900.0)
    button = (300.0, 400.0, 100.0, 48.0)
    region = crop_region(button, view)
    assert region is not None
    left, _top, width, height = region
    assert left <= 300 - 8 and left + width >= 400 + 8  # the whole button and a little
    assert button[2] / width >= 0.75
    assert abs(width / height - ASPECT) < 0.01
    # 16px text drawn 42 cells wide keeps 8 half-block pixels or more.
    assert 16 * 42 / width * 2 >= 8
    checkbox = crop_region((50.0, 60.0, 13.0, 13.0), view)
    assert checkbox is not None and checkbox[2] <= 45
    wide = crop_region((100.0, 200.0, 900.0, 40.0), view)
    assert wide is not None
    assert wide[2] == LEGIBLE_WIDTH and wide[0] < 100 <= wide[0] + 16  # from its start
    corner = crop_region((1270.0, 890.0, 10.0, 10.0), view)
    assert corner is not None
    assert corner[0] + corner[2] <= 1280 and corner[1] + corner[3] <= 900

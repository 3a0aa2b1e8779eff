"""Screenshots of the viewport."""

from __future__ import annotations

import base64
import tempfile
import time
from pathlib import Path

from core.hands.ctx import Ctx
from core.hands.screenshot_mask import capture_masked
from core.hands.shot import ShotGeometry, png_size
from core.result import ActionResult


async def screenshot(ctx: Ctx, *, with_base64: bool) -> ActionResult:
    timeout = max(min(ctx.remaining(), 30.0), 1.0)
    metrics = await ctx.current.send("Page.getLayoutMetrics", timeout=timeout)
    shot = await capture_masked(ctx.hands.browser, ctx.current, timeout=timeout)
    data = base64.b64decode(shot["data"])
    view = metrics["cssVisualViewport"]
    width, height = png_size(data)
    ctx.hands.last_shot = ShotGeometry(
        target_id=ctx.current.target_id,
        url=ctx.current.url,
        width=width,
        height=height,
        view_width=float(view["clientWidth"]),
        view_height=float(view["clientHeight"]),
        page_x=float(view["pageX"]),
        page_y=float(view["pageY"]),
    )
    folder = (
        ctx.hands.options.screenshots_dir or Path(tempfile.gettempdir()) / "handrail-screenshots"
    )
    folder.mkdir(parents=True, exist_ok=True)
    ctx.hands.screens += 1
    path = folder / f"screenshot-{time.strftime('%Y%m%d-%H%M%S')}-{ctx.hands.screens:03d}.png"
    path.write_bytes(data)
    masked = int(shot.get("masked") or 0)
    message = f"saved a screenshot of the viewport to {path}"
    if masked:
        # The model (and the log) must know the picture is not the page as it is.
        message += f"; {masked} place{'s' if masked != 1 else ''} where a secret showed "
        message += f"{'are' if masked != 1 else 'is'} covered by a box in the image"
    facts: dict[str, object] = {"masked": masked} if masked else {}
    if with_base64:
        facts["base64"] = shot["data"]
    return ActionResult.success(message, screenshot=str(path), data=facts or None)

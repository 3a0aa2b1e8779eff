"""Screenshots of the viewport."""

from __future__ import annotations

import base64
import tempfile
import time
from pathlib import Path

from core.hands.ctx import Ctx
from core.hands.screenshot_mask import capture_masked
from core.result import ActionResult


async def screenshot(ctx: Ctx, *, with_base64: bool) -> ActionResult:
    shot = await capture_masked(
        ctx.hands.browser, ctx.current, timeout=max(min(ctx.remaining(), 30.0), 1.0)
    )
    data = base64.b64decode(shot["data"])
    folder = (
        ctx.hands.options.screenshots_dir or Path(tempfile.gettempdir()) / "handrail-screenshots"
    )
    folder.mkdir(parents=True, exist_ok=True)
    ctx.hands.screens += 1
    path = folder / f"screenshot-{time.strftime('%Y%m%d-%H%M%S')}-{ctx.hands.screens:03d}.png"
    path.write_bytes(data)
    return ActionResult.success(
        f"saved a screenshot of the viewport to {path}",
        screenshot=str(path),
        data={"base64": shot["data"]} if with_base64 else None,
    )

"""Chrome's own view of an element, to hold the digest against (issue 26: names as Chrome
computes them)."""

from __future__ import annotations

from core.browser.browser import Tab
from core.world.calls import element_object_id


async def chrome_name(tab: Tab, index: int) -> str:
    """The accessible name Chrome computes for the digest's element [index]
    (``Accessibility.getPartialAXTree`` on that node)."""
    object_id = await element_object_id(tab, index)
    tree = await tab.send(
        "Accessibility.getPartialAXTree", {"objectId": object_id, "fetchRelatives": False}
    )
    node = tree["nodes"][0]
    return str(node.get("name", {}).get("value", ""))

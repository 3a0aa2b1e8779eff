"""Downloads the pages started: followed through the browser's events, given their own
file names back once Chrome has saved them, and reported once each."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.cdp import JSON


@dataclass
class Download:
    guid: str
    name: str
    url: str
    state: str = "inProgress"
    path: str | None = None
    reported: bool = False


class Downloads:
    """Every download since the hands started, in the order they began."""

    def __init__(self, folder: Callable[[], Path | None]) -> None:
        self._folder = folder
        self.items: dict[str, Download] = {}
        self.order: list[str] = []

    def on_begin(self, p: JSON) -> None:
        guid = str(p.get("guid", ""))
        if not guid or guid in self.items:
            return
        self.items[guid] = Download(
            guid=guid, name=str(p.get("suggestedFilename") or "download"), url=str(p.get("url", ""))
        )
        self.order.append(guid)

    def on_progress(self, p: JSON) -> None:
        item = self.items.get(str(p.get("guid", "")))
        if item is None:
            return
        state = str(p.get("state", "inProgress"))
        if state == item.state:
            return
        item.state = state
        if state == "completed":
            item.path = self._place(item)

    def names_since(self, mark: int) -> list[str]:
        return [self.items[g].name for g in self.order[mark:]]

    async def wait_since(self, mark: int, limit: float) -> None:
        """A download an action started usually finishes at once: wait up to ``limit``
        seconds for those begun since ``mark`` to finish."""
        loop = asyncio.get_running_loop()
        end = loop.time() + limit
        while loop.time() < end:
            if all(self.items[g].state != "inProgress" for g in self.order[mark:]):
                return
            await asyncio.sleep(0.05)

    def _place(self, item: Download) -> str | None:
        """Chrome saves downloads under their GUID; give the file its own name back."""
        folder = self._folder()
        if folder is None:
            return None
        saved = folder / item.guid
        if not saved.exists():
            return str(folder / item.name) if (folder / item.name).exists() else None
        safe = Path(item.name).name or "download"
        target = folder / safe
        stem, suffix = target.stem, target.suffix
        n = 1
        while target.exists():
            target = folder / f"{stem} ({n}){suffix}"
            n += 1
        try:
            saved.rename(target)
        except OSError:
            return str(saved)
        return str(target)

    def finished_notices(self) -> list[str]:
        """Downloads that finished or were cancelled since last asked, worded once each."""
        notices: list[str] = []
        for guid in self.order:
            item = self.items[guid]
            if item.reported or item.state == "inProgress":
                continue
            item.reported = True
            if item.state == "completed":
                where = f" (saved as {item.path})" if item.path else ""
                notices.append(f"download finished: {item.name}{where}")
            else:
                notices.append(f"download canceled: {item.name}")
        return notices

"""Finding a digest element the way a model would, when it has no name to go by."""

from __future__ import annotations

from urllib.parse import urljoin

from core.eyes.snapshot import Snapshot


def index_where(snapshot: Snapshot, **attrs: str) -> int:
    """The index of the one element whose digest attributes include ``attrs`` (a control with
    no label, such as Datasette's filter selects, is told apart by its ``name``)."""

    def same(key: str, have: str | None, want: str) -> bool:
        if key == "href" and have is not None:
            # A link reads as short as it can against the page's address: compare where
            # the two go.
            return urljoin(snapshot.url, have) == urljoin(snapshot.url, want)
        return have == want

    found = [
        e.index
        for e in snapshot.elements.values()
        if all(same(key, e.attrs.get(key), value) for key, value in attrs.items())
    ]
    assert len(found) == 1, f"{attrs} found {len(found)} times in:\n{snapshot.text}"
    return found[0]

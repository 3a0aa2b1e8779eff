"""Finding a recorded step's target again in the live digest, by what it was.

Indexes are never compared: a digest index is the tab's own counter and means nothing in
another session. A candidate must have the recorded tag and role; it then scores points:

=====================================  =====================================================
accessible name, equal                 +50 (case and spacing ignored)
accessible name, similar (ratio r)     +30 x r when r >= 0.6 (difflib), else 0
``name=`` / ``href`` path, each        +20 equal, -20 differs or missing
``type`` / ``placeholder`` /           +8 equal, -8 differs or missing
``target`` / ``options``, each
same URL path as the recorded page     +15
the text line just before it           +20 when equal (what tells rows apart)
the frame it is in                     -30 when its frame header's name differs
=====================================  =====================================================

The step *fits* when the best candidate scores at least :data:`FIT` (60) and every other
candidate either scores below 60 or trails it by at least :data:`MARGIN` (15) points. So an
exact name on the recorded page fits (50 + 15), a renamed button does not (it goes to the
model or stops the rerun), and two equal "Delete" buttons fit only when the text before
one of them is the recorded one. State attributes (``value``, ``checked``, ``selected``,
``expanded``, ``disabled``, ``focused``...) are ignored: they are what a run changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from urllib.parse import urljoin, urlsplit

from core.model.scripted import ELEMENT_LINE, DigestElement, element_matches
from core.rerun.rebase import Rebase

FIT = 60.0
MARGIN = 15.0
NAME_EQUAL = 50.0
NAME_SIMILAR = 30.0
SIMILAR_AT = 0.6
STRONG_ATTR = 20.0
ATTR = 8.0
SAME_PATH = 15.0
SAME_NEIGHBOUR = 20.0
OTHER_FRAME = -30.0
STRONG_KEYS = ("name", "href")
IDENTITY_KEYS = ("type", "placeholder", "target", "options")

_ATTR = re.compile(r'([A-Za-z][\w-]*)(?:=("[^"]*"|\S+))?')
_FRAME = re.compile(r'^(?P<indent>\s*)frame "(?P<name>[^"]*)"')


TAG_ROLES = frozenset(
    {
        *("alert", "alertdialog", "application", "article", "banner", "button", "cell"),
        *("checkbox", "columnheader", "combobox", "complementary", "contentinfo", "definition"),
        *("dialog", "document", "feed", "figure", "form", "grid", "gridcell", "group"),
        *("heading", "img", "link", "list", "listbox", "listitem", "log", "main", "marquee"),
        *("math", "menu", "menubar", "menuitem", "menuitemcheckbox", "menuitemradio", "meter"),
        *("navigation", "note", "option", "progressbar", "radio", "radiogroup", "region", "row"),
        *("rowheader", "scrollbar", "search", "searchbox", "separator", "slider", "spinbutton"),
        *("status", "switch", "tab", "table", "tablist", "tabpanel", "term", "textbox", "timer"),
        *("toolbar", "tooltip", "tree", "treegrid", "treeitem"),
    }
)
"""Roles a digest line shows in place of the tag (core/eyes/describe.js ``TAG_ROLES``, the
same list): ``<gridcell>`` for ``<div role=gridcell>``; fields and links keep their tag."""
_FIELD_TAGS = frozenset({"input", "select", "textarea"})


def as_shown(element: DigestElement, attrs: dict[str, str]) -> DigestElement:
    """``element`` as today's digest shows it: an older line's ``<div role=gridcell>`` is
    ``<gridcell>`` (its role leaves ``attrs``), so a run recorded before compares."""
    role = attrs.get("role", "")
    if role not in TAG_ROLES or element.tag in _FIELD_TAGS or "href" in attrs:
        return element
    del attrs["role"]
    return replace(element, tag=role)


@dataclass(frozen=True, slots=True)
class Entry:
    """One interactive element of a digest, with what surrounds it."""

    element: DigestElement
    attrs: dict[str, str]
    neighbour: str
    """The nearest plain text line before it (in its frame), normalised; "" if none."""
    frame: str
    """The names of the frames it is nested in, outermost first (" > "); "" for the page."""


@dataclass(frozen=True, slots=True)
class Digest:
    url: str
    entries: tuple[Entry, ...]

    def by_index(self, index: int) -> Entry | None:
        for entry in self.entries:
            if entry.element.index == index:
                return entry
        return None


@dataclass(frozen=True, slots=True)
class Candidate:
    entry: Entry
    score: float

    def describe(self) -> str:
        return f"{self.entry.element.line.lstrip('*~ ')} (score {self.score:.0f})"


@dataclass(frozen=True, slots=True)
class Fit:
    """The answer for one step: ``found`` when exactly one element fits, else ``why``."""

    found: Entry | None
    why: str
    closest: tuple[Candidate, ...]


def read_digest(observation: str) -> Digest:
    """Parse an observation (``<browser_state>`` text) into its elements with context."""
    head, _sep, body = observation.partition("\n\n")
    url = ""
    for line in head.splitlines():
        if line.startswith("URL: "):
            url = line.removeprefix("URL: ").strip()
            break
    entries: list[Entry] = []
    frames: list[tuple[int, str]] = []
    last_text: dict[str, str] = {}
    for raw in body.splitlines():
        if not raw.strip() or raw.strip() == "</browser_state>":
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        while frames and indent <= frames[-1][0]:
            frames.pop()
        frame_key = " > ".join(name for _i, name in frames)
        header = _FRAME.match(raw)
        if header is not None:
            frames.append((indent, header["name"]))
            continue
        matches = element_matches(raw)
        if not matches:
            last_text[frame_key] = _norm(raw)
            continue
        for match in matches:
            element = DigestElement(
                index=int(match["index"]),
                tag=match["tag"],
                attrs=match["attrs"].strip(),
                name=match["name"].strip(),
                offscreen="~" in match["marks"],
                line=match.string.strip(),
            )
            attrs = _attrs(element.attrs)
            element = as_shown(element, attrs)
            if element.tag == "input":
                attrs.setdefault("type", "text")  # the digest leaves the default out
            if url and attrs.get("href"):
                # A link reads as short as it can against the page's address ("6/change/",
                # "?o=2"): whole again, so that links of two digests compare.
                attrs["href"] = urljoin(url, attrs["href"])
            entries.append(Entry(element, attrs, last_text.get(frame_key, ""), frame_key))
    return Digest(url, tuple(entries))


def recorded_entry(element_line: str, observation: str) -> Entry | None:
    """The recorded target with its context: found by its index in the recorded observation
    (where the model saw it), else read from the element line alone."""
    match = ELEMENT_LINE.match(element_line)
    if match is None:
        return None
    found = read_digest(observation).by_index(int(match["index"]))
    if found is not None:
        return found
    element = DigestElement(
        index=int(match["index"]),
        tag=match["tag"],
        attrs=match["attrs"].strip(),
        name=match["name"].strip(),
        line=element_line.strip(),
    )
    attrs = _attrs(element.attrs)
    return Entry(as_shown(element, attrs), attrs, "", "")


def find_target(recorded: Entry, recorded_url: str, live: Digest, rebase: Rebase) -> Fit:
    """Where ``recorded`` (seen on ``recorded_url``) is in ``live``, if exactly one element
    fits (see the module doc for the scores)."""
    same_path = page_path(rebase.url(recorded_url)) == page_path(live.url)
    scored = [
        Candidate(entry, _score(recorded, entry, same_path, rebase))
        for entry in live.entries
        if entry.element.tag == recorded.element.tag
        and entry.attrs.get("role") == recorded.attrs.get("role")
    ]
    scored.sort(key=lambda c: -c.score)
    closest = tuple(scored[:3]) or tuple(_any_closest(recorded, live))
    name = recorded.element.name
    if not scored or scored[0].score < FIT:
        what = f"no <{recorded.element.tag}> named {name!r}" if name else "no element like it"
        where = (
            ""
            if same_path
            else f" (the page is {page_path(live.url)}, not {page_path(recorded_url)})"
        )
        return Fit(None, f"{what} on this page{where}", closest)
    best = scored[0]
    rivals = [c for c in scored[1:] if c.score >= FIT and best.score - c.score < MARGIN]
    if rivals:
        return Fit(
            None,
            f"{1 + len(rivals)} elements fit equally well "
            f"({', '.join(c.entry.element.line for c in (best, *rivals[:2]))})",
            closest,
        )
    return Fit(best.entry, "", closest)


def _score(recorded: Entry, live: Entry, same_path: bool, rebase: Rebase) -> float:
    score = 0.0
    want, have = _norm(recorded.element.name), _norm(live.element.name)
    if want == have:
        score += NAME_EQUAL
    elif want and have:
        # The cheap upper bounds first: most names on a big page are nothing alike.
        matcher = SequenceMatcher(None, want, have)
        if matcher.real_quick_ratio() >= SIMILAR_AT and matcher.quick_ratio() >= SIMILAR_AT:
            ratio = matcher.ratio()
            if ratio >= SIMILAR_AT:
                score += NAME_SIMILAR * ratio
    for keys, weight in ((STRONG_KEYS, STRONG_ATTR), (IDENTITY_KEYS, ATTR)):
        for key in keys:
            if key not in recorded.attrs:
                continue
            old, new = recorded.attrs[key], live.attrs.get(key)
            if key == "type" and new is None:
                continue  # a button outside a form is printed without one (since issue 26)
            if key == "href":
                old = page_path(rebase.url(old)) if old else old
                new = page_path(new) if new else new
            score += weight if old == new else -weight
    if same_path:
        score += SAME_PATH
    if recorded.neighbour and recorded.neighbour == live.neighbour:
        score += SAME_NEIGHBOUR
    if recorded.frame != live.frame:
        score += OTHER_FRAME
    return score


def _any_closest(recorded: Entry, live: Digest) -> list[Candidate]:
    """For the message when nothing has the recorded tag: the nearest names of any tag."""
    want = _norm(recorded.element.name)
    ranked = sorted(
        live.entries,
        key=lambda e: -SequenceMatcher(None, want, _norm(e.element.name)).ratio(),
    )
    return [Candidate(e, 0.0) for e in ranked[:3]]


def _attrs(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for match in _ATTR.finditer(text):
        value = match[2] or ""
        out[match[1]] = value[1:-1] if value.startswith('"') else value
    return out


def page_path(url: str) -> str:
    """What "the same page" compares: the URL's path (``/`` when it has none)."""
    return urlsplit(url).path or "/"


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()

"""The eyes: one walk of the page in our isolated world, returned as an indexed digest.

API (for the hands, the agent loop and the policy detectors)::

    snap = await take_snapshot(tab)                 # Snapshot; options: SnapshotOptions(...)
    snap.text                                        # the digest lines (what the model reads)
    snap.header(tab_lines)                           # URL / title / tabs / scroll lines
    snap.elements[12]                                # ElementInfo for the line "[12]<...>"
    snap.signals                                     # PageSignals: password/otp/card/captcha
    snap.hidden_instruction_fragments                # for the person, never for the model
    reading = await probe(tab)                       # Probe: cheap before/after comparison
    escape_page_text(s)                              # escape any other page string (dialogs)
    await follow_frames(browser)                     # read out-of-process frames too

Digest lines (docs/architecture.md, "What the model sees each round")::

    [12]<button type=submit>Book now</button>
    *[13]<input type=text name=from placeholder="From" value="Par">From</input>
    ~[40]<a href=/help>Help</a>
    Plain visible text, one block per line, in reading order

- ``[N]`` is stable for as long as the element stays in the document (the index comes from
  the element's identity, not its position); a new document continues the tab's counter, so
  an old index fails (:class:`core.world.errors.StaleElement`) instead of naming a new element.
- ``*`` marks an element first seen since the previous digest of the same document. The first
  digest of a document marks nothing (everything is new, and the URL says so).
- ``~`` marks an element outside the viewport. Elements and text farther than
  ``offscreen_margin`` viewports are not listed but counted in a note
  (``[… 230 more interactive elements … below the viewport: scroll down to see them]``).
- An element line with an empty name has no closing tag (``[7]<input type=text name=q>``).
- Lines that start with ``[`` are always handrail's (elements and notes): page text that
  would start with ``[`` is escaped, and so is what could open a tag or an index reference
  (``<`` before a letter, ``/``, ``!`` or ``?`` reads ``&lt;``; ``[12]`` reads ``&#91;12]``;
  ``&`` before those reads ``&amp;``): page text is otherwise as the page has it, ``>`` and
  ``a < b`` included. Role markers like ``Human:`` get a lookalike colon.
- The size cap drops what is farthest from the viewport first (then text, then elements) and
  the cut is always announced in the last line and in :attr:`Snapshot.truncated`, naming
  the frames it cut from.
- Shadow roots, open or closed, are read like the rest. A cross-origin frame's contents
  follow a header line, indented two spaces per level::

      frame "Secure card payment" (pay.example):
        [31]<input type=text name=cardnumber>Card number</input>

  or one line saying it could not be read (``blocked, not loaded (...)``, ``did not load``,
  ``contents not readable``). See docs/architecture.md, "The eyes".
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast, get_args

import structlog

from core.browser.browser import Browser, Tab
from core.browser.child_targets import ChildTargets
from core.cdp import CDPError, CDPSession, SessionClosed
from core.eyes.listeners import answer_walk, ask_mode, list_every_listener, tab_handles
from core.eyes.script import install_at_document_start
from core.world.calls import element_object_id, frame_eval, world_eval
from core.world.closed_roots import Audits
from core.world.contexts import (
    FrameRoute,
    FrameWorld,
    frame_context,
    frame_world,
    is_lost_context,
    known_frame_id,
    note_index_high_water,
    remember_frame_id,
    set_frame_routes,
    world_generation,
)
from core.world.errors import WorldError
from core.world.geometry import Affine, hops_map

Sensitive = Literal["password", "otp", "payment"]
SENSITIVE_KINDS: frozenset[str] = frozenset(get_args(Sensitive))

log = structlog.get_logger("handrail.eyes")


@dataclass(frozen=True)
class SnapshotOptions:
    max_chars: int = 40_000
    """Size cap of the digest text (the cut is announced inside the cap)."""
    offscreen_margin: float = 1.5
    """How far outside the viewport elements and text are still listed, in viewports."""
    max_text_line: int = 300
    """Longer text blocks are wrapped onto several lines of at most this many characters."""
    include_text: bool = True
    """False lists interactive elements only."""
    timeout: float = 20.0
    """Seconds the page may take to answer."""
    url_allowed: Callable[[str], bool] | None = field(default=None, compare=False)
    """Whether this run may load a URL (the allowlist): a frame that did not load and whose
    URL it refuses is listed as blocked. None: every frame that did not load is "did not
    load"."""
    max_frame_depth: int = 4
    """Cross-origin frames nested deeper than this are listed by their header only."""
    listeners: bool = True
    """Find click targets by their listeners (core/eyes/listeners.py) in the top document."""


@dataclass(frozen=True)
class ElementInfo:
    index: int
    tag: str
    role: str | None
    name: str
    """Accessible name (not escaped; the escaped form is inside ``line``)."""
    attrs: Mapping[str, str]
    line: str
    """The digest line, with its ``*``/``~`` marks."""
    rect: tuple[float, float, float, float]
    """x, y, width, height in top-level viewport CSS pixels (frames' offsets included)."""
    in_viewport: bool
    is_new: bool
    frame: str | None
    """URL of the frame holding the element; None in the top document."""
    shadow: bool
    editable: bool
    disabled: bool
    input_type: str | None
    autocomplete: str | None
    form_action: str | None
    """Absolute URL the element's form submits to (a submit button's formaction wins)."""
    form_method: str | None
    submits_form: bool
    """A submit button (or image input) inside a form."""
    focused: bool
    sensitive: Sensitive | None
    frame_label: str | None = None
    """``frame "Secure card payment" (pay.example)`` for an element of a cross-origin frame
    (the digest's header line for that frame); None elsewhere."""
    frame_key: str | None = None
    """Which document of which cross-origin frame holds it (``frame id:world generation``);
    the hands use it with :attr:`local_index` to reach the element through that frame."""
    local_index: int | None = None
    """The element's index in our world inside that frame."""
    link: str | None = None
    """A link's whole http(s) address (the line's ``href`` is short and cut), for the gate."""


@dataclass(frozen=True)
class FrameInfo:
    url: str
    cross_origin: bool
    index: int | None
    """Always None: a frame's contents are listed, not the frame element."""
    rect: tuple[float, float, float, float]
    name: str = ""
    """The frame's accessible name (aria-labelledby, aria-label or title)."""
    label: str = ""
    """The header line naming a cross-origin frame: ``frame "Name" (host)``."""
    blocked: bool = False
    """It did not load, and the allowlist refuses its host."""
    readable: bool = True
    """False when its contents could not be read (blocked, failed, or unreachable)."""
    depth: int = 0
    """1 for a cross-origin frame of the page, 2 for one inside it..."""


@dataclass(frozen=True)
class SensitiveField:
    kind: Sensitive
    index: int
    name: str
    where: str
    """"page", "shadow root" or "frame URL"."""


@dataclass(frozen=True)
class Captcha:
    kind: str
    """"recaptcha", "hcaptcha", "turnstile" or "generic" (an "I'm not a robot" text)."""
    where: str


@dataclass(frozen=True)
class BlockedFrame:
    """A frame the allowlist kept from loading, and what it seems to be for."""

    label: str
    host: str
    url: str
    kinds: tuple[str, ...]
    """"payment", "signin", "captcha": judged from its name, URL and the text before it."""


@dataclass(frozen=True)
class PageSignals:
    """Facts for the hand-over detectors (visible things only, including shadow roots,
    same-origin frames and fields below the listing margin)."""

    password_fields: tuple[SensitiveField, ...] = ()
    otp_fields: tuple[SensitiveField, ...] = ()
    card_fields: tuple[SensitiveField, ...] = ()
    captchas: tuple[Captcha, ...] = ()
    payment_frames: tuple[str, ...] = ()
    """Payment frames: by their URL (Stripe, Adyen, Braintree, PayPal...), and cross-origin
    frames whose name, URL or title speaks of payment or that hold card fields (given as
    their header label and URL)."""
    blocked_frames: tuple[BlockedFrame, ...] = ()

    @property
    def any(self) -> bool:
        return bool(
            self.password_fields
            or self.otp_fields
            or self.card_fields
            or self.captchas
            or self.payment_frames
            or any(b.kinds for b in self.blocked_frames)
        )


@dataclass(frozen=True)
class Snapshot:
    url: str
    title: str
    text: str
    """The digest: exactly what goes to the model after the header."""
    elements: Mapping[int, ElementInfo]
    """The elements that have a line in ``text``, by index."""
    scroll: tuple[float, float, float, float, float, float]
    """scroll x, scroll y, page width, page height, viewport width, viewport height."""
    truncated: str | None
    """The size-cap announcement when the cap cut anything (it is also the last line)."""
    hidden_instruction_fragments: int
    """Hidden text/comments reading like instructions; for the person, never the model."""
    frames: tuple[FrameInfo, ...]
    signals: PageSignals
    focused_index: int | None
    stats: dict[str, Any] = field(default_factory=dict)

    def header(self, tabs: Sequence[str] = ()) -> str:
        """URL, title, tabs and scroll position, escaped like the digest and each cut to its
        share of :data:`HEADER_CHARS` (a page sets its title and URL: a 2 MB title must not
        ride along in every request). ``tabs`` are ready-made descriptions of the open tabs
        (page strings inside them are escaped here); open dialogs and notices are added by the
        caller, through :func:`header_field`."""
        lines = [
            f"URL: {header_field(self.url, URL_CHARS)}",
            f"Title: {header_field(self.title)}",
        ]
        if tabs:
            lines.append("Tabs:")
            lines.extend(f"  {_tab_line(t)}" for t in tabs[:MAX_TABS_SHOWN])
            if len(tabs) > MAX_TABS_SHOWN:
                lines.append(f"  … and {len(tabs) - MAX_TABS_SHOWN} more tabs")
        areas = sum(1 for e in self.elements.values() if "scrollable" in e.attrs)
        lines.append(f"Scroll: {describe_scroll(self.scroll, areas)}")
        return "\n".join(lines)


@dataclass(frozen=True)
class Probe:
    """A cheap reading of the page for before/after comparisons."""

    url: str
    title: str
    mutations: int
    """DOM mutation records seen in this document so far (a counter: compare two readings)."""
    new_interactive: int
    """Visible interactive elements that no digest has indexed yet."""
    world: int
    """Changes when our world was recreated (a new document): counters are then not
    comparable."""


# -- the header's budget -----------------------------------------------------------------------

HEADER_CHARS = 4_000
"""What the observation's header (URL, title, tabs, dialog, notices) may take. The digest is
cut to ``max_chars`` less this, so the whole observation stays within ``max_chars``."""
FIELD_CHARS = 300
"""A title, a tab, a dialog's text or a notice, at most."""
URL_CHARS = 1_000
MAX_TABS_SHOWN = 8


def cut_field(text: str, limit: int = FIELD_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how many were left out (a page-set
    string for the header, or for an event that carries one)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters]"


def header_field(text: str, limit: int = FIELD_CHARS) -> str:
    """A page-controlled header field, escaped (:func:`escape_page_text`) and cut to
    ``limit`` characters (:func:`cut_field`)."""
    return cut_field(escape_page_text(text), limit)


def fit_header(lines: Sequence[str], limit: int = HEADER_CHARS) -> list[str]:
    """``lines`` as far as they fit in ``limit`` characters (the URL and title first, as the
    caller orders them), then one line saying how many were left out."""
    kept: list[str] = []
    used = 0
    for k, line in enumerate(lines):
        if used + len(line) + 1 > limit:
            kept.append(f"[… {len(lines) - k} more header lines left out to fit]")
            break
        kept.append(line)
        used += len(line) + 1
    return kept


# -- escaping (the Python twin of esc() in core/eyes/text.js) ---------------------------------

_INVISIBLE = re.compile(
    "[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u2069\ufeff]"
)
_ROLE_MARK = re.compile(r"\b(human|assistant|system|user|developer)(\s*):", re.IGNORECASE)
_INDEX_REF = re.compile(r"\[(?=\s*\d+\s*\])")
_TAG_OPEN = re.compile(r"<(?=[A-Za-z/!?])")
_ESCAPED_AMP = re.compile(r"&(?=lt;|amp;|#91;)")
_UNESCAPE = re.compile(r"&(lt|amp|#91);")
_UNESCAPED = {"lt": "<", "amp": "&", "#91": "["}


def escape_page_text(text: str) -> str:
    """Make a page-controlled string safe to place in the observation: one line, nothing
    that opens a tag (``<`` before a letter, ``/``, ``!`` or ``?`` reads ``&lt;``), no
    ``[N]`` index references (``&#91;N]``), no role markers, no invisible or bidi-control
    characters, and never starting with ``[``. Everything else is the page's text as it is
    ("price > 40", "a < b"); :func:`unescape_page_text` undoes the escapes exactly (the
    same rule as ``esc`` in core/eyes/text.js)."""
    s = _INVISIBLE.sub("", text)
    s = " ".join(s.split())
    s = _ESCAPED_AMP.sub("&amp;", s)
    s = _TAG_OPEN.sub("&lt;", s)
    s = _INDEX_REF.sub("&#91;", s)
    s = _ROLE_MARK.sub(r"\1\2꞉", s)
    if re.match(r"^[\s*~]*\[", s):
        s = s.replace("[", "&#91;", 1)
    return s


def unescape_page_text(text: str) -> str:
    """The page's text from the digest's form of it: ``&lt;``, ``&#91;`` and ``&amp;``
    undone (role markers and left-out invisible characters stay as the digest has them)."""
    return _UNESCAPE.sub(lambda m: _UNESCAPED[m.group(1)], text)


def _tab_line(description: str) -> str:
    """A tab description ``[N] * rest`` as ``tab N (current): rest``. The number is ours
    (switch_tab takes it) and is kept out of brackets, which mean element indexes only;
    the rest is page text and is escaped."""
    match = _TAB_NUMBER.match(description)
    if match is None:
        return header_field(description)
    number, current, rest = match.groups()
    return f"tab {number}{' (current)' if current else ''}: {header_field(rest)}"


_TAB_NUMBER = re.compile(r"^\[(\d+)\]\s*(\*\s*)?(.*)$", re.DOTALL)


def describe_scroll(scroll: Sequence[float], areas: int = 0) -> str:
    """E.g. "at the top of 3.2 pages", "scrolled 40% of 3.2 pages", "the whole page fits in
    the viewport". ``areas``: listed scroll containers (each holds content beyond its
    scrollport), so the line never says everything is visible when an inner area clips."""
    _x, y, _w, height, _vw, vh = scroll
    inner = (
        f"{areas} scrollable area{'s' if areas > 1 else ''} in it hold{'' if areas > 1 else 's'}"
        " more (see the lines marked scrollable)"
    )
    if vh <= 0 or height <= vh + 1:
        if areas:
            return f"the page itself fits in the viewport, but {inner}"
        return "the whole page fits in the viewport"
    pages = height / vh
    fraction = y / max(height - vh, 1)
    if fraction <= 0.005:
        where = f"at the top of {pages:.1f} pages"
    elif fraction >= 0.995:
        where = f"at the bottom of {pages:.1f} pages"
    else:
        where = f"scrolled {round(fraction * 100)}% of {pages:.1f} pages"
    return f"{where}; {inner}" if areas else where


# -- taking a snapshot --------------------------------------------------------------------


def _rect(value: Any) -> tuple[float, float, float, float]:
    x, y, w, h = (float(v) for v in value)
    return (round(x, 1), round(y, 1), round(w, 1), round(h, 1))


def _text(raw: Mapping[str, Any], key: str) -> str | None:
    """``raw[key]`` when it is text, else None: the page script's answer is checked at the
    border (a form control named "action" once made a form's action an element)."""
    value = raw.get(key)
    if value is None or isinstance(value, str):
        return value
    log.warning("snapshot.bad_field", field=key, type=type(value).__name__)
    return None


def _number(raw: Mapping[str, Any], key: str) -> int | None:
    value = raw.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _element(raw: Mapping[str, Any]) -> ElementInfo:
    sensitive = raw.get("sensitive")
    return ElementInfo(
        index=int(raw["index"]),
        tag=str(raw["tag"]),
        role=_text(raw, "role"),
        name=str(raw.get("name") or ""),
        attrs={str(k): str(v) for k, v in (raw.get("attrs") or {}).items()},
        line=str(raw["line"]),
        rect=_rect(raw["rect"]),
        in_viewport=bool(raw["inView"]),
        is_new=bool(raw["isNew"]),
        frame=_text(raw, "frame"),
        shadow=bool(raw.get("shadow")),
        editable=bool(raw.get("editable")),
        disabled=bool(raw.get("disabled")),
        input_type=_text(raw, "inputType"),
        autocomplete=_text(raw, "autocomplete"),
        form_action=_text(raw, "formAction"),
        form_method=_text(raw, "formMethod"),
        submits_form=bool(raw.get("submits")),
        focused=bool(raw.get("focused")),
        sensitive=cast("Sensitive", sensitive) if sensitive in SENSITIVE_KINDS else None,
        frame_label=_text(raw, "frameLabel"),
        frame_key=_text(raw, "frameKey"),
        local_index=_number(raw, "localIndex"),
        link=_text(raw, "link"),
    )


def _fields(kind: Sensitive, raw: Sequence[Mapping[str, Any]]) -> tuple[SensitiveField, ...]:
    return tuple(
        SensitiveField(kind=kind, index=int(f["index"]), name=str(f["name"]), where=str(f["where"]))
        for f in raw
    )


def _signals(raw: Mapping[str, Any]) -> PageSignals:
    seen: set[tuple[str, str]] = set()
    captchas: list[Captcha] = []
    for c in raw.get("captcha", []):
        key = (str(c["kind"]), str(c["where"]))
        if key not in seen:
            seen.add(key)
            captchas.append(Captcha(kind=key[0], where=key[1]))
    return PageSignals(
        password_fields=_fields("password", raw.get("password", [])),
        otp_fields=_fields("otp", raw.get("otp", [])),
        card_fields=_fields("payment", raw.get("payment", [])),
        captchas=tuple(captchas),
        payment_frames=tuple(dict.fromkeys(str(u) for u in raw.get("paymentFrames", []))),
        blocked_frames=tuple(
            BlockedFrame(
                label=str(b["label"]),
                host=str(b["host"]),
                url=str(b["url"]),
                kinds=tuple(str(k) for k in b.get("kinds", [])),
            )
            for b in raw.get("blockedFrames", [])
        ),
    )


_Refs = dict[str, tuple[FrameWorld, FrameWorld | None, int]]
"""Frame document key -> (its world, the world holding its iframe element, the iframe's
index there)."""


async def _read_slots(
    tab: Tab,
    slots: Sequence[Mapping[str, Any]],
    parent: FrameWorld | None,
    opts: SnapshotOptions,
    js_opts: dict[str, Any],
    depth: int,
    refs: _Refs,
    audits: Audits,
) -> dict[str, Any]:
    """Each slot's frame read through CDP, by slot number (the frames' processes work in
    parallel)."""
    read = await asyncio.gather(
        *(_read_frame(tab, slot, parent, opts, js_opts, depth, refs, audits) for slot in slots)
    )
    return {str(slot["slot"]): got for slot, got in zip(slots, read, strict=True)}


async def _read_frame(
    tab: Tab,
    slot: Mapping[str, Any],
    parent: FrameWorld | None,
    opts: SnapshotOptions,
    js_opts: dict[str, Any],
    depth: int,
    refs: _Refs,
    audits: Audits,
) -> dict[str, Any]:
    """One cross-origin frame: our world in it, the same walk with top-level geometry, and
    the frames inside it. Never raises for the frame's sake: a frame that cannot be read is
    reported as such (``unreadable``, ``failed`` or ``blocked``)."""
    src = str(slot.get("src") or "")
    session = parent.session if parent is not None else tab.session
    iframe = int(slot["index"])
    holder = parent.key if parent is not None else "main"
    frame_id = known_frame_id(tab, holder, iframe)
    if frame_id is None:
        try:
            frame_id = await _frame_id_of(tab, parent, iframe, opts.timeout)
        except (WorldError, CDPError):
            return {"unreadable": True, "url": src}
        if frame_id is not None:
            remember_frame_id(tab, holder, iframe, frame_id)
    if frame_id is None or depth > opts.max_frame_depth:
        return {"unreadable": True, "url": src}
    frame_opts = {
        **js_opts,
        "frame": {
            "ox": slot["ox"],
            "oy": slot["oy"],
            "clip": slot["clip"],
            "vw": slot["vw"],
            "vh": slot["vh"],
            "dist": slot["dist"],
            "above": slot["above"],
        },
    }
    if slot.get("transformed"):
        # Scaled, rotated...: the frame's points reach the top through its quads, the way the
        # hands will map them (so the approved box and the dispatched one agree).
        try:
            m = await _frame_affine(tab, parent, iframe, refs, opts.timeout)
        except (WorldError, CDPError):
            return {"unreadable": True, "url": src}
        frame_opts["frame"] |= {"m": [m.a, m.b, m.c, m.d, m.e, m.f], "ox": m.c, "oy": m.f}
    raw: Any = None
    for attempt in (0, 1):
        # Looked up each time: a frame that moved to another process has a new session.
        owner = _child_session(tab, frame_id) or session
        world = frame_world(tab, owner, frame_id)
        if world.context_id is None or not world.load_checked:
            # A document we have not read yet: did it load at all?
            failed = await _not_loaded(owner, frame_id, opts)
            if failed is not None:
                return failed
        try:
            await frame_context(world, timeout=opts.timeout)
            world.load_checked = True
            await audits.run(owner)
            raw = await frame_eval(
                world,
                f"globalThis.__handrail.frameWalk({json.dumps(frame_opts)})",
                timeout=opts.timeout,
                retry=False,
            )
            break
        except (WorldError, CDPError) as exc:
            if attempt == 0 and (is_lost_context(exc) or isinstance(exc, SessionClosed)):
                world.context_id = None  # the frame has a new document: check it again
                continue
            return {"unreadable": True, "url": src}
    if not isinstance(raw, dict):
        return {"unreadable": True, "url": src}
    raw["key"] = world.key
    refs[world.key] = (world, parent, int(slot["index"]))
    if raw.get("slots"):
        for child in raw["slots"]:
            child["transformed"] = bool(child.get("transformed") or slot.get("transformed"))
        raw["children"] = await _read_slots(
            tab, raw["slots"], world, opts, js_opts, depth + 1, refs, audits
        )
    return raw


def _hops(
    parent: FrameWorld | None, iframe: int, refs: _Refs
) -> list[tuple[FrameWorld | None, int]]:
    """The iframe elements holding a frame, from its own up to the top."""
    hops: list[tuple[FrameWorld | None, int]] = [(parent, iframe)]
    key = parent.key if parent is not None else None
    while key is not None and key in refs and len(hops) < 16:
        _, holder, index = refs[key]
        hops.append((holder, index))
        key = holder.key if holder is not None else None
    return hops


async def _frame_affine(
    tab: Tab, parent: FrameWorld | None, iframe: int, refs: _Refs, timeout: float
) -> Affine:
    mapping = await hops_map(tab, _hops(parent, iframe, refs), iframe, timeout=timeout)
    whole = Affine()
    for step in mapping.steps:
        whole = whole.then(step)
    return whole


def _routes(elements: Mapping[int, ElementInfo], refs: _Refs) -> dict[int, FrameRoute]:
    """How the hands reach each element of a cross-origin frame."""
    routes: dict[int, FrameRoute] = {}
    for element in elements.values():
        if element.frame_key is None or element.local_index is None:
            continue
        if element.frame_key not in refs:
            continue
        world, holder, iframe = refs[element.frame_key]
        routes[element.index] = FrameRoute(
            world=world,
            key=element.frame_key,
            local=element.local_index,
            hops=tuple(_hops(holder, iframe, refs)),
        )
    return routes


async def _not_loaded(
    owner: CDPSession, frame_id: str, opts: SnapshotOptions
) -> dict[str, Any] | None:
    """``blocked`` / ``failed`` when the frame shows an error page instead of its URL."""
    try:
        tree = await owner.send("Page.getFrameTree", timeout=opts.timeout)
    except CDPError:
        return None
    frame = _find_frame(tree["frameTree"], frame_id)
    if frame is None or not frame.get("unreachableUrl"):
        return None
    url = str(frame["unreachableUrl"])
    refused = opts.url_allowed is not None and not opts.url_allowed(url)
    return {"blocked": True, "url": url} if refused else {"failed": True, "url": url}


async def _frame_id_of(
    tab: Tab, parent: FrameWorld | None, index: int, timeout: float
) -> str | None:
    """The id of the frame an iframe element (by its index in its own world) shows."""
    if parent is None:
        object_id = await element_object_id(tab, index, timeout=timeout)
        session = tab.session
    else:
        remote = await frame_eval(
            parent, f"globalThis.__handrail.element({index})", timeout=timeout, by_value=False
        )
        object_id = str(remote.get("objectId") or "")
        session = parent.session
    node = await session.send("DOM.describeNode", {"objectId": object_id}, timeout=timeout)
    frame_id = node.get("node", {}).get("frameId")
    return str(frame_id) if frame_id else None


def _find_frame(tree: Mapping[str, Any], frame_id: str) -> Mapping[str, Any] | None:
    frame = tree.get("frame", {})
    if frame.get("id") == frame_id:
        return cast("Mapping[str, Any]", frame)
    for child in tree.get("childFrames", []) or []:
        found = _find_frame(child, frame_id)
        if found is not None:
            return found
    return None


def _child_session(tab: Tab, frame_id: str) -> CDPSession | None:
    """The session of the out-of-process frame ``frame_id`` (core.browser.child_targets attached it), or
    None when the frame lives in its parent's process."""
    children = tab.state.get(_CHILDREN_KEY)
    if not isinstance(children, ChildTargets):
        return None
    for child in children.children(tab):
        if child.kind == "iframe" and child.target_id == frame_id:
            return child.session
    return None


_CHILDREN_KEY = "eyes.children"


async def follow_frames(browser: Browser) -> None:
    """Let the eyes read the out-of-process frames of every tab of ours, now and later
    (idempotent), and have each new document of those tabs start with our world and script
    ready (:func:`core.eyes.script.install_at_document_start`).

    core.browser.child_targets attaches to each such frame (paused until its hooks ran); the eyes need no
    hook of their own there: they create their world in a frame when a digest first meets
    it, and nothing a frame's scripts do before that hides anything from CDP.
    """
    children = ChildTargets.of(browser)

    async def follow(tab: Tab) -> None:
        tab.state[_CHILDREN_KEY] = children
        await asyncio.gather(children.install(tab), install_at_document_start(tab.session))

    if not any(getattr(hook, _FOLLOWS, False) for hook in browser.attach_hooks):
        setattr(follow, _FOLLOWS, True)
        browser.attach_hooks.append(follow)
    for tab in list(browser.tabs.values()):
        if not tab.closed:
            await follow(tab)


_FOLLOWS = "_handrail_eyes_follow_frames"


async def _after_questions(walk: Awaitable[Any]) -> Any:
    """``walk``, a few turns of the event loop late: the questions asked beside it (tasks of
    their own, a round trip or two deep) write their first commands before it, and the
    renderer, which answers in the order it is asked, answers those before it walks rather
    than after. (Only an order of work: it holds whichever goes first.)"""
    for _ in range(6):
        await asyncio.sleep(0)
    return await walk


async def take_snapshot(tab: Tab, *, options: SnapshotOptions | None = None) -> Snapshot:
    """Walk the tab's page once (in our isolated world) and return the digest.

    Closed shadow roots are read like open ones, and cross-origin frames (in the tab's
    process, or out of process once :func:`follow_frames` runs for the browser) through our
    world inside each of them, merged in reading order under a header line per frame.

    Raises :class:`core.world.errors.WorldError` when the page's walk fails and ``core.cdp``
    errors when the tab does not answer within ``options.timeout`` seconds (a frame that
    cannot be read is listed as such, never raised).
    """
    opts = options or SnapshotOptions()
    started = time.perf_counter()
    js_opts: dict[str, Any] = {
        "maxChars": opts.max_chars,
        "margin": opts.offscreen_margin,
        "maxLine": opts.max_text_line,
        "includeText": opts.include_text,
    }
    refs: _Refs = {}
    audits = Audits(tab, opts.timeout)
    handlers: list[Any] = []
    handles = await tab_handles(tab, opts.timeout, handlers) if opts.listeners else None
    asking = handles is not None and ask_mode(handles)
    js_opts["ask"] = asking
    js_opts["askAllRoots"] = asking and handles is not None and handles.jquery
    walk = f"globalThis.__handrail.snapshot({json.dumps(js_opts)})"
    ahead = handles.last_asks if asking and handles is not None else None
    early: list[Any] = []  # the figures of asking ``ahead`` again
    if handles is not None and not asking and handles.handed is None:
        # The document's first listing: every listener listed first, the walk uses them.
        await asyncio.gather(
            audits.run(tab.session), list_every_listener(tab, handles, opts.timeout, handlers)
        )
        if ask_mode(handles):
            # The next digest asks (listing costs more than asking: Jupyter): this walk
            # records what it would ask, so that the next asks it beside its own walk.
            ahead_opts = {**js_opts, "ask": True, "askAllRoots": handles.jquery}
            walk = f"globalThis.__handrail.snapshot({json.dumps(ahead_opts)})"
        raw = await world_eval(tab, walk, timeout=opts.timeout)
        retake = False
    elif handles is not None and not asking:
        # Later listings: the walk goes out at once with the listing handed last time, beside
        # the new listing and the audit, and is taken again only when the listing differs
        # (listeners come and go without a DOM change: each digest still lists them).
        reuse = f"globalThis.__handrail.snapshot({json.dumps({**js_opts, 'reuse': True})})"
        _, _, raw = await asyncio.gather(
            audits.run(tab.session),
            list_every_listener(tab, handles, opts.timeout, handlers, reused=True),
            world_eval(tab, reuse, timeout=opts.timeout),
        )
        scan = handlers[-1] if handlers else None
        retake = audits.adopted(tab.session) or (
            not isinstance(scan, dict) or bool(scan.get("retake"))
        )
    else:
        # The walk goes out with the closed-root audit (their round trips overlap), and is
        # taken again in the rare digest where the audit hands our world a new closed root.
        # Asking, the latest walk's questions are asked again beside them: a page that has
        # not changed asks the same, and then its answers are in when the walk is (asking
        # after the walk was a third of a digest on Jupyter). An answer that changes a
        # verdict takes the walk again, whether it reached our world before the walk or
        # after it.
        walking = world_eval(tab, walk, timeout=opts.timeout)
        if handles is not None and ahead is not None:
            jobs: list[Awaitable[Any]] = [
                answer_walk(tab, handles, ahead, opts.timeout, early),
                _after_questions(walking),
                audits.run(tab.session),
            ]
        else:
            jobs = [walking, audits.run(tab.session)]
        done = await asyncio.gather(*jobs)
        raw = done[-2]
        retake = audits.adopted(tab.session) or (len(done) > 2 and bool(done[0]))
    asks = raw.pop("asks", None) if isinstance(raw, dict) else None
    if asking and handles is not None and isinstance(asks, dict):
        if asks == ahead:
            handlers.extend(early)
        else:
            retake = await answer_walk(tab, handles, asks, opts.timeout, handlers) or retake
        handles.last_asks = asks
    elif handles is not None and isinstance(asks, dict):
        handles.last_asks = asks  # a listing's walk recorded them (see above)
    if retake:
        # An answer or the audit changes what the walk read (a new element with a handler,
        # a closed root): once more (the same walk again: what is new is judged as the first
        # time).
        raw = await world_eval(
            tab,
            f"globalThis.__handrail.snapshot({json.dumps({**js_opts, 'retake': True})})",
            timeout=opts.timeout,
        )
        asks = raw.pop("asks", None) if isinstance(raw, dict) else None
        if asking and handles is not None and isinstance(asks, dict):
            handles.last_asks = asks  # what the next walk asks, on a page that stays

    if isinstance(raw, dict) and "slots" in raw:
        # Cross-origin frames: read each through CDP, then let the top world merge them.
        # Their links read against the top page's address, as the guard resolves them.
        js_opts["topUrl"] = str(raw.get("url") or "")
        tree = await _read_slots(tab, raw["slots"], None, opts, js_opts, 1, refs, audits)
        raw = await world_eval(
            tab,
            f"globalThis.__handrail.finish({json.dumps(tree)}, {json.dumps(js_opts)})",
            timeout=opts.timeout,
        )
    if not isinstance(raw, dict):
        raise TypeError(f"the page walk returned {type(raw).__name__}, not an object")
    note_index_high_water(tab, int(raw["next"]))
    elements = {e.index: e for e in (_element(r) for r in raw["elements"])}
    set_frame_routes(tab, _routes(elements, refs))
    stats = dict(raw.get("stats") or {})
    stats["roundtrip_ms"] = round((time.perf_counter() - started) * 1000, 1)
    stats["roots"] = audits.stats()
    stats["listeners"] = handlers[0] if handlers else None
    scroll = tuple(float(v) for v in raw["scroll"])
    return Snapshot(
        url=str(raw["url"]),
        title=str(raw["title"]),
        text=str(raw["text"]),
        elements=elements,
        scroll=cast("tuple[float, float, float, float, float, float]", scroll),
        truncated=raw.get("truncated"),
        hidden_instruction_fragments=int(raw.get("hidden") or 0),
        frames=tuple(
            FrameInfo(
                url=str(f["url"]),
                cross_origin=bool(f["crossOrigin"]),
                index=f.get("index"),
                rect=_rect(f["rect"]),
                name=str(f.get("name") or ""),
                label=str(f.get("label") or ""),
                blocked=bool(f.get("blocked")),
                readable=not (f.get("blocked") or f.get("unreadable")),
                depth=int(f.get("depth") or 0),
            )
            for f in raw.get("frames", [])
        ),
        signals=_signals(raw.get("signals") or {}),
        focused_index=raw.get("focused"),
        stats=stats,
    )


async def probe(tab: Tab, *, timeout: float = 5.0) -> Probe:
    """URL, title, DOM mutation count and unindexed visible interactive elements."""
    raw = await world_eval(tab, "globalThis.__handrail.probe()", timeout=timeout)
    return probe_of(tab, raw)


def probe_of(tab: Tab, raw: dict[str, Any]) -> Probe:
    """The :class:`Probe` of ``raw``, an answer of our world's ``probe()`` in ``tab``."""
    return Probe(
        url=str(raw["url"]),
        title=str(raw["title"]),
        mutations=int(raw["mutations"]),
        new_interactive=int(raw["new_interactive"]),
        world=world_generation(tab),
    )

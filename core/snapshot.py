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

Digest lines (docs/architecture.md, "What the model sees each round")::

    [12]<button type=submit>Book now</button>
    *[13]<input type=text name=from placeholder="From" value="Par">From</input>
    ~[40]<a href=/help>Help</a>
    Plain visible text, one block per line, in reading order

- ``[N]`` is stable for as long as the element stays in the document (the index comes from
  the element's identity, not its position); a new document continues the tab's counter, so
  an old index fails (:class:`core.world.StaleElement`) instead of naming a new element.
- ``*`` marks an element first seen since the previous digest of the same document. The first
  digest of a document marks nothing (everything is new, and the URL says so).
- ``~`` marks an element outside the viewport. Elements and text farther than
  ``offscreen_margin`` viewports are not listed but counted in a note
  (``[… 230 more interactive elements … below the viewport: scroll down to see them]``).
- An element line with an empty name has no closing tag (``[7]<input type=text name=q>``).
- Lines that start with ``[`` are always handrail's (elements and notes): page text that
  would start with ``[`` is escaped, ``<``/``>`` in page strings become ``‹``/``›``, ``[12]``
  becomes ``［12］``, and role markers like ``Human:`` get a lookalike colon.
- The size cap drops what is farthest from the viewport first (then text, then elements) and
  the cut is always announced in the last line and in :attr:`Snapshot.truncated`.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from core.browser import Tab
from core.world import (
    adopt_closed_roots,
    main_context,
    note_index_high_water,
    world_eval,
    world_generation,
)

Sensitive = Literal["password", "otp", "payment"]


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
    """URL of the (same-origin) frame holding the element; None in the top document."""
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


@dataclass(frozen=True)
class FrameInfo:
    url: str
    cross_origin: bool
    index: int | None
    """The iframe's own index (cross-origin frames are listed as one element)."""
    rect: tuple[float, float, float, float]


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
class PageSignals:
    """Facts for the hand-over detectors (visible things only, including shadow roots,
    same-origin frames and fields below the listing margin)."""

    password_fields: tuple[SensitiveField, ...] = ()
    otp_fields: tuple[SensitiveField, ...] = ()
    card_fields: tuple[SensitiveField, ...] = ()
    captchas: tuple[Captcha, ...] = ()
    payment_frames: tuple[str, ...] = ()
    """URLs of iframes served by payment providers (Stripe, Adyen, Braintree, PayPal...)."""

    @property
    def any(self) -> bool:
        return bool(
            self.password_fields
            or self.otp_fields
            or self.card_fields
            or self.captchas
            or self.payment_frames
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
        """URL, title, tabs and scroll position, escaped like the digest. ``tabs`` are
        ready-made descriptions of the open tabs (page strings inside them are escaped here);
        open dialogs are added by the caller (escape them with :func:`escape_page_text`)."""
        lines = [f"URL: {escape_page_text(self.url)}", f"Title: {escape_page_text(self.title)}"]
        if tabs:
            lines.append("Tabs:")
            lines.extend(f"  {_tab_line(t)}" for t in tabs)
        lines.append(f"Scroll: {describe_scroll(self.scroll)}")
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


# -- escaping (the Python twin of esc() in core/eyes/text.js) ---------------------------------

_INVISIBLE = re.compile(
    "[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u2069\ufeff]"
)
_ROLE_MARK = re.compile(r"\b(human|assistant|system|user|developer)(\s*):", re.IGNORECASE)
_INDEX_REF = re.compile(r"\[(\s*\d+\s*)\]")


def escape_page_text(text: str) -> str:
    """Make a page-controlled string safe to place in the observation: one line, no tags
    (``<``/``>`` become ``‹``/``›``), no ``[N]`` index references, no role markers, no
    invisible or bidi-control characters, and never starting with ``[``."""
    s = _INVISIBLE.sub("", text)
    s = " ".join(s.split())
    s = s.replace("<", "‹").replace(">", "›")
    s = _INDEX_REF.sub(r"［\1］", s)
    s = _ROLE_MARK.sub(r"\1\2꞉", s)
    if re.match(r"^[\s*~]*\[", s):
        s = s.replace("[", "［", 1)
    return s


def _tab_line(description: str) -> str:
    """A tab description ``[N] * rest`` as ``tab N (current): rest``. The number is ours
    (switch_tab takes it) and is kept out of brackets, which mean element indexes only;
    the rest is page text and is escaped."""
    match = _TAB_NUMBER.match(description)
    if match is None:
        return escape_page_text(description)
    number, current, rest = match.groups()
    return f"tab {number}{' (current)' if current else ''}: {escape_page_text(rest)}"


_TAB_NUMBER = re.compile(r"^\[(\d+)\]\s*(\*\s*)?(.*)$", re.DOTALL)


def describe_scroll(scroll: Sequence[float]) -> str:
    """E.g. "at the top of 3.2 pages", "40% down of 3.2 pages", "the whole page is visible"."""
    _x, y, _w, height, _vw, vh = scroll
    if vh <= 0 or height <= vh + 1:
        return "the whole page fits in the viewport"
    pages = height / vh
    fraction = y / max(height - vh, 1)
    if fraction <= 0.005:
        return f"at the top of {pages:.1f} pages"
    if fraction >= 0.995:
        return f"at the bottom of {pages:.1f} pages"
    return f"scrolled {round(fraction * 100)}% of {pages:.1f} pages"


# -- taking a snapshot --------------------------------------------------------------------


def _rect(value: Any) -> tuple[float, float, float, float]:
    x, y, w, h = (float(v) for v in value)
    return (round(x, 1), round(y, 1), round(w, 1), round(h, 1))


def _element(raw: Mapping[str, Any]) -> ElementInfo:
    return ElementInfo(
        index=int(raw["index"]),
        tag=str(raw["tag"]),
        role=raw.get("role"),
        name=str(raw.get("name") or ""),
        attrs={str(k): str(v) for k, v in (raw.get("attrs") or {}).items()},
        line=str(raw["line"]),
        rect=_rect(raw["rect"]),
        in_viewport=bool(raw["inView"]),
        is_new=bool(raw["isNew"]),
        frame=raw.get("frame"),
        shadow=bool(raw.get("shadow")),
        editable=bool(raw.get("editable")),
        disabled=bool(raw.get("disabled")),
        input_type=raw.get("inputType"),
        autocomplete=raw.get("autocomplete"),
        form_action=raw.get("formAction"),
        form_method=raw.get("formMethod"),
        submits_form=bool(raw.get("submits")),
        focused=bool(raw.get("focused")),
        sensitive=cast("Sensitive | None", raw.get("sensitive")),
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
    )


_MAX_ROOT_ROUNDS = 4
"""Closed roots nest: each round finds the hosts inside the roots the previous one opened."""


async def take_snapshot(tab: Tab, *, options: SnapshotOptions | None = None) -> Snapshot:
    """Walk the tab's page once (in our isolated world) and return the digest.

    Raises :class:`core.world.WorldError` when the page's walk fails and ``core.cdp``
    errors when the tab does not answer within ``options.timeout`` seconds.
    """
    opts = options or SnapshotOptions()
    started = time.perf_counter()
    js_opts = {
        "maxChars": opts.max_chars,
        "margin": opts.offscreen_margin,
        "maxLine": opts.max_text_line,
        "includeText": opts.include_text,
    }
    expression = f"globalThis.__handrail.snapshot({json.dumps(js_opts)})"
    raw = await world_eval(tab, expression, timeout=opts.timeout)
    for _ in range(_MAX_ROOT_ROUNDS):
        if not (isinstance(raw, dict) and "hosts" in raw):
            break
        # The walk met elements that may hold closed shadow roots: fetch those (through
        # CDP, see core.world.adopt_closed_roots) and walk again, seeing inside them.
        context_id = await main_context(tab, timeout=opts.timeout)
        await adopt_closed_roots(tab.session, context_id, timeout=opts.timeout)
        raw = await world_eval(tab, expression, timeout=opts.timeout)
    if isinstance(raw, dict) and "hosts" in raw:
        js_opts["noHostCheck"] = True
        raw = await world_eval(
            tab, f"globalThis.__handrail.snapshot({json.dumps(js_opts)})", timeout=opts.timeout
        )
    if not isinstance(raw, dict):
        raise TypeError(f"the page walk returned {type(raw).__name__}, not an object")
    note_index_high_water(tab, int(raw["next"]))
    elements = {e.index: e for e in (_element(r) for r in raw["elements"])}
    stats = dict(raw.get("stats") or {})
    stats["roundtrip_ms"] = round((time.perf_counter() - started) * 1000, 1)
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
    return Probe(
        url=str(raw["url"]),
        title=str(raw["title"]),
        mutations=int(raw["mutations"]),
        new_interactive=int(raw["new_interactive"]),
        world=world_generation(tab),
    )

"""The four panes of the selected round: observation, model output, parsed action, result.

Everything shown here came from a page or a model, so it is rendered as ``Content`` built
from plain strings: markup in page text (``[/path]``, ``[bold]``) is shown, never parsed. And
``Content`` keeps an ESC, which the terminal would obey (an OSC 52 in a reply writes to the
clipboard), so every pane shows its control characters instead (:func:`visible_content`).
The panes sit side by side on a wide terminal, in a 2x2 grid on a medium one, and behind
tabs (one at a time, keys 1-4) on a narrow one.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.containers import Container, Horizontal, VerticalScroll
from textual.content import Content, Span
from textual.widget import Widget
from textual.widgets import Static, Tab, Tabs

from core.visible import CONTROL, visible
from tui.labels import STATE_LABELS
from tui.rounds import RoundView, pretty, result_summary
from tui.themes import meaning_variable, outcome_style
from tui.widgets.lazy_text import LAZY_CHARS, LazyText


@dataclass(frozen=True, slots=True)
class PaneText:
    """What one pane shows: its body and a subtitle for its border."""

    body: Content
    subtitle: str = ""


PANE_IDS = ("digest", "model", "action", "result")
PANE_TITLES = {
    "digest": "Observation",
    "model": "Model output",
    "action": "Action",
    "result": "Result",
    "screenshot": "Screenshot",
}
TAB_TITLES = {
    "digest": "Page",
    "model": "Model",
    "action": "Action",
    "result": "Result",
    "screenshot": "Picture",
}
"""The tabs' short names: the tab bar shows when the terminal is narrow (under
``NARROW_COLUMNS``), and at 80 columns the long ones scrolled "1 Observation" off its left
edge. Each pane's border still carries its full title."""
EXTRA_PANE_IDS = ("screenshot",)
"""Panes a screen may add after the four (replay's screenshot): numbered 5, 6..."""

WIDE_COLUMNS = 150
"""At or above this many columns the panes stand side by side; below it, a 2x2 grid."""
NARROW_COLUMNS = 110
"""Below this many columns the panes go behind tabs, one at a time."""


def visible_content(content: Content) -> Content:
    """``content`` with every terminal control character shown as its stand-in
    (:func:`core.visible.visible`), each style still on the same characters. The last step
    before a pane draws a body, whichever screen built it: a reply, a page's digest, a line
    of a log from elsewhere."""
    plain = content.plain
    found = list(CONTROL.finditer(plain))
    if not found:
        return content
    starts = [match.start() for match in found]
    grown = list(accumulate(len(visible(match.group())) - 1 for match in found))

    def moved(offset: int) -> int:
        before = bisect_left(starts, offset)
        return offset + (grown[before - 1] if before else 0)

    spans = [Span(moved(span.start), moved(span.end), span.style) for span in content.spans]
    return Content(visible(plain), spans, strip_control_codes=False)


def dim(text: str) -> Content:
    return Content.styled(text, "dim italic")


def _heading(text: str) -> Content:
    return Content.styled(text, "bold $text-secondary")


def json_content(value: Any) -> Content:
    """``value`` as indented JSON, syntax-coloured, its control characters shown (JSON
    escapes C0 controls, not C1 or bidi overrides)."""
    # Pygments loads with the first round, not on the way to the first screen.
    from textual.highlight import highlight

    return highlight(visible(pretty(value)), language="json")


def digest_content(digest: str | None) -> Content:
    """The digest verbatim but for control characters (shown); ``*`` lines (new elements) and
    ``~`` lines (off-screen) coloured."""
    if digest is None:
        return dim("not observed yet")
    lines: list[Content] = []
    for line in visible(digest).split("\n"):
        stripped = line.lstrip()
        if stripped.startswith("*["):
            lines.append(Content.styled(line, f"${meaning_variable('new-element')}"))
        elif stripped.startswith("~["):
            lines.append(Content.styled(line, f"${meaning_variable('offscreen')}"))
        else:
            lines.append(Content(line))
    return Content("\n").join(lines)


THINKING_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
"""The indicator's frames, one every 1/8 s of the wait."""


def thinking_content(waited_s: float) -> Content:
    """The model pane while the model is asked: a moving indicator and the time so far."""
    frame = THINKING_FRAMES[int(waited_s * 8) % len(THINKING_FRAMES)]
    return Content.assemble(
        (frame, "bold $accent"),
        " the model is thinking · ",
        (f"{waited_s:.1f} s", "bold"),
    )


def model_output_content(
    output: Any, waited_s: float | None = None, writing: str | None = None
) -> Content:
    """The model's reply block by block: text verbatim, tool calls as their JSON input.
    ``waited_s``: no reply yet, and the model was asked this long ago (a live run);
    ``writing``: the text a streaming model has written so far."""
    if output is None:
        if waited_s is None:
            return dim("waiting for the model")
        if writing:
            return _stack(
                [thinking_content(waited_s), _heading("── text (so far)"), Content(writing)]
            )
        return thinking_content(waited_s)
    if isinstance(output, str):
        return Content(output)
    if not isinstance(output, list | tuple):
        return Content(pretty(output))
    parts: list[Content] = []
    for block in output:
        if not isinstance(block, dict):
            parts.extend([_heading("── block"), Content(pretty(block))])
            continue
        kind = str(block.get("type", "?"))
        if kind == "text":
            parts.extend([_heading("── text"), Content(str(block.get("text", "")))])
        elif kind == "tool_use":
            title = f"── tool_use {block.get('name', '?')}"
            if block.get("id"):
                title += f"  ({block['id']})"
            parts.extend([_heading(title), json_content(block.get("input"))])
        else:
            parts.extend([_heading(f"── {kind}"), Content(pretty(block))])
    if not parts:
        return dim("the reply had no content blocks")
    return _stack(parts)


def _stack(parts: list[Content]) -> Content:
    """``Content("\\n").join(parts)`` for parts that may be megabytes long. ``join`` copies
    text a character at a time and ``+`` measures cell widths: seconds for a 5 MB reply."""
    texts: list[str] = []
    spans: list[Span] = []
    offset = 0
    for index, part in enumerate(parts):
        if index:
            texts.append("\n")
            offset += 1
        texts.append(part.plain)
        spans.extend(Span(start + offset, end + offset, style) for start, end, style in part.spans)
        offset += len(part.plain)
    return Content("".join(texts), spans, strip_control_codes=False)  # parts are stripped


def action_content(view: RoundView) -> Content:
    """Tool and parameters (highlighted), the target's digest line, the reason, the gate."""
    parts: list[Content] = []
    if view.action_error is not None:
        parts.append(
            Content.styled("could not parse the reply", f"bold ${meaning_variable('error')}")
        )
        parts.append(Content(view.action_error))
    action = view.action_json()
    if action is None and view.action_error is None:
        return dim("no action yet")
    if action is not None:
        shown = {"name": action.get("name"), "params": action.get("params", {})}
        parts.append(json_content(shown))
        if view.element_line:
            parts.append(_heading("target"))
            parts.append(digest_content(view.element_line))
        if action.get("reason"):
            parts.append(_heading("reason"))
            parts.append(Content(str(action["reason"])))
    if view.why:
        parts.append(_heading("needs approval"))
        parts.append(Content(view.why))
        if view.risky:
            parts.append(
                Content.styled("risky: asks every time", f"bold ${meaning_variable('denied')}")
            )
    approval = view.approval
    if approval:
        decision = approval.decision
        style = {
            "approved": outcome_style("approved"),
            "edited": outcome_style("approved"),
            "denied": outcome_style("denied"),
        }.get(decision, "")
        line = Content.assemble(("decision: ", "bold"), (decision, style))
        if approval.by:
            line += Content(f" by {approval.by}")
        parts.append(line)
        if approval.note:
            parts.append(Content(f"note: {approval.note}"))
        if approval.rule is not None:
            # The policy's words come from its file: shown as text (Content, not markup).
            parts.append(Content.assemble(("rule: ", "bold"), approval.rule.label))
            parts.append(dim(approval.rule.text))
        if approval.edited_params is not None:
            parts.append(dim("parameters above are as edited by the person"))
    return Content("\n").join(parts)


def result_content(view: RoundView) -> Content:
    """The result message, what changed, errors, and any hand-over to a person."""
    parts: list[Content] = []
    meaning = view.meaning()
    if view.result is not None:
        lines = result_summary(view.result)
        parts.append(Content.styled(lines[0] or "(no message)", f"bold {outcome_style(meaning)}"))
        parts.extend(Content(line) for line in lines[1:])
    elif view.approval is not None and view.approval.decision == "denied":
        parts.append(Content.styled("denied: the action did not run", outcome_style("denied")))
    elif view.phase == "done":
        parts.append(dim("the action did not run"))
    else:
        parts.append(dim(STATE_LABELS.get(view.phase, view.phase)))
    for pause in view.pauses:
        parts.append(_heading("handed to a person"))
        parts.append(
            Content.styled(
                f"{pause.get('kind', '?')}: {pause.get('detail', '')}", outcome_style("paused")
            )
        )
        if pause.get("url"):
            parts.append(Content(f"on {pause['url']}"))
        if pause.get("response"):
            parts.append(Content(f"person chose: {pause['response']}"))
    return Content("\n").join(parts)


def recorded_content(view: RoundView) -> Content | None:
    """A rerun's round: the recorded round beside it (action, target, result, observation)."""
    recorded = view.recorded
    if recorded is None:
        if view.source_round is None:
            return None
        return _stack(
            [
                _heading(f"── recorded round {view.source_round}"),
                dim("the source log is not at hand (run_start.rerun_of.log), or has changed"),
            ]
        )
    heading = recorded.heading or (
        f"recorded round {recorded.round} ({view.decided_by or 'rerun'} now)"
    )
    parts = [
        _heading(f"── {heading}"),
        Content(f"on {recorded.url}"),
        json_content(recorded.action),
    ]
    if recorded.element:
        parts += [_heading("recorded target"), digest_content(recorded.element)]
    result = result_summary(recorded.result) if recorded.result else ["(no result)"]
    parts += [_heading("recorded result"), Content("\n".join(result))]
    parts += [_heading("recorded observation"), digest_content(recorded.observation)]
    return _stack(parts)


def thinking_for(view: RoundView, now: float | None) -> float | None:
    """How long the model has been thinking in this round (None: it is not, or not live)."""
    if now is None or view.asked_at is None or view.model_output is not None:
        return None
    if view.phase != "thinking":
        return None
    return max(0.0, now - view.asked_at)


def model_pane_text(view: RoundView, now: float | None = None) -> PaneText:
    """The model pane: the reply (a live run still waiting for it: how long so far), the
    model's time and tokens below; a rerun's round adds the recorded round."""
    usage = view.usage or {}
    facts = []
    if view.model_ms is not None:
        facts.append(f"{view.model_ms / 1000:.1f} s")
    if usage:
        facts.append(
            f"in {usage.get('input_tokens', usage.get('prompt_tokens', '?'))} / out {usage.get('output_tokens', usage.get('completion_tokens', '?'))}"
        )
    subtitle = " · ".join(facts)
    model = model_output_content(view.model_output, thinking_for(view, now), view.writing)
    recorded = recorded_content(view)
    if recorded is not None:
        model = _stack([model, recorded])
        subtitle = f"{view.decided_by} · {subtitle}" if subtitle else str(view.decided_by or "")
    return PaneText(model, subtitle)


def timing_subtitle(view: RoundView) -> str:
    """What each time under the result measures: the action (the timeline's figure), and
    in replay the whole round, the person's wait included."""
    parts = []
    if view.duration_ms is not None:
        parts.append(f"action {view.duration_ms / 1000:.1f} s")
    if view.round_ms is not None:
        parts.append(f"round {view.round_ms / 1000:.1f} s")
    return " · ".join(parts)


def round_texts(view: RoundView, now: float | None = None) -> dict[str, PaneText]:
    """The four panes' text for a round (``now``: the app's clock in a live run, for the
    time the model has been thinking)."""
    return {
        "digest": PaneText(digest_content(view.digest), view.url),
        "model": model_pane_text(view, now),
        "action": PaneText(action_content(view), ""),
        "result": PaneText(result_content(view), timing_subtitle(view)),
    }


class Pane(VerticalScroll):
    """One pane: a titled, independently scrolling view of one text."""

    DEFAULT_CSS = """
    Pane {
        border: round $panel-lighten-2;
        border-title-color: $text-muted;
        padding: 0 1;
        &:focus { border: round $primary; border-title-color: $primary; }
        & > Static { width: 1fr; }
        & > LazyText { display: none; }
    }
    """

    def __init__(self, key: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.key = key

    def compose(self) -> ComposeResult:
        yield Static(dim("nothing selected"), id=f"{self.key}-body")
        yield LazyText(id=f"{self.key}-long")

    def on_mount(self) -> None:
        number = (*PANE_IDS, *EXTRA_PANE_IDS).index(self.key) + 1
        self.border_title = f"{number} {PANE_TITLES[self.key]}"

    def show(self, text: PaneText) -> None:
        static, lazy = self.query_one(Static), self.query_one(LazyText)
        body = visible_content(text.body)
        long = len(body) > LAZY_CHARS
        # A long text is rendered a screenful at a time; a Static would lay it all out.
        static.update(Content("") if long else body)
        lazy.show(body if long else Content(""))
        static.display, lazy.display = not long, long
        self.border_subtitle = Content(visible(text.subtitle, one_line=True)).truncate(
            60, ellipsis=True
        )
        self.scroll_home(animate=False)

    @property
    def plain(self) -> str:
        """The pane's text as shown (for tests and copy)."""
        lazy = self.query_one(LazyText)
        if lazy.display:
            return lazy.plain
        body = self.query_one(Static).visual
        return body.plain if isinstance(body, Content) else str(body)


class RoundPanes(Widget):
    """The four panes, laid out for the terminal's width (see ``set_width``), and an
    optional extra pane (replay's screenshot): a column on the right, or one more tab."""

    DEFAULT_CSS = """
    RoundPanes {
        layout: vertical;
        & > Tabs { display: none; }
        &.-tabs > Tabs { display: block; }
        & > #pane-row { height: 1fr; }
        & #pane-grid { layout: grid; grid-size: 4 1; grid-gutter: 0; height: 1fr; width: 1fr; }
        &.-grid #pane-grid { grid-size: 2 2; }
        &.-tabs #pane-grid { grid-size: 1 1; }
        &.-tabs Pane { display: none; }
        &.-tabs Pane.-current { display: block; }
        /* The extra pane (replay's screenshot) takes a share of the width, not a fixed 46
           columns: at 120 the text panes keep room for a URL; `z` shows it whole. */
        & #pane-row > Pane { width: 25%; min-width: 20; max-width: 64; height: 1fr; }
        &.-tabs #pane-row > Pane { width: 1fr; }
        &.-tabs.-extra-current #pane-grid { display: none; }
        /* An extra pane with nothing for this log (no screenshots) gives its room back. */
        & #pane-row > Pane.-absent { display: none; }
        &.-tabs #pane-row > Pane.-absent.-current { display: block; }
        /* Zoomed (z): the current pane alone, as large as the screen allows. */
        &.-zoomed > Tabs { display: none; }
        &.-zoomed #pane-grid { grid-size: 1 1; }
        &.-zoomed Pane { display: none; }
        &.-zoomed Pane.-current { display: block; }
        &.-zoomed.-extra-current #pane-grid { display: none; }
        &.-zoomed #pane-row > Pane.-current { width: 1fr; max-width: 100%; }
    }
    """

    LAYOUTS: ClassVar[tuple[str, ...]] = ("-columns", "-grid", "-tabs")

    def __init__(self, *, id: str | None = None, extra: Pane | None = None) -> None:
        super().__init__(id=id)
        self.current = "digest"
        self.extra = extra
        self.keys: tuple[str, ...] = (*PANE_IDS, extra.key) if extra is not None else PANE_IDS

    def compose(self) -> ComposeResult:
        yield Tabs(
            *(Tab(f"{i} {TAB_TITLES[key]}", id=f"tab-{key}") for i, key in enumerate(self.keys, 1))
        )
        with Horizontal(id="pane-row"):
            with Container(id="pane-grid"):
                for key in PANE_IDS:
                    yield Pane(key, id=f"pane-{key}")
            if self.extra is not None:
                yield self.extra

    def on_mount(self) -> None:
        self.pane(self.current).add_class("-current")

    def pane(self, key: str) -> Pane:
        return self.query_one(f"#pane-{key}", Pane)

    def set_width(self, columns: int) -> None:
        """Pick side-by-side, grid or tabs for a terminal this many columns wide."""
        if columns >= WIDE_COLUMNS:
            layout = "-columns"
        elif columns >= NARROW_COLUMNS:
            layout = "-grid"
        else:
            layout = "-tabs"
        for name in self.LAYOUTS:
            self.set_class(name == layout, name)

    @property
    def tabbed(self) -> bool:
        return self.has_class("-tabs")

    @property
    def zoomed(self) -> bool:
        return self.has_class("-zoomed")

    def zoom(self, key: str | None) -> None:
        """Show pane ``key`` alone (None: back to all of them)."""
        if key is not None:
            self.show_pane(key)
        self.set_class(key is not None, "-zoomed")

    def show_pane(self, key: str, *, focus: bool = True) -> None:
        """Make ``key`` the current pane (the visible one behind tabs) and focus it."""
        self.current = key
        for other in self.keys:
            self.pane(other).set_class(other == key, "-current")
        self.set_class(key not in PANE_IDS, "-extra-current")
        tabs = self.query_one(Tabs)
        if tabs.active != f"tab-{key}":
            tabs.active = f"tab-{key}"
        if focus:
            self.pane(key).focus()

    @on(Tabs.TabActivated)
    def _tab_picked(self, event: Tabs.TabActivated) -> None:
        event.stop()
        if event.tab is not None and event.tab.id:
            key = event.tab.id.removeprefix("tab-")
            if key != self.current:
                self.show_pane(key, focus=False)

    def show(self, texts: dict[str, PaneText]) -> None:
        for key, text in texts.items():
            self.pane(key).show(text)

    def show_round(self, view: RoundView, now: float | None = None) -> None:
        self.show(round_texts(view, now))

    def show_message(self, title: str, body: Content, *, pane: str = "result") -> None:
        """Show a non-round row (a log problem, the run's start or end) in one pane."""
        texts = {key: PaneText(dim("—")) for key in PANE_IDS}
        texts[pane] = PaneText(Content.assemble((title, "bold"), "\n", body))
        self.show(texts)

"""The recorded plan: a model backend that repeats a recorded run's steps on the live page.

Each round it takes the next recorded step and looks for its target in the digest the agent
just observed (:mod:`core.rerun.match`). The agent loop does the rest exactly as in a live
run: the gate and the person's approval (recorded approvals are never reused), hand-overs,
the allowlist, secrets, the log. This backend only chooses the action.

- **Replayed**: the step fits; its action is returned with the target's live index.
- **Model**: the step does not fit (no match, several, its text was redacted, a secret is
  missing, it failed when repeated, the person denied it) and a model is configured: the
  round goes to that model, with the task, the recorded step, why it no longer fits and the
  closest candidates added to the latest observation.
- **Stopped**: the same without a model: ``finish`` unsuccessfully (exit 1), naming the
  recorded round and what differs.

Resuming: after a model round the pending step is tried again first (an interstitial page
the model dismissed leaves it fitting). If it still does not fit, the next
:data:`LOOKAHEAD` recorded steps are tried, and one that fits *on its own recorded page*
(same path) is taken as the sign that the model achieved the steps before it: those are
skipped, and said so in the round's reason. Without a model nothing is ever skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

from core.model.base import Model, ModelReply, RecordedView, ReplyOrigin
from core.model.scripted import block_texts, latest_browser_state
from core.rerun.match import (
    Digest,
    Entry,
    Fit,
    find_target,
    page_path,
    read_digest,
    recorded_entry,
)
from core.rerun.rebase import Rebase
from core.rerun.source import RecordedRun, RecordedStep
from core.result import DENIED_BY_PERSON
from core.secrets import PLACEHOLDER_RE, REDACTED, Secrets, only_placeholders

if TYPE_CHECKING:
    from anthropic.types import MessageParam, ToolParam

    from core.run.events import RerunOf

LOOKAHEAD = 3
"""How many recorded steps past the pending one may show that the model achieved it."""
NO_TARGET = frozenset(
    {
        "navigate",
        "go_back",
        "wait",
        "press_key",
        "switch_tab",
        "close_tab",
        "find_text",
        "screenshot",
    }
)
TARGETED = frozenset({"click", "type", "select_option", "hover", "upload_file", "scroll"})


@dataclass(frozen=True, slots=True)
class _Choice:
    """A step that fits: the action to return."""

    params: dict[str, Any]
    note: str
    """What a person reads in the reason besides the recorded reason."""
    target: Entry | None = None


class RecordedPlan:
    """Repeats ``recorded`` (see the module doc). ``fallback`` is the model for steps that no
    longer fit; None stops the rerun there instead."""

    def __init__(
        self,
        recorded: RecordedRun,
        *,
        rebase: Rebase | None = None,
        secrets: Secrets | None = None,
        fallback: Model | None = None,
    ) -> None:
        self.recorded = recorded
        self.rebase = rebase or Rebase()
        self.secrets = secrets or Secrets()
        self.fallback = fallback
        self.vision = fallback.vision if fallback is not None else False
        model = f"; model for changed steps: {fallback.label}" if fallback else "; no model"
        self.label = f"rerun of {recorded.path.name} ({len(recorded.steps)} steps{model})"
        self.rerun_of: RerunOf = recorded.source
        self.model_requests = 0
        self._next = 0
        self._calls = 0
        self._last: tuple[str, int] | None = None
        """The tool_use id and step number of the last replayed call."""
        self._model_acted = False

    async def check(self) -> None:
        if self.fallback is not None:
            await self.fallback.check()

    async def reply(
        self,
        *,
        system: str,
        messages: Sequence[MessageParam],
        tools: Sequence[ToolParam],
        on_text: Callable[[str], None] | None = None,
    ) -> ModelReply:
        """The next recorded step, the model's reply for a step that no longer fits, or
        ``finish``. Raises :class:`~core.model.base.ModelError` only from the model."""
        failure = self._last_failure(messages)
        if self._last is not None and failure is None:
            self._next = self._last[1] + 1
        self._last = None
        steps = self.recorded.steps
        if self._next >= len(steps):
            return self._ran_out()
        state = latest_browser_state(messages) or ""
        live = read_digest(state)
        pending = steps[self._next]
        why: str | None = failure
        fit: Fit | None = None
        if why is None:
            choice, why, fit = self._try(pending, live)
            if choice is not None:
                self._model_acted = False
                return self._replay(self._next, choice, skipped=())
            if self._model_acted:
                ahead = self._look_ahead(live)
                if ahead is not None:
                    number, choice = ahead
                    skipped = tuple(range(self._next, number))
                    self._model_acted = False
                    return self._replay(number, choice, skipped=skipped)
        assert why is not None
        if self.fallback is None:
            return self._stop(pending, why)
        return await self._ask_model(pending, why, fit, system, messages, tools, on_text)

    # -- one step ----------------------------------------------------------------------

    def _try(
        self, step: RecordedStep, live: Digest
    ) -> tuple[_Choice | None, str | None, Fit | None]:
        """The step's action on this page, or why it does not fit."""
        params = dict(step.params)
        text_problem = self._text_problem(step, live.url)
        if text_problem is not None:
            return None, text_problem, None
        if step.name == "run_js":
            return None, "run_js steps are not repeated (a rerun offers no JavaScript)", None
        if step.name == "navigate":
            recorded_url = str(params.get("url", ""))
            live_url = self.rebase.url(recorded_url)
            params["url"] = live_url
            note = (
                f"recorded URL {recorded_url}, rebased onto {live_url}"
                if live_url != recorded_url
                else f"recorded URL {recorded_url}"
            )
            return _Choice(params, note), None, None
        if step.name == "click_at":
            return (
                None,
                "click_at points at the recorded run's screenshot; it is not repeated",
                None,
            )
        if step.name == "drag":
            return self._try_drag(step, params, live)
        if step.name not in TARGETED or "index" not in params:
            return _Choice(params, ""), None, None
        recorded = recorded_entry(step.element or "", step.observation)
        if recorded is None:
            return None, "the log has no digest line for its target", None
        fit = find_target(recorded, step.url, live, self.rebase)
        if fit.found is None:
            return None, fit.why, fit
        old, new = recorded.element.index, fit.found.element.index
        params["index"] = new
        note = f"recorded as [{old}], now [{new}]" if old != new else ""
        return _Choice(params, note, fit.found), None, fit

    def _try_drag(
        self, step: RecordedStep, params: dict[str, Any], live: Digest
    ) -> tuple[_Choice | None, str | None, Fit | None]:
        """A drag's ends found again: the recorded ``line`` (source) and ``→ line``
        (destination) of its element, each as a click's target is."""
        lines = (step.element or "").split("\n→ ")
        ends = [key for key in ("index", "to") if key in params]
        if "index" not in params:
            lines = ["", *lines]  # a file drop: its first line names the file
        notes: list[str] = []
        fit: Fit | None = None
        for key in ends:
            line = lines[0] if key == "index" else (lines[1] if len(lines) > 1 else "")
            recorded = recorded_entry(line, step.observation)
            if recorded is None:
                return None, f"the log has no digest line for the drag's {key}", None
            fit = find_target(recorded, step.url, live, self.rebase)
            if fit.found is None:
                return None, fit.why, fit
            old, new = recorded.element.index, fit.found.element.index
            params[key] = new
            if old != new:
                notes.append(f"{key} recorded as [{old}], now [{new}]")
        found = fit.found if fit is not None else None
        return _Choice(params, "; ".join(notes), found), None, fit

    def _text_problem(self, step: RecordedStep, live_url: str) -> str | None:
        """Why the step's typed text cannot be reused, if it cannot: it is never guessed."""
        text = step.params.get("text")
        if step.name != "type" or not isinstance(text, str):
            return None
        if text == REDACTED or (text.startswith("«withheld: ") and text.endswith("»")):
            return (
                f"the log does not keep the text typed here ({text}), and a rerun never guesses "
                "it; the field must be filled by the model with a <secret:NAME>, or by you"
            )
        if not only_placeholders(text):
            return None
        host = urlsplit(live_url).hostname or ""
        for name in PLACEHOLDER_RE.findall(text):
            secret = self.secrets.get(name)
            if secret is None:
                return (
                    f"it typed <secret:{name}>, and no secret {name} is configured now; "
                    f"pass --secret {name}=ENVVAR"
                )
            if not secret.allows(live_url):  # an origin: a scope may name a port or scheme
                return f"<secret:{name}> may not be used on {host or live_url!r} (its domains: {', '.join(secret.domains)})"
        return None

    def _look_ahead(self, live: Digest) -> tuple[int, _Choice] | None:
        steps = self.recorded.steps
        for number in range(self._next + 1, min(len(steps), self._next + 1 + LOOKAHEAD)):
            step = steps[number]
            if page_path(self.rebase.url(step.url)) != page_path(live.url):
                continue
            choice, _why, _fit = self._try(step, live)
            if choice is not None:
                return number, choice
        return None

    # -- replies -----------------------------------------------------------------------

    def _replay(self, number: int, choice: _Choice, *, skipped: tuple[int, ...]) -> ModelReply:
        step = self.recorded.steps[number]
        rounds = [self.recorded.steps[i].round for i in skipped]
        parts = [f"Repeating round {step.round} of run {self.recorded.run_id}"]
        if choice.note:
            parts.append(f"({choice.note})")
        reason = " ".join(parts) + (f": {step.reason}" if step.reason else ".")
        if rounds:
            reason += f" The model did what recorded round(s) {_rounds(rounds)} did."
        params = dict(choice.params)
        if step.name == "finish":
            params["answer"] = f"Recorded answer: {params.get('answer', '')}"
        summary = _summary(step, choice.target, rounds)
        block = self._tool_use(step.name, params, reason)
        self._last = (block["id"], number)
        return ModelReply(
            content=({"type": "text", "text": summary}, block),
            stop_reason="tool_use",
            origin=ReplyOrigin("replayed", step.round, _view(step)),
        )

    def _ran_out(self) -> ModelReply:
        total = len(self.recorded.steps)
        answer = (
            f"Repeated the {total} recorded steps of run {self.recorded.run_id}. The recorded "
            f"run ended there ({self.recorded.ending})."
        )
        block = self._tool_use(
            "finish", {"success": True, "answer": answer}, "The recorded steps are done."
        )
        return ModelReply(
            content=(block,), stop_reason="tool_use", origin=ReplyOrigin("replayed", None)
        )

    def _stop(self, step: RecordedStep, why: str) -> ModelReply:
        answer = (
            f"The rerun stopped at recorded round {step.round} ({step.describe()} on "
            f"{step.url}): {why}. Nothing was done for that step. Rerun with --model SPEC to "
            "let a model handle the steps that no longer fit, or check what changed on the site."
        )
        block = self._tool_use(
            "finish", {"success": False, "answer": answer}, f"Round {step.round} no longer fits."
        )
        return ModelReply(
            content=(block,),
            stop_reason="tool_use",
            origin=ReplyOrigin("stopped", step.round, _view(step)),
        )

    async def _ask_model(
        self,
        step: RecordedStep,
        why: str,
        fit: Fit | None,
        system: str,
        messages: Sequence[MessageParam],
        tools: Sequence[ToolParam],
        on_text: Callable[[str], None] | None = None,
    ) -> ModelReply:
        assert self.fallback is not None
        closest = fit.closest if fit is not None else ()
        note = [
            "<rerun_note>",
            f"This run repeats a recorded run (task: {self.recorded.task}).",
            f"At this point the recorded run did, in round {step.round} on {step.url}: "
            f"{step.describe()}" + (f" (its reason: {step.reason})" if step.reason else "") + ".",
            f"It no longer fits: {why}.",
        ]
        if closest:
            note.append("The closest elements now: " + "; ".join(c.describe() for c in closest))
        note += [
            "Choose one action that does what the recorded step meant, on the page below. The "
            "recorded steps resume once the page matches them again.",
            "</rerun_note>",
        ]
        self.model_requests += 1
        self._model_acted = True
        reply = await self.fallback.reply(
            system=system,
            messages=_with_note(messages, "\n".join(note)),
            tools=tools,
            on_text=on_text,
        )
        return ModelReply(
            content=reply.content,
            usage=reply.usage,
            stop_reason=reply.stop_reason,
            raw=reply.raw,
            origin=ReplyOrigin("model", step.round, _view(step)),
        )

    def _tool_use(self, name: str, params: dict[str, Any], reason: str) -> dict[str, Any]:
        self._calls += 1
        return {
            "type": "tool_use",
            "id": f"toolu_rerun_{self._calls:03d}",
            "name": name,
            "input": {**params, "reason": reason},
        }

    def _last_failure(self, messages: Sequence[MessageParam]) -> str | None:
        """Why the last replayed step did not work, from its tool result (None: it did)."""
        if self._last is None or not messages:
            return None
        tool_use_id, _number = self._last
        last: Mapping[str, Any] = messages[-1]
        content = last.get("content")
        if last.get("role") != "user" or isinstance(content, str):
            return None
        for block in content or ():
            if block.get("type") != "tool_result" or block.get("tool_use_id") != tool_use_id:
                continue
            lines = "\n".join(block_texts(block.get("content", ""))).strip().splitlines()
            first = lines[0] if lines else ""
            if not first.startswith("Failed ("):
                return None
            verdict = first.partition(": ")[2]
            if verdict.startswith(DENIED_BY_PERSON):
                return f"you denied it when it was repeated ({verdict})"
            return f"it failed when repeated: {verdict}"
        return None


def _with_note(messages: Sequence[MessageParam], note: str) -> list[MessageParam]:
    """``messages`` with ``note`` added to the last user turn: after its tool results (the
    Messages API wants those first in the turn) and before its browser state."""
    out = list(messages)
    last: dict[str, Any] = dict(out[-1])
    content = last.get("content")
    blocks: list[Any] = (
        [{"type": "text", "text": content}] if isinstance(content, str) else list(content or ())
    )
    results = 0
    while results < len(blocks) and blocks[results].get("type") == "tool_result":
        results += 1
    text = {"type": "text", "text": note}
    last["content"] = [*blocks[:results], text, *blocks[results:]]
    out[-1] = cast("MessageParam", last)
    return out


def _summary(step: RecordedStep, target: Entry | None, skipped: list[int]) -> str:
    result = step.result.get("message") or ""
    lines = [f"Recorded round {step.round} on {step.url}: {step.describe()}"]
    if result:
        lines.append(f"Recorded result: {result}")
    if target is not None:
        lines.append(f"Now: {target.element.line.lstrip('*~ ')}")
    if skipped:
        lines.append(f"Recorded round(s) {_rounds(skipped)} were done by the model.")
    return "\n".join(lines)


def _view(step: RecordedStep) -> RecordedView:
    return step.view()


def _rounds(numbers: Sequence[int]) -> str:
    return ", ".join(str(n) for n in numbers)

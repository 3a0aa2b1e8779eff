"""What an action did: the value every hand returns and the audit log records."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

Outcome = Literal["ok", "error", "unknown"]

DENIED_BY_PERSON = "the person denied this action"
"""How a denied action's error begins (the tool result's first line is ``Failed (error): ``
and then this), for the model and for a scripted plan, which reads it to follow its
``on_deny``."""

ErrorCode = Literal[
    "refused",
    "target_changed",
    "not_actionable",
    "not_editable",
    "not_focusable",
    "not_file_input",
    "option_unavailable",
    "sensitive_field",
    "hostile_page",
    "stale_element",
    "no_history",
    "no_such_tab",
    "navigation_failed",
    "navigation_timeout",
    "timeout",
    "lost",
    "browser_unreachable",
    "browser_error",
    "page_unreadable",
    "js_exception",
    "bad_parameters",
    "internal",
]
"""Why an action failed, for the code that reacts to it (the agent asks the person again
on ``target_changed``, hands over on ``sensitive_field``...). ``error`` says the same for a
reader."""


@dataclass(frozen=True, slots=True)
class Changes:
    """What an action changed, measured before and after it (after a short settle)."""

    url_changed: bool = False
    title_changed: bool = False
    dom_changed: bool = False
    new_tab: bool = False
    dialog: str | None = None
    """Type and message of a JavaScript dialog the action opened, e.g. ``confirm: Delete?``."""
    new_elements: int = 0

    def any(self) -> bool:
        return (
            self.url_changed
            or self.title_changed
            or self.dom_changed
            or self.new_tab
            or self.dialog is not None
            or self.new_elements > 0
        )


@dataclass(frozen=True, slots=True)
class ActionResult:
    """The result of one action, written for the model that reads it next round.

    ``outcome`` is ``unknown`` when the action was dispatched but its effect could not be
    read back (the browser died mid-action, the wait timed out after dispatch): such an
    action must never be reported as a success, nor retried automatically.
    """

    ok: bool
    message: str
    error: str | None = None
    changes: Changes = field(default_factory=Changes)
    outcome: Outcome = "ok"
    screenshot: str | None = None
    """Path of a PNG file when the action took a screenshot."""
    data: Any = None
    """A JSON value the action returned (run_js), or None."""
    code: ErrorCode | None = None
    """Set on every failure the hands report (None on success)."""
    notices: tuple[str, ...] = ()
    """Things the caller should know that are not the action's own effect
    (our tab was closed and reopened, the browser reconnected, a download finished)."""

    @staticmethod
    def success(message: str, changes: Changes | None = None, **kw: Any) -> ActionResult:
        return ActionResult(ok=True, message=message, changes=changes or Changes(), **kw)

    @staticmethod
    def failure(
        message: str, error: str | None = None, *, code: ErrorCode | None = None, **kw: Any
    ) -> ActionResult:
        return ActionResult(
            ok=False, message=message, error=error or message, outcome="error", code=code, **kw
        )

    @staticmethod
    def unknown(
        message: str, error: str | None = None, *, code: ErrorCode | None = None, **kw: Any
    ) -> ActionResult:
        return ActionResult(
            ok=False, message=message, error=error or message, outcome="unknown", code=code, **kw
        )

    def with_notices(self, *notices: str) -> ActionResult:
        if not notices:
            return self
        return replace(self, notices=self.notices + tuple(notices))

    def to_json(self) -> dict[str, Any]:
        """The audit-log form: ``{"ok", "message", "error"?, "outcome", "changes", ...}``."""
        out: dict[str, Any] = {
            "ok": self.ok,
            "message": self.message,
            "outcome": self.outcome,
            "changes": asdict(self.changes),
        }
        if self.error is not None:
            out["error"] = self.error
        if self.code is not None:
            out["code"] = self.code
        if self.screenshot is not None:
            out["screenshot"] = self.screenshot
        if self.data is not None:
            out["data"] = self.data
        if self.notices:
            out["notices"] = list(self.notices)
        return out


def first_line(what: BaseException | str) -> str:
    """An exception's message (or a text), first line only: what a result, a log line or a
    notice quotes of it. An exception without a message is named by its type; an empty text
    is ``"unknown error"``. The one helper for this: page exceptions go through it too
    (:func:`core.world.errors.exception_line`)."""
    text = str(what).strip()
    if text:
        return text.splitlines()[0]
    return type(what).__name__ if isinstance(what, BaseException) else "unknown error"

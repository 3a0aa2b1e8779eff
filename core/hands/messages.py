"""The texts the hands write for the model and the person, and the small pure helpers
that word them (clipping, element labels, advice for targets that cannot be used)."""

from __future__ import annotations

from typing import Any

from core.result import Changes


def clip(text: str, n: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def with_article(word: str) -> str:
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"


def strip_slash(url: str) -> str:
    return url.rstrip("/")


def fmt_rect(rect: tuple[float, float, float, float]) -> str:
    x, y, w, h = rect
    return f"x={x:.0f} y={y:.0f} {w:.0f}×{h:.0f}"


def element_label(index: int, target: Any) -> str:
    if not isinstance(target, dict):
        return f"[{index}]"
    name = clip(str(target.get("name") or ""), 60)
    tag = target.get("tag", "element")
    return f"[{index}] <{tag}> {name!r}" if name else f"[{index}] <{tag}>"


ADVICE = {
    "covered": "Close or dismiss what covers it first (a dialog, banner or overlay), or scroll so it is free",
    "moving": "Wait until it stops moving (wait), then try again",
    "hidden": "It may appear after another step (open its menu or section first)",
    "zero_size": "It may appear after another step (open its menu or section first)",
    "transparent": "It is invisible; it may appear after another step",
    "disabled": "It may become enabled once the form is complete",
    "outside": "Scroll its container or the page to reach it",
    "detached": "Read the new digest and use its indexes",
    "inert": "Something else (e.g. a dialog) must be closed first",
}


def not_actionable(action: str, label: str, prep: dict[str, Any]) -> tuple[str, str]:
    code = str(prep.get("code", "not_actionable"))
    reason = str(prep.get("reason", "it cannot be clicked"))
    advice = ADVICE.get(code, "")
    message = f"{action} was not done: {label}: {reason}."
    if advice:
        message += f" {advice}."
    return message, f"not_actionable: {code}: {reason}"


def readback(
    label: str, text: str, expected: str, holds: str, info: dict[str, Any], *, sensitive: bool
) -> str:
    if sensitive:
        what = "password field" if info.get("type") == "password" else "sensitive field"
        base = f"typed {len(text)} characters into the {what} {label}"
        if len(holds) != len(expected):
            base += f"; it now holds {len(holds)} characters, not {len(expected)} (the page limited or changed it)"
        return base
    base = f"typed {clip(text, 200)!r} into {label}"
    norm = (
        (lambda s: " ".join(s.split())) if info.get("kind") == "contenteditable" else (lambda s: s)
    )
    if norm(holds) == norm(expected):
        return base
    max_length = info.get("maxLength")
    if max_length and len(holds) == max_length and expected.startswith(holds):
        return (
            f"{base}; the field accepts at most {max_length} characters, so it holds "
            f"{clip(holds, 200)!r} (the rest was cut)"
        )
    if not holds:
        return f"{base}; but the field is empty now: the page rejected or cleared the text"
    return f"{base}; the page changed it: the field now holds {clip(holds, 200)!r}"


def describe_changes(changes: Changes) -> str:
    parts = []
    if changes.url_changed:
        parts.append("the URL changed")
    if changes.title_changed:
        parts.append("the title changed")
    if changes.new_elements:
        parts.append(f"{changes.new_elements} new interactive elements")
    elif changes.dom_changed:
        parts.append("the page content changed")
    return ", ".join(parts)


NET_HINTS = {
    "ERR_NAME_NOT_RESOLVED": " (no such host: check the address)",
    "ERR_CONNECTION_REFUSED": " (nothing answers at that address)",
    "ERR_CONNECTION_TIMED_OUT": " (the server did not answer)",
    "ERR_INTERNET_DISCONNECTED": " (the browser has no network)",
    "ERR_CERT": " (the site's certificate is not trusted)",
    "ERR_ABORTED": " (the navigation was cancelled, e.g. by the page or a download)",
    "ERR_BLOCKED": " (the browser blocked it)",
}


def net_error_hint(error_text: str) -> str:
    for key, hint in NET_HINTS.items():
        if key in error_text:
            return hint
    return ""

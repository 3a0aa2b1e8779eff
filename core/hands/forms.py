"""The form family: type, press_key, select_option and upload_file."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path
from typing import Any

from core.cdp import CDPTimeout
from core.hands.ctx import Ctx, Refused, js
from core.hands.expect import TargetExpectation, check_expect
from core.hands.keyboard import enter_text, send_keys
from core.hands.messages import clip, element_label, readback
from core.hands.pointer import prepare, press
from core.hands.settle import TYPE_QUIET, Probe, compare, probe, settle, watch_motion
from core.hands.tab_watch import Marks
from core.keys import MOVING_KEYS, key_events, parse_keys
from core.result import ActionResult
from core.world.calls import element_handle
from core.world.errors import WorldError


async def type_text(
    ctx: Ctx,
    index: int,
    text: str,
    clear: bool,
    submit: bool,
    expect: TargetExpectation | None,
    *,
    secret: bool = False,
) -> ActionResult:
    """Type ``text`` into ``[index]``. ``secret`` says the text is exactly the configured
    secrets the person named: nothing else may go into a sensitive field."""
    watch = ctx.watch
    # Independent readings, in one round trip's time; the approval is checked first. The
    # text goes into the page (our world) only once the field is known not to refuse it.
    readings: tuple[Any, ...] = await asyncio.gather(
        probe(ctx),
        js(ctx, "target", index),
        js(ctx, "fieldInfo", index),
        js(ctx, "sensitivity", index),
        return_exceptions=True,
    )
    first, target, info, sensitivity = readings
    if isinstance(first, BaseException):
        raise first
    before: Probe | None = first
    await check_expect(ctx, index, expect, before, target)
    # Each reading's failure counts only where the reading is used, as when read one by one.
    for reading in (target, info):
        if isinstance(reading, BaseException):
            raise reading
    label = element_label(index, target)
    if not info.get("editable"):
        raise Refused(
            f"type was not done: {label} is not a text field (it is {info.get('describe')}). "
            "Use the index of the input, textarea or editor itself; for a list use "
            "select_option, for a checkbox click it",
            code="not_editable",
            error="not_editable",
        )
    if info.get("disabled"):
        raise Refused(
            f"type was not done: {label} is disabled",
            code="not_actionable",
            error="not_actionable: disabled",
        )
    if info.get("readOnly"):
        raise Refused(
            f"type was not done: {label} is read-only",
            code="not_actionable",
            error="not_actionable: read-only",
        )
    if isinstance(sensitivity, BaseException):
        raise sensitivity
    _refuse_if_sensitive(ctx, label, sensitivity, secret)
    sensitive = bool(info.get("sensitive"))
    kind = str(info.get("kind"))
    # A date, time, colour or range input takes what its picker would set, not keys.
    native = await js(ctx, "nativeInput", index, text, False)
    if native.get("native") and not native.get("ok"):
        _refuse_native(label, text, native)
    marks = watch.marks()
    if info.get("focused") or native.get("native"):
        await watch_motion(ctx)  # no click (whose preparation arms it) comes first
    if not info.get("focused"):
        if not native.get("native"):
            # Focus as a person would. A picker field is focused without a click: a click
            # moves a range's thumb or opens a colour chooser.
            prep = await prepare(ctx, index, label, None, defer_stable=True)
            await press(ctx, index, label, float(prep["x"]), float(prep["y"]), None)
        if not await js(ctx, "focusField", index):
            raise Refused(
                f"type was not done: {label} did not take the keyboard focus when clicked "
                "(the page may have moved focus elsewhere)",
                code="not_focusable",
                error="not_focusable",
            )
    # Judged again on the field as it is now that it has the focus (a type that flips on
    # focus counts), and keys meant for it are stopped whenever the focus is elsewhere.
    verdict = await js(ctx, "armKeys", index)
    if verdict and not secret:
        await js(ctx, "keysDone")
        _refuse_if_sensitive(ctx, label, verdict, secret)
    sensitive = sensitive or bool(verdict)
    ctx.mark_dispatched()
    # The field as it is now decides (its type may have changed since the digest, or on
    # focus): a picker field gets its value set, anything else gets the keys.
    native = await js(ctx, "nativeInput", index, text, True)
    if native.get("native"):
        await js(ctx, "keysDone")
        if not native.get("ok"):
            _refuse_native(label, text, native)
        return await _finish_native(ctx, index, label, text, native, before, marks, submit)
    previous = str(info.get("value") or "")
    if secret:
        await _insert_secret(ctx, index, label, text, clear)
        previous = "" if clear else previous
    elif kind == "code":
        # A code editor keeps its text in its own model: its own keys select all (or go to
        # the end), as a person's would; the field that takes them holds nothing to select.
        mac = ctx.hands.options.mac
        if clear:
            keys = ["Meta+A" if mac else "Control+A", "Backspace"]
            previous = ""
        else:
            keys = ["Meta+ArrowDown" if mac else "Control+End"]
        for spec in keys:
            await send_keys(ctx, key_events(parse_keys(spec), mac=mac))
    elif clear:
        current = await js(ctx, "selectAll", index)
        if current:
            await send_keys(ctx, key_events(parse_keys("Backspace"), mac=ctx.hands.options.mac))
            remaining = str((await js(ctx, "fieldInfo", index)).get("value") or "")
            if remaining:
                # Some widgets swallow Backspace; set the value as a framework expects.
                await js(ctx, "setValue", index, "")
        previous = ""
    else:
        await js(ctx, "caretToEnd", index)
    if kind == "code" and not secret and text:
        await _paste_code(ctx, index, label, text)
    elif not secret:
        await enter_text(ctx, text, single_line=kind == "input")
    # The guard's report and the field's value, read together (the renderer answers them
    # in this order); the report comes first.
    done: tuple[Any, ...] = await asyncio.gather(
        js(ctx, "keysDone"),
        js(ctx, "fieldInfoDrawn" if kind == "code" else "fieldInfo", index, await_promise=True),
        return_exceptions=True,
    )
    strayed, after_info = done
    if isinstance(strayed, BaseException):
        raise strayed
    if strayed:
        raise Refused(
            f"type was not done: the target changed under the keyboard: the focus moved to "
            f"{strayed} while typing into {label}; handrail stopped the keys that would have "
            "gone there. Look at the page before typing again",
            error=f"the focus moved to {strayed} while typing",
            code="target_changed",
        )
    if isinstance(after_info, BaseException):
        raise after_info
    holds = str(after_info.get("value") or "")
    expected = previous + text
    report = readback(label, text, expected, holds, after_info, sensitive=sensitive)
    if submit:
        await send_keys(ctx, key_events(parse_keys("Enter"), mac=ctx.hands.options.mac))
    ctx.dispatched_at = time.monotonic()
    note = await settle(ctx, marks, quiet=TYPE_QUIET)
    after = await probe(ctx)
    changes = compare(before, after)
    if not text:
        report = f"cleared {label}" if clear else f"typed nothing into {label}"
    message = report + (" and pressed Enter" if submit else "")
    if note:
        message += f". Note: {note}"
    return ActionResult.success(message, changes)


async def _paste_code(ctx: Ctx, index: int, label: str, text: str) -> None:
    """Text into a code editor goes in whole, as a paste: typed key by key, its newlines and
    brackets would be indented and closed a second time by the editor. An editor that leaves
    pasting to the browser gets it as one input instead."""
    pasted = await js(ctx, "pasteText", index, text)
    if not pasted.get("ok"):
        await js(ctx, "keysDone")
        raise Refused(
            f"type was not done: the focus left {label} before the text went in (it is on "
            f"{pasted.get('focused')}). Look at the page before typing again",
            error="the focus moved before typing",
            code="target_changed",
        )
    if not pasted.get("handled"):
        await enter_text(ctx, text, single_line=False, whole=True)


async def _insert_secret(ctx: Ctx, index: int, label: str, text: str, clear: bool) -> None:
    """Put a secret into ``[index]`` without a key: the page script proves the field has the
    focus and inserts the text into that field's own document in the same task (a clear
    is the selection the text replaces, so no Backspace runs either). A page that moves
    the focus on a key, on focus or on a timer cannot carry the secret into another
    site's frame: keys go where the browser's focus is, this does not."""
    put = await js(ctx, "insertText", index, text, clear)
    if put.get("ok"):
        return
    await js(ctx, "keysDone")
    raise Refused(
        f"type was not done: the focus was on {put.get('focused')}, not on {label}, when the "
        "secret was to go in; it was not typed. Look at the page before typing again",
        error="the focus was not on the field for the secret",
        code="target_changed",
    )


def _refuse_native(label: str, text: str, native: dict[str, Any]) -> None:
    raise Refused(
        f"type was not done: {label} is a {native.get('type')} field and {native.get('reason')}. "
        f"It takes {native.get('formats')}",
        error=f"not a {native.get('noun')} the field takes: {text!r}",
        code="bad_parameters",
    )


async def _finish_native(
    ctx: Ctx,
    index: int,
    label: str,
    text: str,
    native: dict[str, Any],
    before: Probe | None,
    marks: Marks,
    submit: bool,
) -> ActionResult:
    """Report what a picker field holds after its value was set (before Enter, if any)."""
    value = str(native.get("value") or "")
    holds = str(native.get("holds") or "")
    read = (
        f" (read {clip(text, 80)!r} as that {native.get('noun')})" if text.strip() != value else ""
    )
    if holds == value:
        report = (
            f"set {label} as its picker would: it now holds {value}{read}"
            if value
            else f"cleared {label}"
        )
    elif holds:
        report = (
            f"set {label} to {value} as its picker would{read}, but it holds {holds} now: "
            "the page changed or rejected it"
        )
    else:
        report = (
            f"set {label} to {value} as its picker would{read}, but the field is empty now: "
            "the page rejected the value"
        )
    if submit:
        await send_keys(ctx, key_events(parse_keys("Enter"), mac=ctx.hands.options.mac))
    ctx.dispatched_at = time.monotonic()
    note = await settle(ctx, marks)
    changes = compare(before, await probe(ctx))
    message = report + (" and pressed Enter" if submit else "")
    if note:
        message += f". Note: {note}"
    return ActionResult.success(message, changes)


async def press_key(ctx: Ctx, spec: str) -> ActionResult:
    watch = ctx.watch
    combo = parse_keys(spec)
    before = await probe(ctx)
    focus_before = await js(ctx, "focusDescription")
    if combo.spec.lower() not in MOVING_KEYS:
        # Judged on the focused element as it is now: keys would go into it one by one.
        verdict = await js(ctx, "focusedSensitivity")
        _refuse_if_sensitive(ctx, f"the focused {focus_before}", verdict, secret=False)
    marks = watch.marks()
    await watch_motion(ctx)
    await send_keys(ctx, key_events(combo, mac=ctx.hands.options.mac))
    note = await settle(ctx, marks)
    after = await probe(ctx)
    changes = compare(before, after)
    parts = [f"pressed {combo.spec}"]
    focus_after = None
    if after is not None and before is not None and after.generation == before.generation:
        with contextlib.suppress(WorldError, CDPTimeout):
            focus_after = await js(ctx, "focusDescription")
    if focus_after != focus_before and focus_after:
        parts.append(f"; focus moved to {focus_after}")
    elif focus_after:
        parts.append(f"on {focus_after}")
    elif focus_before is None:
        parts.append("(no element had the focus; the key went to the page)")
    message = " ".join(parts).replace(" ;", ";")
    if note:
        message += f". Note: {note}"
    return ActionResult.success(message, changes)


async def select_option(
    ctx: Ctx, index: int, option: str, expect: TargetExpectation | None
) -> ActionResult:
    watch = ctx.watch
    before = await probe(ctx)
    await check_expect(ctx, index, expect, before)
    label = element_label(index, await js(ctx, "target", index))
    marks = watch.marks()
    await watch_motion(ctx)
    ctx.mark_dispatched()
    res = await js(ctx, "selectOption", index, option)
    if not res.get("ok"):
        ctx.dispatched = False
        code = res.get("code")
        if code in ("not_select", "disabled"):
            raise Refused(
                f"select_option was not done: {res.get('reason')}",
                code="not_actionable",
                error=f"not_actionable: {code}",
            )
        listed = ", ".join(
            f"{o['label']!r}"
            + (f" (value {o['value']!r})" if o["value"] != o["label"] else "")
            + (" [disabled]" if o.get("disabled") else "")
            for o in res.get("options", [])[:40]
        )
        more = len(res.get("options", [])) - 40
        if more > 0:
            listed += f" and {more} more"
        if code == "ambiguous":
            matches = ", ".join(repr(m) for m in res.get("matches", []))
            msg = f"{option!r} matches several options of {label}: {matches}; name one exactly"
        elif code == "disabled_option":
            msg = f"the option {option!r} of {label} is disabled"
        else:
            msg = f"no option of {label} matches {option!r}"
        raise Refused(
            f"select_option was not done: {msg}. Its options: {listed}",
            code="option_unavailable",
            error=f"option_{code}",
        )
    note = await settle(ctx, marks)
    after = await probe(ctx)
    changes = compare(before, after)
    chosen = res.get("label") or res.get("value")
    message = f"selected {chosen!r} in {label}"
    if not res.get("changed"):
        message += " (it was already selected)"
    if note:
        message += f". Note: {note}"
    return ActionResult.success(message, changes)


async def upload_file(
    ctx: Ctx, index: int, path: str, expect: TargetExpectation | None
) -> ActionResult:
    if ctx.hands.options.upload_dir is None:
        raise Refused(
            "upload_file was not done: uploads are off in this run (the person can allow them "
            "with --upload-dir FOLDER)",
            code="refused",
            error="refused: no upload folder",
        )
    root = ctx.hands.options.upload_dir.resolve()
    candidate = Path(path).expanduser()
    if not candidate.is_absolute():
        candidate = root / candidate
    try:
        resolved = candidate.resolve(strict=True)
    except (OSError, RuntimeError):
        raise Refused(
            f"upload_file was not done: there is no file {path!r} in the upload folder",
            code="refused",
            error="refused: no such file",
        ) from None
    if not resolved.is_relative_to(root) or not resolved.is_file():
        raise Refused(
            f"upload_file was not done: {path!r} is not a file inside the upload folder; only "
            "files the person put there can be uploaded",
            code="refused",
            error="refused: outside the upload folder",
        )
    before = await probe(ctx)
    await check_expect(ctx, index, expect, before)
    info = await js(ctx, "fileInput", index)
    if not info.get("ok"):
        raise Refused(
            f"upload_file was not done: [{index}] {info.get('describe')} is not a file input "
            "(<input type=file>); use the index of the file input itself",
            code="not_file_input",
            error="not_file_input",
        )
    if info.get("disabled"):
        raise Refused(
            f"upload_file was not done: the file input [{index}] is disabled",
            code="not_actionable",
            error="not_actionable: disabled",
        )
    # The session that owns the node: the tab's, or a cross-origin frame's own.
    session, object_id = await element_handle(
        ctx.current, index, timeout=max(min(ctx.remaining(), 10.0), 0.5)
    )
    marks = ctx.watch.marks()
    ctx.mark_dispatched()
    await session.send(
        "DOM.setFileInputFiles",
        {"files": [str(resolved)], "objectId": object_id},
        timeout=max(ctx.remaining(), 0.5),
    )
    names = await js(ctx, "fileNames", index)
    await settle(ctx, marks)
    after = await probe(ctx)
    holds = ", ".join(names) if names else "no file"
    return ActionResult.success(
        f"put {resolved.name} into the file input [{index}]; it now holds: {holds}",
        compare(before, after),
    )


def _refuse_if_sensitive(ctx: Ctx, label: str, verdict: Any, secret: bool) -> None:
    if not verdict or secret:
        return
    kind = str(verdict.get("kind", "sensitive"))
    why = str(verdict.get("why", ""))
    raise Refused(
        f"{ctx.name} was not done: {label} is a {kind} field ({why}). The agent never types "
        "passwords, codes or card numbers; the person is asked to fill it in (or the task can "
        "use a configured secret, <secret:NAME>)",
        error=f"{kind} field: {why}",
        code="sensitive_field",
        data={"sensitive": kind},
    )

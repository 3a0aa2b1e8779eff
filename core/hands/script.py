"""run_js: the person allowed JavaScript for the run; it runs in the page's MAIN world."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from core.browser.browser import Tab
from core.cdp import JSON, CDPError
from core.hands.ctx import Ctx
from core.hands.messages import clip
from core.hands.settle import compare, probe, settle
from core.result import ActionResult
from core.world.errors import exception_line

_RUN_JS_GROUP = "handrail-run-js"
# Runs on run_js's result in the page's main world: JSON, with what JSON cannot hold
# (DOM nodes, functions, cycles, BigInt) described as strings, and a size cap.
_SERIALISE_JS = """function () {
  const seen = new WeakSet();
  const text = JSON.stringify(this, (key, v) => {
    if (typeof v === "bigint") return v.toString();
    if (typeof v === "function") return "[function]";
    if (v && typeof v === "object") {
      if (typeof v.nodeType === "number" && typeof v.nodeName === "string") {
        return v.nodeType === 1 ? "<" + v.nodeName.toLowerCase() + (v.id ? " id=" + v.id : "") + ">" : v.nodeName;
      }
      if (seen.has(v)) return "[circular]";
      seen.add(v);
    }
    return v;
  });
  if (text === undefined) return null;
  return text.length > 100000 ? { truncated: true, json: text.slice(0, 100000) } : JSON.parse(text);
}"""


async def json_value(tab: Tab, remote: JSON, timeout: float) -> Any:
    """The JSON form of a main-world value: objects are serialised in the page, with
    DOM nodes, functions and cycles described instead of failing."""
    if remote.get("type") == "undefined":
        return None
    if "objectId" not in remote:
        if "unserializableValue" in remote:
            return str(remote["unserializableValue"])
        return remote.get("value")
    answer = await tab.send(
        "Runtime.callFunctionOn",
        {
            "objectId": remote["objectId"],
            "functionDeclaration": _SERIALISE_JS,
            "returnByValue": True,
        },
        timeout=timeout,
    )
    if "exceptionDetails" in answer:
        return remote.get("description")
    return answer.get("result", {}).get("value")


async def run_js(ctx: Ctx, code: str) -> ActionResult:
    tab = ctx.current
    watch = ctx.watch
    before = await probe(ctx)
    marks = watch.marks()
    params: JSON = {
        "returnByValue": False,
        "awaitPromise": True,
        "userGesture": True,
        "objectGroup": _RUN_JS_GROUP,
    }
    ctx.mark_dispatched()
    timeout = max(ctx.remaining() - 1.0, 0.5)
    try:
        result = await tab.send("Runtime.evaluate", {**params, "expression": code}, timeout=timeout)
        details = result.get("exceptionDetails")
        if details and is_syntax_error(details) and ("return" in code or "await" in code):
            # A function body (`return x`, top-level await): it did not run; run it as one.
            wrapped = f"(async () => {{\n{code}\n}})()"
            result = await tab.send(
                "Runtime.evaluate", {**params, "expression": wrapped}, timeout=timeout
            )
            details = result.get("exceptionDetails")
        if details:
            first = exception_line(details)
            await settle(ctx, marks)
            return ActionResult.failure(
                f"the script threw: {first}", code="js_exception", error=f"js_exception: {first}"
            )
        value = await json_value(tab, result.get("result", {}), timeout)
    finally:
        with contextlib.suppress(CDPError):
            await tab.send("Runtime.releaseObjectGroup", {"objectGroup": _RUN_JS_GROUP}, timeout=2)
    note = await settle(ctx, marks)
    after = await probe(ctx)
    shown = json.dumps(value, ensure_ascii=False, default=str)
    message = f"the script returned {clip(shown, 2000)}"
    if note:
        message += f". Note: {note}"
    return ActionResult.success(message, compare(before, after), data=value)


def is_syntax_error(details: JSON) -> bool:
    exception = details.get("exception") or {}
    return exception.get("className") == "SyntaxError" or "SyntaxError" in str(
        exception.get("description", "")
    )

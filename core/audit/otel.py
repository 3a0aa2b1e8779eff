"""A run's audit log as OpenTelemetry spans, in the GenAI semantic conventions.

One ``invoke_agent`` span per run; in it, per round, a ``chat`` span for the model call
(``gen_ai.request.model``, ``gen_ai.usage.*``, ``gen_ai.response.finish_reasons``) and an
``execute_tool`` span for the action (``gen_ai.tool.name``, ``gen_ai.tool.call.id``), with
handrail's own facts under ``handrail.*`` (the approval: decision, who, rule, wait; the
page before and after; the result), and a ``hand_over`` span per hand-over to a person.

Ids are derived from the run id (the trace) and the round (each span), so every export of
one log, and a live export of the run, carry the same ids; the log's ``run_start`` names
the trace id. Times come from the log's own timestamps and timings.

Spans are built with the official SDK (``opentelemetry-sdk``) and encoded by the official
OTLP encoder: sent with its OTLP/HTTP exporter (protobuf), or as OTLP JSON (the same
protobuf message in JSON, ids in hex as OTLP JSON wants them) for ``http/json`` and files.
Message contents go along only with ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``,
and then as the log keeps them: secrets scrubbed, typed text withheld where the log withholds it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, set_span_in_context

from core.audit.trace_ids import span_id_of, trace_id_of

CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
OPT_IN_ENV = "OTEL_SEMCONV_STABILITY_OPT_IN"
AGENT = "handrail"


class _Ids(IdGenerator):
    """Hands the SDK the id chosen for the span about to start."""

    def __init__(self, trace_id: int) -> None:
        self.trace_id = trace_id
        self.span_id = 1

    def generate_trace_id(self) -> int:
        return self.trace_id

    def generate_span_id(self) -> int:
        return self.span_id


def _ns(ts: object) -> int | None:
    if not isinstance(ts, str):
        return None
    try:
        return int(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1e9)
    except ValueError:
        return None


def _ms(timing: object, part: str) -> float:
    if isinstance(timing, Mapping):
        value = timing.get(part)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return max(0.0, float(value))
    return 0.0


def _provider(model: str, settings: Mapping[str, Any]) -> str:
    spec = str(settings.get("model") or model)
    head = spec.split(":", 1)[0].lower()
    if head in ("anthropic", "openai"):
        return head
    if head == "mcp" or model.startswith("MCP client"):
        return "mcp_client"
    if head == "scripted" or model.startswith("scripted"):
        return "handrail.scripted"
    return head or "unknown"


def _request_model(model: str, settings: Mapping[str, Any]) -> str:
    spec = str(settings.get("model") or model)
    return spec.split(":", 1)[1] if ":" in spec else spec


def spans_of_log(
    records: Sequence[Mapping[str, Any]], env: Mapping[str, str] | None = None
) -> list[ReadableSpan]:
    """The spans of a run from its log's records (read, and verified, by the caller)."""
    start = next((r for r in records if r.get("type") == "run_start"), None)
    if start is None:
        return []
    trace = TraceBuilder(start, env)
    rounds = [r for r in records if r.get("type") == "round"]
    for i, rec in enumerate(rounds):
        trace.round(rec, rounds[i + 1].get("url") if i + 1 < len(rounds) else None)
    resumes = {r.get("round"): r for r in records if r.get("type") == "human_resume"}
    for pause in (r for r in records if r.get("type") == "human_pause"):
        trace.hand_over(pause, resumes.get(pause.get("round")))
    end = next((r for r in reversed(records) if r.get("type") == "run_end"), None)
    last = max([_ns(start.get("ts")) or 0, *(_ns(r.get("ts")) or 0 for r in records)])
    trace.end(end, last)
    return trace.take()


class TraceBuilder:
    """A run's spans, built as its records come (all at once for a log, round by round for
    a live run): :meth:`round` and :meth:`hand_over` end their spans at once, :meth:`end`
    ends the run's; :meth:`take` hands over the spans ended since it was last called."""

    def __init__(self, start: Mapping[str, Any], env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        self.capture = env.get(CAPTURE_ENV, "").strip().lower() == "true"
        latest = "gen_ai_latest_experimental" in env.get(OPT_IN_ENV, "")
        self.run_id = run_id = str(start.get("run_id", ""))
        raw_settings = start.get("settings")
        settings: Mapping[str, Any] = raw_settings if isinstance(raw_settings, Mapping) else {}
        model = str(start.get("model", ""))
        self.provider_key = "gen_ai.provider.name" if latest else "gen_ai.system"
        self.provider = _provider(model, settings)
        self.request_model = _request_model(model, settings)
        self.begin_ns = _ns(start.get("ts")) or 0
        self.ids = _Ids(trace_id_of(run_id))
        self.memory = InMemorySpanExporter()
        resource = Resource.create({"service.name": AGENT, "service.instance.id": run_id})
        self.provider_ = TracerProvider(resource=resource, id_generator=self.ids)
        self.provider_.add_span_processor(SimpleSpanProcessor(self.memory))
        self.tracer = self.provider_.get_tracer("handrail.audit", schema_url=None)
        self.ids.span_id = span_id_of(run_id, "run")
        self.root = self.tracer.start_span(
            f"invoke_agent {AGENT}",
            kind=SpanKind.INTERNAL,
            start_time=self.begin_ns,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": AGENT,
                "gen_ai.agent.id": run_id,
                "gen_ai.conversation.id": run_id,
                self.provider_key: self.provider,
                "gen_ai.request.model": self.request_model,
                "handrail.run_id": run_id,
                "handrail.task": str(start.get("task", "")),
                "handrail.model": model,
                "handrail.approve": str(settings.get("approve", "")),
            },
        )
        self.context = set_span_in_context(self.root)
        self.last_ns = self.begin_ns

    def _child(
        self,
        what: str,
        name: str,
        start: int,
        attributes: dict[str, Any],
        kind: SpanKind = SpanKind.INTERNAL,
    ) -> Span:
        """A span under the run's, its id derived from ``what`` (``chat 3``, ``tool 3``...)."""
        self.ids.span_id = span_id_of(self.run_id, what)
        return self.tracer.start_span(
            name, context=self.context, kind=kind, start_time=start, attributes=attributes
        )

    def take(self) -> list[ReadableSpan]:
        spans = list(self.memory.get_finished_spans())
        self.memory.clear()
        return spans

    def round(self, rec: Mapping[str, Any], after: object = None) -> None:
        """A round's ``chat`` span (when the model was asked) and ``execute_tool`` span
        (when it acted); ``after``: the page the next round saw."""
        number = rec.get("round")
        at = _ns(rec.get("ts")) or self.begin_ns
        timing = rec.get("timing_ms")
        chat_start = at + int(_ms(timing, "observe") * 1e6)
        chat_end = chat_start + int(_ms(timing, "model") * 1e6)
        raw_usage = rec.get("usage")
        usage = raw_usage if isinstance(raw_usage, Mapping) else None
        raw_output = rec.get("model_output")
        output = raw_output if isinstance(raw_output, list) else []
        calls = [b for b in output if isinstance(b, Mapping) and b.get("type") == "tool_use"]
        if usage is not None:  # the model was asked in this round
            self._chat(rec, number, usage, output, calls, chat_start, chat_end)
        raw_action = rec.get("action")
        action = raw_action if isinstance(raw_action, Mapping) else None
        if action is not None and "name" in action:
            tool_end = chat_end + int(_ms(timing, "action") * 1e6)
            self._tool(rec, number, action, calls, after, chat_end, tool_end)
        self.last_ns = max(self.last_ns, at + int(_ms(timing, "round") * 1e6))

    def _chat(
        self,
        rec: Mapping[str, Any],
        number: object,
        usage: Mapping[str, Any],
        output: list[Any],
        calls: list[Mapping[str, Any]],
        start: int,
        end: int,
    ) -> None:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            self.provider_key: self.provider,
            "gen_ai.request.model": self.request_model,
            "gen_ai.response.finish_reasons": [
                str(usage.get("stop_reason") or ("tool_call" if calls else "stop"))
            ],
            "handrail.round": number,
        }
        for key, name in (
            ("input_tokens", "gen_ai.usage.input_tokens"),
            ("output_tokens", "gen_ai.usage.output_tokens"),
        ):
            if isinstance(usage.get(key), int):
                attributes[name] = usage[key]
        if self.capture:
            if isinstance(rec.get("observation"), str):
                attributes["gen_ai.input.messages"] = json.dumps(
                    [{"role": "user", "parts": [{"type": "text", "content": rec["observation"]}]}]
                )
            attributes["gen_ai.output.messages"] = json.dumps(
                [{"role": "assistant", "parts": output}], default=str
            )
        chat = self._child(
            f"chat {number}", f"chat {self.request_model}", start, attributes, SpanKind.CLIENT
        )
        chat.end(end_time=max(start, end))

    def _tool(
        self,
        rec: Mapping[str, Any],
        number: object,
        action: Mapping[str, Any],
        calls: list[Mapping[str, Any]],
        after: object,
        start: int,
        end: int,
    ) -> None:
        name = str(action["name"])
        raw_approval = rec.get("approval")
        approval: Mapping[str, Any] = raw_approval if isinstance(raw_approval, Mapping) else {}
        raw_result = rec.get("result")
        result: Mapping[str, Any] = raw_result if isinstance(raw_result, Mapping) else {}
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.type": "function",
            "handrail.round": number,
            "handrail.approval.decision": str(approval.get("decision", "")),
            "handrail.approval.by": str(approval.get("by", "")),
            "handrail.url.before": str(rec.get("url") or ""),
            "handrail.result.outcome": str(
                result.get("outcome") or ("ok" if result.get("ok") else "error")
            ),
        }
        rule = approval.get("rule")
        if isinstance(rule, Mapping):
            attributes["handrail.approval.rule"] = str(rule.get("text", ""))
            attributes["handrail.approval.rule_index"] = int(rule.get("index", 0) or 0)
        if isinstance(after, str) and after:
            attributes["handrail.url.after"] = after
        call_id = calls[0].get("id") if calls else None
        if isinstance(call_id, str):
            attributes["gen_ai.tool.call.id"] = call_id
        if isinstance(rec.get("target_name"), str):
            attributes["handrail.target.name"] = rec["target_name"]
        if self.capture:
            attributes["gen_ai.tool.call.arguments"] = json.dumps(
                action.get("params", {}), default=str
            )
            attributes["gen_ai.tool.call.result"] = str(result.get("message", ""))
        tool = self._child(f"tool {number}", f"execute_tool {name}", start, attributes)
        if result.get("ok") is False:
            tool.set_status(Status(StatusCode.ERROR, str(result.get("error") or "")[:200]))
        tool.end(end_time=max(start, end))

    def hand_over(self, pause: Mapping[str, Any], resumed: Mapping[str, Any] | None) -> None:
        number = pause.get("round")
        at = _ns(pause.get("ts")) or self.begin_ns
        span = self._child(
            f"hand_over {number}",
            f"hand_over {pause.get('kind', '')}",
            at,
            {
                "handrail.round": number,
                "handrail.hand_over.kind": str(pause.get("kind", "")),
                "handrail.hand_over.url": str(pause.get("url", "")),
                "handrail.hand_over.response": str((resumed or {}).get("response", "unanswered")),
            },
        )
        span.end(end_time=_ns((resumed or {}).get("ts")) or at)

    def end(self, end: Mapping[str, Any] | None, last_ns: int | None = None) -> None:
        """End the run's span (``run_end``'s outcome on it); ``last_ns``: the last moment
        the run recorded."""
        root = self.root
        if end is not None:
            root.set_attribute("handrail.outcome", str(end.get("outcome", "")))
            root.set_attribute("handrail.reason", str(end.get("reason", "")))
            if isinstance(end.get("exit_code"), int):
                root.set_attribute("handrail.exit_code", end["exit_code"])
            if end.get("outcome") not in ("success", None):
                root.set_status(Status(StatusCode.ERROR, str(end.get("outcome"))))
        closing = max(self.last_ns, last_ns or 0, _ns((end or {}).get("ts")) or 0)
        root.end(end_time=closing)
        self.provider_.shutdown()


def otlp_json(spans: Iterable[ReadableSpan]) -> dict[str, Any]:
    """The spans as an OTLP JSON ``ExportTraceServiceRequest`` (ids in hex)."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    message: dict[str, Any] = MessageToDict(encode_spans(list(spans)))
    for resource in message.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = _hex(span[key])
    return message


def _hex(b64: str) -> str:
    import base64

    return base64.b64decode(b64).hex()


def otlp_protobuf(spans: Iterable[ReadableSpan]) -> bytes:
    """The spans as an OTLP protobuf ``ExportTraceServiceRequest``."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return bytes(encode_spans(list(spans)).SerializeToString())


PROTOCOL_ENV = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
TRACES_PATH = "/v1/traces"


class ExportError(Exception):
    """The spans could not be sent; the message says why."""


def traces_url(endpoint: str) -> str:
    """An OTLP/HTTP endpoint as ``OTEL_EXPORTER_OTLP_ENDPOINT`` gives it (the collector's
    base URL), or already the traces URL."""
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint.endswith(TRACES_PATH) else endpoint + TRACES_PATH


def protocol_of(env: Mapping[str, str]) -> str:
    for name in PROTOCOL_ENV:
        value = env.get(name, "").strip()
        if value:
            return value
    return "http/protobuf"


def send_otlp(
    spans: Sequence[ReadableSpan], endpoint: str, env: Mapping[str, str] | None = None
) -> None:
    """Send ``spans`` to an OTLP/HTTP collector, in the protocol the environment names
    (``http/protobuf``, the default, through the SDK's exporter; or ``http/json``)."""
    env = os.environ if env is None else env
    url = traces_url(endpoint)
    protocol = protocol_of(env)
    if protocol == "http/protobuf":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace.export import SpanExportResult

        exporter = OTLPSpanExporter(endpoint=url, timeout=30)
        try:
            if exporter.export(list(spans)) is not SpanExportResult.SUCCESS:
                raise ExportError(f"the collector at {url} did not take the spans")
        finally:
            exporter.shutdown()  # type: ignore[no-untyped-call]
        return
    if protocol == "http/json":
        import urllib.error
        import urllib.request

        body = json.dumps(otlp_json(spans)).encode()
        request = urllib.request.Request(
            url, data=body, method="POST", headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                answer.read()
        except (urllib.error.URLError, OSError) as exc:
            raise ExportError(f"the collector at {url} did not take the spans: {exc}") from None
        return
    raise ExportError(
        f"OTLP protocol {protocol!r} is not spoken here: use http/protobuf or http/json "
        "(an OTLP/HTTP endpoint, usually port 4318)"
    )

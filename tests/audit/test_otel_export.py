"""``handrail export``: a demo run's log as OpenTelemetry spans, received by an OTLP/HTTP
receiver of the test's own on loopback, which decodes the official protobuf (and JSON)
messages; the span tree, names and GenAI attributes are what a tracing backend shows."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from core.audit import read_log
from core.audit.otel import spans_of_log
from core.demo import start_demo_site
from core.run.session import run_session
from tests.helpers.cli import handrail
from tests.run.test_demo_run import demo_args
from tui.cli.demo import demo_settings
from tui.console import ConsoleSupervisor


class Receiver:
    """An OTLP/HTTP trace receiver on 127.0.0.1: each request's spans, decoded."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.arrived = threading.Condition()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                kind = self.headers.get("Content-Type", "")
                if self.path != "/v1/traces":
                    self.send_response(404)
                    self.end_headers()
                    return
                if kind == "application/x-protobuf":
                    message = ExportTraceServiceRequest()
                    message.ParseFromString(body)
                    decoded = MessageToDict(message)
                    for span in _spans(decoded):  # OTLP protobuf ids, shown as OTLP JSON's
                        for key in ("traceId", "spanId", "parentSpanId"):
                            if key in span:
                                import base64

                                span[key] = base64.b64decode(span[key]).hex()
                else:
                    decoded = json.loads(body)
                with owner.arrived:
                    owner.requests.append((kind, decoded))
                    owner.arrived.notify_all()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _spans(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        span
        for resource in message.get("resourceSpans", [])
        for scope in resource.get("scopeSpans", [])
        for span in scope.get("spans", [])
    ]


def _attrs(span: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in span.get("attributes", []):
        value = item["value"]
        (kind, inner), *_ = value.items()
        if kind == "arrayValue":
            inner = [next(iter(v.values())) for v in inner.get("values", [])]
        elif kind == "intValue":
            inner = int(inner)
        out[item["key"]] = inner
    return out


@pytest.fixture(scope="module")
def demo_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scripted demo, run once to its payment hand-over."""
    tmp = tmp_path_factory.mktemp("otel-demo")
    site = start_demo_site()
    saved = os.environ.pop("ANTHROPIC_API_KEY", None)
    try:
        settings = demo_settings(
            demo_args(tmp, "--approve", "none", "--no-tui"), site_url=site.url, work=tmp
        )
        finished = asyncio.run(
            run_session(settings, supervisor=ConsoleSupervisor(interactive=False))
        )
        assert finished.outcome == "human_needed"
    finally:
        site.stop()
        if saved is not None:
            os.environ["ANTHROPIC_API_KEY"] = saved
    (log,) = (tmp / "logs").glob("*.jsonl")
    return log


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.stop()


def export(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return handrail("export", *args, timeout=120, env=env)


@pytest.mark.slow
def test_a_demo_runs_spans_reach_the_receiver_as_one_tree_in_the_genai_conventions(
    demo_log: Path, receiver: Receiver, tmp_path: Path
) -> None:
    done = export(str(demo_log), "--otlp", receiver.url)
    assert done.returncode == 0, done.stderr
    ((kind, message),) = receiver.requests
    assert kind == "application/x-protobuf"  # the SDK's own OTLP/HTTP exporter
    spans = _spans(message)
    records = read_log(demo_log).records
    start = records[0]
    # One trace, named in the log's run_start; one root, the run.
    assert {s["traceId"] for s in spans} == {start["trace_id"]}
    (root,) = [s for s in spans if "parentSpanId" not in s]
    assert root["name"] == "invoke_agent handrail"
    root_attrs = _attrs(root)
    assert root_attrs["gen_ai.operation.name"] == "invoke_agent"
    assert root_attrs["gen_ai.agent.id"] == start["run_id"]
    assert root_attrs["handrail.outcome"] == "human_needed"
    children = [s for s in spans if s is not root]
    assert {s["parentSpanId"] for s in children} == {root["spanId"]}
    rounds = [r for r in records if r["type"] == "round"]
    chats = [s for s in children if _attrs(s).get("gen_ai.operation.name") == "chat"]
    tools = [s for s in children if _attrs(s).get("gen_ai.operation.name") == "execute_tool"]
    assert len(chats) == len([r for r in rounds if r.get("usage") is not None])  # model asked
    assert [_attrs(t)["gen_ai.tool.name"] for t in tools] == [
        r["action"]["name"] for r in rounds if r.get("action") and "name" in r["action"]
    ]
    assert all(t["name"] == f"execute_tool {_attrs(t)['gen_ai.tool.name']}" for t in tools)
    first_tool = _attrs(tools[0])
    assert first_tool["gen_ai.tool.call.id"].startswith("toolu_")
    assert first_tool["handrail.approval.decision"] in ("auto", "not_needed")
    assert first_tool["handrail.url.before"].startswith("http://127.0.0.1:")
    assert all(_attrs(c)["gen_ai.response.finish_reasons"] for c in chats)
    (hand_over,) = [s for s in children if s["name"].startswith("hand_over")]
    assert _attrs(hand_over)["handrail.hand_over.kind"] == "payment"
    # Nothing of the page's words by default: contents only when asked for.
    assert not any("gen_ai.input.messages" in _attrs(s) for s in spans)
    # The same ids from a file export, and from OTLP JSON over HTTP.
    out = tmp_path / "run.otlp.json"
    assert export(str(demo_log), "--otel-json", str(out)).returncode == 0
    from_file = {(s["spanId"], s["name"]) for s in _spans(json.loads(out.read_text()))}
    assert from_file == {(s["spanId"], s["name"]) for s in spans}
    again = export(
        str(demo_log), "--otlp", receiver.url, env={"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}
    )
    assert again.returncode == 0, again.stderr
    kind, message = receiver.requests[1]
    assert kind == "application/json"
    assert {(s["spanId"], s["name"]) for s in _spans(message)} == from_file


def test_contents_only_when_asked_and_the_newer_names_when_opted_in(tmp_path: Path) -> None:
    records: list[dict[str, Any]] = [
        {"type": "run_start", "run_id": "r1", "ts": "2026-12-07T10:00:00.000Z", "task": "t",
         "model": "anthropic:claude-x", "settings": {"model": "anthropic:claude-x"}},
        {"type": "round", "round": 1, "ts": "2026-12-07T10:00:01.000Z", "url": "http://a/",
         "observation": "<browser_state>Token: <secret:API></browser_state>",
         "model_output": [{"type": "tool_use", "id": "toolu_1", "name": "click",
                           "input": {"index": 1}}],
         "action": {"name": "click", "params": {"index": 1}, "reason": "r"},
         "approval": {"decision": "approved", "by": "person",
                      "rule": {"index": 2, "text": "action = click", "policy_sha256": "ab"}},
         "result": {"ok": True, "message": "clicked"},
         "timing_ms": {"observe": 10, "model": 500, "action": 40, "round": 550},
         "usage": {"input_tokens": 1200, "output_tokens": 80}},
        {"type": "run_end", "run_id": "r1", "ts": "2026-12-07T10:00:02.000Z",
         "outcome": "success", "exit_code": 0},
    ]  # fmt: skip
    plain = spans_of_log(records, env={})
    chat = next(s for s in plain if s.name == "chat claude-x")
    assert chat.attributes is not None
    assert chat.attributes["gen_ai.usage.input_tokens"] == 1200
    assert chat.attributes["gen_ai.usage.output_tokens"] == 80
    assert chat.attributes["gen_ai.system"] == "anthropic"
    assert "gen_ai.input.messages" not in chat.attributes
    assert chat.end_time is not None and chat.start_time is not None
    assert chat.end_time - chat.start_time == 500_000_000  # the model's 500 ms
    tool = next(s for s in plain if s.name == "execute_tool click")
    assert tool.attributes is not None
    assert tool.attributes["handrail.approval.rule"] == "action = click"
    asked = spans_of_log(
        records,
        env={
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
            "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
        },
    )
    chat = next(s for s in asked if s.name == "chat claude-x")
    assert chat.attributes is not None
    assert chat.attributes["gen_ai.provider.name"] == "anthropic"
    assert "<secret:API>" in str(chat.attributes["gen_ai.input.messages"])
    # The same ids each time: a live and a later export of one run are one trace.
    assert [(s.context.span_id, s.name) for s in plain if s.context] == [
        (s.context.span_id, s.name) for s in asked if s.context
    ]


@pytest.mark.slow
def test_a_run_with_otlp_sends_its_spans_as_it_goes_and_they_are_the_exports(
    receiver: Receiver, tmp_path: Path
) -> None:
    """``run --otlp``: the spans reach the collector while the run goes (a round at a
    time), and they are the spans a later ``handrail export`` of its log gives."""
    import dataclasses

    site = start_demo_site()
    saved = os.environ.pop("ANTHROPIC_API_KEY", None)
    try:
        settings = demo_settings(
            demo_args(tmp_path, "--approve", "none", "--no-tui"), site_url=site.url, work=tmp_path
        )
        settings = dataclasses.replace(settings, otlp=receiver.url)
        asyncio.run(run_session(settings, supervisor=ConsoleSupervisor(interactive=False)))
    finally:
        site.stop()
        if saved is not None:
            os.environ["ANTHROPIC_API_KEY"] = saved
    (log,) = (tmp_path / "logs").glob("*.jsonl")
    assert len(receiver.requests) > 3  # round by round, not one batch at the end
    live = {(s["spanId"], s["name"]) for _kind, m in receiver.requests for s in _spans(m)}
    later = {
        (f"{s.context.span_id:016x}", s.name)
        for s in spans_of_log(read_log(log).records, env={})
        if s.context
    }
    assert live == later

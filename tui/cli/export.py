"""``handrail export LOG``: a run's log as OpenTelemetry spans (core/audit/otel.py)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from core.visible import visible
from tui.exit_codes import EXIT_USAGE

DESCRIPTION = """\
Exports a run's audit log for the tools teams already use. Spans follow the OpenTelemetry
GenAI semantic conventions: one invoke_agent span per run, a chat span per model call and
an execute_tool span per action, with handrail's facts under handrail.* (the approval, the
hand-overs, the pages before and after, the outcome). The trace id is derived from the run
id (the log's run_start names it), so exporting a log twice gives the same trace.

Message contents are included only with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true,
and then as the log keeps them (secrets scrubbed). OTEL_SEMCONV_STABILITY_OPT_IN=
gen_ai_latest_experimental names the provider gen_ai.provider.name (else gen_ai.system).
The protocol is OTEL_EXPORTER_OTLP_PROTOCOL's: http/protobuf (default) or http/json.
"""
EPILOG = """\
examples:
  docker run -p 4318:4318 -p 16686:16686 jaegertracing/jaeger   # then:
  handrail export audit_logs/RUN.jsonl --otlp http://127.0.0.1:4318
  handrail export audit_logs/RUN.jsonl --otel-json run.otlp.json
"""


def add_export_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "export",
        help="a run's log as OpenTelemetry spans (OTLP), for a tracing backend",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("log", type=Path, metavar="LOG.jsonl", help="the run's audit log")
    p.add_argument(
        "--otlp",
        metavar="URL",
        help="send the spans to this OTLP/HTTP collector (its base URL, or .../v1/traces; "
        "default: $OTEL_EXPORTER_OTLP_ENDPOINT)",
    )
    p.add_argument(
        "--otel-json", type=Path, metavar="FILE", help="write the spans to FILE as OTLP JSON"
    )


def run_export(args: argparse.Namespace) -> int:
    from core.audit import read_log, verify

    endpoint = args.otlp or (
        os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        if args.otel_json is None
        else None
    )
    if not endpoint and args.otel_json is None:
        say("give --otlp URL or --otel-json FILE (or set OTEL_EXPORTER_OTLP_ENDPOINT)")
        return EXIT_USAGE
    report = verify(args.log)
    if not report.ok:
        say(f"{args.log} is not a verifiable audit log: {report.first_break or report.status}")
        return EXIT_USAGE
    from core.audit.otel import ExportError, otlp_json, send_otlp, spans_of_log

    spans = spans_of_log(read_log(args.log).records)
    if not spans:
        say(f"{args.log} has no run_start: nothing to export")
        return EXIT_USAGE
    trace = f"{spans[0].context.trace_id:032x}" if spans[0].context else "?"
    if args.otel_json is not None:
        try:
            args.otel_json.write_text(json.dumps(otlp_json(spans), indent=1) + "\n")
        except OSError as exc:
            say(f"cannot write {args.otel_json}: {exc.strerror or exc}")
            return 1
        print(visible(f"{len(spans)} spans of trace {trace} written to {args.otel_json}"))
    if endpoint:
        try:
            send_otlp(spans, endpoint)
        except ExportError as exc:
            say(str(exc))
            return 1
        print(visible(f"{len(spans)} spans of trace {trace} sent to {endpoint}"))
    return 0


def say(text: str) -> None:
    print(visible(f"handrail export: {text}"), file=sys.stderr)

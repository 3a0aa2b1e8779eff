"""``handrail export LOG``: a run's log as OpenTelemetry spans (core/audit/otel.py) or as
HAR 1.2 of what its pages fetched (core/audit/har.py)."""

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

--har writes HAR 1.2 of every request the run's pages, frames and workers made, as the log
recorded them: each entry with its page, its round (_handrail.round) and what the network
guard did (_handrail.guard: allowed, blocked or not checked). The log keeps no headers and
no bodies; a run started with --har also wrote its own network.har, with headers (and, with
--har-content embed, bodies), in its run folder.
"""
EPILOG = """\
examples:
  docker run -p 4318:4318 -p 16686:16686 jaegertracing/jaeger   # then:
  handrail export audit_logs/RUN.jsonl --otlp http://127.0.0.1:4318
  handrail export audit_logs/RUN.jsonl --otel-json run.otlp.json
  handrail export audit_logs/RUN.jsonl --har run.har      # open in DevTools' Network tab
"""


def add_export_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "export",
        help="a run's log as OpenTelemetry spans (OTLP) or HAR, for the tools teams use",
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
    p.add_argument(
        "--har", type=Path, metavar="FILE", help="write the requests the pages made as HAR 1.2"
    )


def run_export(args: argparse.Namespace) -> int:
    from core.audit import read_log, verify

    endpoint = args.otlp or (
        os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        if args.otel_json is None
        else None
    )
    if not endpoint and args.otel_json is None and args.har is None:
        say("give --otlp URL, --otel-json FILE or --har FILE (or set OTEL_EXPORTER_OTLP_ENDPOINT)")
        return EXIT_USAGE
    report = verify(args.log)
    if not report.ok:
        say(f"{args.log} is not a verifiable audit log: {report.first_break or report.status}")
        return EXIT_USAGE
    if args.har is not None:
        done = export_har(args.log, args.har)
        if done or (args.otel_json is None and not endpoint):
            return done
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


def export_har(log: Path, out: Path) -> int:
    """Write the HAR of ``log`` (verified already) to ``out``; 0, or 1 when it cannot."""
    from core.audit import read_log
    from core.audit.har import handrail_version, har_log
    from core.audit.records import RequestsRecord, RunStartRecord, record_of

    pages: list[dict[str, object]] = []
    entries: list[dict[str, object]] = []
    run_id = ""
    for raw in read_log(log).records:
        record = record_of(raw)
        if isinstance(record, RunStartRecord):
            run_id = record.run_id
        elif isinstance(record, RequestsRecord):
            pages += [dict(p) for p in record.pages]
            entries += [dict(e) for e in record.entries]
    comment = f"run {run_id} of handrail, from its audit log {log.name} (no headers or bodies)"
    doc = har_log(pages, entries, version=handrail_version(), comment=comment)
    try:
        out.write_text(json.dumps(doc, ensure_ascii=False) + "\n")
    except OSError as exc:
        say(f"cannot write {out}: {exc.strerror or exc}")
        return 1
    blocked = sum(1 for e in entries if e.get("guard") == "blocked")
    print(
        visible(
            f"{len(entries)} requests on {len(pages)} pages ({blocked} blocked by the guard) "
            f"written to {out}"
        )
    )
    return 0


def say(text: str) -> None:
    print(visible(f"handrail export: {text}"), file=sys.stderr)

"""HAR of what a run's pages fetched: ``run --har`` live, ``export --har`` from the log.

The HAR files are checked against the HAR 1.2 schema (har-1.2.schema.json, written from the
spec's field tables) and their entries against the fixture servers' own request logs: what
the servers received is in the HAR with its status, page and round, and what the guard
blocked is there, marked blocked, and never reached its server.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import jsonschema
import pytest

from core.audit import read_log, verify
from core.audit.har import credential_name, har_log, redact_headers, redact_url
from core.run.session import RunSettings, run_session
from core.secrets import REDACTED
from tests.audit.test_otel_export import export
from tests.helpers.agent_run import Supervisor
from tests.helpers.site_server import FixtureSite

SCHEMA = json.loads((Path(__file__).with_name("har-1.2.schema.json")).read_text())
CANARY = "har-canary-5Qz8Lm2W"


def valid_har(doc: dict[str, Any]) -> dict[str, Any]:
    jsonschema.validate(doc, SCHEMA)
    pages = {p["id"] for p in doc["log"]["pages"]}
    for entry in doc["log"]["entries"]:
        assert entry.get("pageref", next(iter(pages), None)) in pages, entry
    return doc


# -- fast: what an entry may carry ------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "credential"),
    [
        ("password", True),
        ("user[password]", True),
        ("j_password", True),
        ("cardNumber", True),
        ("cc-number", True),
        ("cvc", True),
        ("otp_code", True),
        ("access_token", True),
        ("apiKey", True),
        ("shipping", False),
        ("q", False),
        ("spinach", False),
        ("bypass", False),
        ("page", False),
    ],
)
def test_credential_names_are_words_not_substrings(name: str, credential: bool) -> None:
    assert credential_name(name) is credential


def test_a_url_keeps_no_credentials() -> None:
    url = "https://ada:hunter2@shop.test/cb?code=AUTH-777&state=x&q=shoes#access_token=TKN-9"
    kept = redact_url(url)
    for leaked in ("ada", "hunter2", "AUTH-777", "TKN-9"):
        assert leaked not in kept
    assert kept == f"https://shop.test/cb?code={quote(REDACTED)}&state=x&q=shoes"
    assert len(redact_url("https://a.test/?q=" + "x" * 100_000)) <= 4096


def test_credential_headers_are_replaced_whatever_their_case() -> None:
    headers = redact_headers(
        {"Authorization": "Bearer t", "cookie": "sid=1", "Set-Cookie": "a=1\nb=2", "Accept": "*/*"}
    )
    assert headers == [
        ["Authorization", REDACTED],
        ["cookie", REDACTED],
        ["Set-Cookie", REDACTED],
        ["Set-Cookie", REDACTED],
        ["Accept", "*/*"],
    ]


def test_entries_of_any_shape_make_a_valid_har() -> None:
    """A log is evidence from elsewhere: entries missing fields or with wrong types still
    give a valid HAR (with defaults), never an exception."""
    entries: list[dict[str, Any]] = [
        {"method": "GET", "url": "http://a.test/", "start": "2026-12-07T10:00:00.000Z"},
        {
            "method": "POST",
            "url": "http://a.test/p?x=1",
            "start": "2026-12-07T10:00:01.000Z",
            "status": "200",
            "timings": {"send": -5, "wait": "x"},
            "page": "page_404",
            "guard": "maybe",
            "request_headers": [["a"], "b", ["c", 1]],
            "post_data": {"mime": "text/plain", "text": "hi"},
            "content": {"text": "aGk=", "encoding": "base64"},
        },
    ]
    doc = valid_har(
        har_log([{"id": "page_1", "start": "2026-12-07T10:00:00.000Z"}], entries, version="t")
    )
    _first, second = doc["log"]["entries"]
    assert second["response"]["status"] == 0 and second["_handrail"]["guard"] == "not checked"
    assert "pageref" not in second  # a page the HAR does not have is not named
    assert second["request"]["queryString"] == [{"name": "x", "value": "1"}]
    assert second["request"]["headers"] == [{"name": "c", "value": "1"}]


# -- slow: a real run in Chromium -------------------------------------------------------


@pytest.fixture(scope="module")
def sites() -> Iterator[tuple[FixtureSite, FixtureSite, FixtureSite]]:
    """Three sites of this module's own (their request logs hold only this module's runs):
    the run's, another allowed one (a frame), and one outside the allowlist."""
    made = [FixtureSite(host) for host in ("127.0.0.1", "127.0.0.2", "127.0.0.3")]
    yield made[0], made[1], made[2]
    for site in made:
        site.stop()


def page_url(sites: tuple[FixtureSite, FixtureSite, FixtureSite]) -> str:
    home, other, away = sites
    frame = other.url("/har/frame.html")
    outside = away.url("/har/dot.svg?outside")
    return home.url(f"/har/page.html?frame={quote(frame, safe='')}&away={quote(outside, safe='')}")


def run_settings(
    tmp_path: Path, sites: tuple[FixtureSite, FixtureSite, FixtureSite], **kw: Any
) -> RunSettings:
    home, other, _away = sites
    plan = tmp_path / "plan.jsonl"
    plan.write_text(
        "\n".join(
            json.dumps(step)
            for step in (
                {"tool": "type", "target": "Note", "input": {"text": "<secret:TOKEN>"}},
                {"tool": "click", "target": "Send note"},
                {"tool": "navigate", "input": {"url": page_url(sites)}},
                {"tool": "type", "target": "Query", "input": {"text": "<secret:TOKEN>"}},
                {"tool": "click", "target": "Search"},
                {"tool": "finish", "input": {"success": True, "answer": "searched"}},
            )
        )
        + "\n"
    )
    base: dict[str, Any] = {
        "task": "Send a note, then search",
        "start_url": page_url(sites),
        "model_spec": f"scripted:{plan}",
        "approve": "none",
        "headless": True,
        "profile": tmp_path / "profile",
        "audit_dir": tmp_path / "logs",
        "allow_domains": (f"127.0.0.1:{home.port}", f"127.0.0.2:{other.port}"),
        "secrets": ("TOKEN=HAR_TEST_TOKEN",),
    }
    return RunSettings(**(base | kw))


def only_log(tmp_path: Path) -> Path:
    (log,) = (tmp_path / "logs").glob("*.jsonl")
    return log


def export_har(log: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return export(str(log), "--har", str(out))


def server_view(site: FixtureSite) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in site.received]


def har_view(doc: dict[str, Any], site: FixtureSite) -> list[tuple[str, str]]:
    out = []
    for entry in doc["log"]["entries"]:
        parts = urlsplit(entry["request"]["url"])
        if f"{parts.hostname}:{parts.port}" == f"{site.host}:{site.port}":
            out.append((entry["request"]["method"], parts.path))
    return out


@pytest.fixture(scope="module")
async def strict_run(
    tmp_path_factory: pytest.TempPathFactory,
    sites: tuple[FixtureSite, FixtureSite, FixtureSite],
) -> Path:
    """One ``run --har-content embed`` in strict mode: the run folder's log."""
    tmp = tmp_path_factory.mktemp("har-strict")
    for site in sites:
        site.clear()
    os.environ["HAR_TEST_TOKEN"] = CANARY
    try:
        settings = run_settings(tmp, sites, har=True, har_content="embed")
        finished = await run_session(settings, supervisor=Supervisor())
    finally:
        del os.environ["HAR_TEST_TOKEN"]
    assert finished.outcome == "success", finished
    return tmp


@pytest.mark.slow
async def test_every_request_a_server_received_is_in_the_har_and_the_blocked_never_arrived(
    strict_run: Path, sites: tuple[FixtureSite, FixtureSite, FixtureSite]
) -> None:
    home, other, away = sites
    log = only_log(strict_run)
    live = valid_har(json.loads((log.with_suffix("") / "network.har").read_text()))
    entries = live["log"]["entries"]
    # What each allowed server received is what the HAR lists for it, in number and kind.
    assert sorted(har_view(live, home)) == sorted(server_view(home))
    assert sorted(har_view(live, other)) == sorted(server_view(other))
    assert ("GET", "/har/frame.html") in har_view(live, other)  # another site's frame
    # Every request ended while the run went on (a frame in a process of its own reports
    # its document's end on its own session: still matched to where it started).
    assert not [e for e in entries if "still open" in e["_handrail"].get("error", "")]
    # The host outside the allowlist: requested by the page, blocked, never reached.
    assert server_view(away) == []
    outside = [e for e in entries if urlsplit(e["request"]["url"]).hostname == "127.0.0.3"]
    assert outside and all(e["_handrail"]["guard"] == "blocked" for e in outside)
    assert all(e["response"]["status"] == 0 and e["response"]["_error"] for e in outside)
    allowed = [e for e in entries if e not in outside]
    assert allowed and all(e["_handrail"]["guard"] == "allowed" for e in allowed)
    # Statuses as the server gave them: the missing picture, the redirect and its target.
    by_path = {urlsplit(e["request"]["url"]).path: e for e in entries}
    assert by_path["/har/missing.png"]["response"]["status"] == 404
    assert by_path["/__redirect"]["response"]["status"] == 302
    assert by_path["/__redirect"]["response"]["redirectURL"].endswith("/har/data.json")
    assert by_path["/har/data.json"]["response"]["content"]["text"].startswith('{"items"')
    # Each entry belongs to the round it started in and to the page it was made by.
    assert by_path["/har/post"]["_handrail"]["round"] == 2
    assert by_path["/har/result.html"]["_handrail"]["round"] == 5
    pages = {p["id"]: p for p in live["log"]["pages"]}
    assert (
        pages[by_path["/har/result.html"]["pageref"]]["title"]
        .split("?")[0]
        .endswith("/har/result.html")
    )
    assert len(pages) == 4  # the page, the note's answer, the page again, the results


@pytest.mark.slow
async def test_no_secret_and_no_credential_reaches_the_har_the_log_or_the_export(
    strict_run: Path, sites: tuple[FixtureSite, FixtureSite, FixtureSite], tmp_path: Path
) -> None:
    home, _other, _away = sites
    log = only_log(strict_run)
    # The secret did reach the site, in the body of the note and in the search's URL ...
    assert home.posts("/har/post")[0].form["note"] == [CANARY]
    searched = [r for r in home.received if r.path == "/har/result.html"]
    assert searched and searched[0].query["q"] == [CANARY]
    # ... and nowhere in what the run wrote: the HAR (URL, body sent, body received), the
    # log, the export.
    out = tmp_path / "export.har"
    assert export_har(log, out).returncode == 0
    for path in (log, log.with_suffix("") / "network.har", out):
        text = path.read_text()
        assert CANARY not in text and quote(CANARY) not in text, path
        assert "page-made-credential" not in text, path
    live = json.loads((log.with_suffix("") / "network.har").read_text())
    by_path = {urlsplit(e["request"]["url"]).path: e for e in live["log"]["entries"]}
    post = by_path["/har/post"]
    assert (
        post["request"]["postData"]["text"] == f"note={quote(REDACTED)}"
        or REDACTED in post["request"]["postData"]["text"]
    )
    assert REDACTED in post["response"]["content"]["text"]  # the page echoed it back
    assert parse_qs(urlsplit(by_path["/har/result.html"]["request"]["url"]).query)["q"] == [
        REDACTED
    ]
    fetched = by_path["/__redirect"]["request"]["headers"]
    assert {"name": "Authorization", "value": REDACTED} in fetched


@pytest.mark.slow
async def test_the_export_lists_what_the_live_har_lists_and_verify_covers_the_file(
    strict_run: Path, tmp_path: Path
) -> None:
    log = only_log(strict_run)
    har_file = log.with_suffix("") / "network.har"
    out = tmp_path / "export.har"
    done = export_har(log, out)
    assert done.returncode == 0, done.stderr
    assert "requests on 4 pages" in done.stdout
    exported = valid_har(json.loads(out.read_text()))
    live = json.loads(har_file.read_text())

    def brief(doc: dict[str, Any]) -> list[tuple[Any, ...]]:
        return [
            (
                e["request"]["method"],
                e["request"]["url"],
                e["response"]["status"],
                e.get("pageref"),
                e["_handrail"]["round"],
                e["_handrail"]["guard"],
            )
            for e in doc["log"]["entries"]
        ]

    assert brief(exported) == brief(live)
    assert all(e["request"]["headers"] == [] for e in exported["log"]["entries"])
    # run_end keeps the live file's digest: verify says it matches, and catches an edit.
    end = read_log(log).records[-1]
    assert end["har"]["file"] == f"{log.with_suffix('').name}/network.har"
    report = verify(log)
    assert report.status == "sealed" and any("matches its sha256" in n for n in report.notes)
    original = har_file.read_bytes()
    try:
        har_file.write_bytes(original.replace(b'"status": 404', b'"status": 200'))
        broken = verify(log)
        assert broken.status == "broken" and "HAR file was changed" in (broken.first_break or "")
        assert export_har(log, tmp_path / "again.har").returncode == 2  # not verifiable
    finally:
        har_file.write_bytes(original)


@pytest.mark.slow
async def test_in_documents_mode_subresources_are_not_checked_and_say_so(
    tmp_path: Path, sites: tuple[FixtureSite, FixtureSite, FixtureSite]
) -> None:
    _home, _other, away = sites
    away.clear()
    os.environ["HAR_TEST_TOKEN"] = CANARY
    try:
        settings = run_settings(tmp_path, sites, network="documents")
        await run_session(settings, supervisor=Supervisor())
    finally:
        del os.environ["HAR_TEST_TOKEN"]
    log = only_log(tmp_path)
    assert not (log.with_suffix("") / "network.har").exists()  # no --har: the log only
    out = tmp_path / "export.har"
    assert export_har(log, out).returncode == 0
    entries = valid_har(json.loads(out.read_text()))["log"]["entries"]
    outside = [e for e in entries if urlsplit(e["request"]["url"]).hostname == "127.0.0.3"]
    # A picture from outside the allowlist: documents mode lets it through, unchecked.
    assert outside and all(e["_handrail"]["guard"] == "not checked" for e in outside)
    assert ("GET", "/har/dot.svg") in server_view(away)
    documents = [e for e in entries if e["_handrail"]["type"] == "Document"]
    assert documents and all(e["_handrail"]["guard"] == "allowed" for e in documents)

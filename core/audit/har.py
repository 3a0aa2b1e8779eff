"""HAR 1.2 of what a run's pages fetched, from handrail's own network entries.

A run records every HTTP(S) request its pages, frames and workers made (core/run/netlog.py)
as *entries*: plain dicts, the same shape in the audit log's ``requests`` records and in
the live ``network.har`` of ``run --har``. The log keeps the short form (no headers, no
bodies); the live file adds the headers and, with ``--har-content embed``, the bodies. One
function, :func:`har_log`, turns either into HAR 1.2, so an export of a log and the live
file of the same run list the same requests with the same pages and rounds.

An entry (every key but ``method``, ``url`` and ``start`` may be missing)::

    round       the round in which the request started (0: before the first round)
    page        the HAR page (a document the tab's main frame loaded) it belongs to
    method, url, type (Chromium's resource type), start (ISO time), time_ms
    status, status_text, http, mime, ip, redirect, from_cache
    timings     HAR's blocked/dns/connect/ssl/send/wait/receive, in ms
    size        bytes on the wire; body_size: bytes of content
    guard       what the network guard did: "allowed", "blocked" or "not checked"
    error       why it failed (Chromium's net error)
    handover    sent while the page was handed to the person
    -- the live file only --
    request_headers, response_headers: [[name, value], ...]
    post_data   {"mime", "text"};  content: {"text", "encoding"?} or {"comment"}

What the entries may carry is decided where they are made: :func:`redact_url` and
:func:`redact_headers` below, then the run's secret scrubbing (the audit writer's).
"""

from __future__ import annotations

import importlib.metadata
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

from core.secrets import REDACTED

HAR_VERSION = "1.2"
GUARD_WORDS = ("allowed", "blocked", "not checked")

CREDENTIAL_HEADERS = frozenset({"cookie", "set-cookie", "authorization", "proxy-authorization"})
"""Headers whose values are a person's logins: never written, whatever the run's secrets."""

# Words in a form field's or query parameter's name that say its value is a credential. A
# name is split into words (camelCase, snake_case, brackets), so "shipping" is not "pin".
_CREDENTIAL_WORDS = frozenset(
    {
        "password", "passwd", "pass", "pwd", "passcode", "passphrase", "pin", "otp", "totp",
        "mfa", "code", "cvc", "cvv", "csc", "card", "cardnumber", "cc", "ccnumber", "secret",
        "token", "jwt", "apikey", "key", "ssn", "session", "sid", "auth", "signature", "sig",
    }
)  # fmt: skip
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_TIMING_KEYS = ("blocked", "dns", "connect", "ssl", "send", "wait", "receive")
MAX_URL = 4096
"""A URL is kept to this many characters (a page can make URLs of megabytes)."""


def credential_name(name: str) -> bool:
    """Whether a field or parameter ``name`` says its value is a credential."""
    words = [w.lower() for w in _WORD.findall(name)]
    joined = "".join(words)
    return joined in _CREDENTIAL_WORDS or any(w in _CREDENTIAL_WORDS for w in words)


def redact_query(query: str) -> str:
    """``query`` (``a=1&b=2``) with the values of credential-named fields replaced."""
    if not query:
        return query
    parts = []
    for part in query.split("&"):
        name, sep, _value = part.partition("=")
        plain_name = dict(parse_qsl(f"{name}=", keep_blank_values=True))
        shown = next(iter(plain_name), name)
        parts.append(f"{name}={quote(REDACTED)}" if sep and credential_name(shown) else part)
    return "&".join(parts)


def redact_url(url: str) -> str:
    """``url`` as an entry keeps it: user and password dropped, credential-named query
    values replaced, the fragment dropped (it never leaves the browser, and sign-ins put
    tokens there), and no longer than :data:`MAX_URL`."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url[:MAX_URL]
    netloc = parts.netloc.rpartition("@")[2]
    kept = urlunsplit((parts.scheme, netloc, parts.path, redact_query(parts.query), ""))
    return kept if len(kept) <= MAX_URL else kept[: MAX_URL - 1] + "…"


def redact_headers(headers: Mapping[str, Any] | Iterable[Mapping[str, Any]]) -> list[list[str]]:
    """Headers as ``[[name, value], ...]`` with credential headers' values replaced.

    Accepts CDP's ``{name: value}`` (values joined by newlines when repeated) or a list of
    ``{"name", "value"}``."""
    pairs: list[tuple[str, str]] = []
    if isinstance(headers, Mapping):
        for name, value in headers.items():
            pairs += [(str(name), line) for line in str(value).split("\n")]
    else:
        pairs = [(str(h.get("name", "")), str(h.get("value", ""))) for h in headers]
    return [
        [name, REDACTED if name.lower() in CREDENTIAL_HEADERS else value] for name, value in pairs
    ]


def redact_form(text: str, mime: str) -> str:
    """A request body as an entry keeps it: a form's credential-named fields replaced."""
    if "application/x-www-form-urlencoded" in mime.lower():
        return redact_query(text)
    return text


def handrail_version() -> str:
    """The installed handrail's version (HAR's ``creator``)."""
    try:
        return importlib.metadata.version("handrail")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def har_log(
    pages: Sequence[Mapping[str, Any]],
    entries: Sequence[Mapping[str, Any]],
    *,
    version: str,
    comment: str = "",
) -> dict[str, Any]:
    """The HAR 1.2 document (``{"log": ...}``) of ``pages`` and ``entries``.

    Entries are in the order they started; each names its page (``pageref``) when it has
    one, and carries handrail's facts under ``_handrail``: the round, what the network
    guard did, whether it was sent during a hand-over, Chromium's resource type and error.
    """
    known = {str(p.get("id")) for p in pages}
    log: dict[str, Any] = {
        "version": HAR_VERSION,
        "creator": {"name": "handrail", "version": version},
        "pages": [_page(p) for p in pages],
        "entries": [
            _entry(e, known) for e in sorted(entries, key=lambda e: str(e.get("start", "")))
        ],
    }
    if comment:
        log["comment"] = comment
    return {"log": log}


def _page(page: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "startedDateTime": str(page.get("start", "")),
        "id": str(page.get("id", "")),
        "title": str(page.get("url", "")),
        "pageTimings": {"onContentLoad": -1, "onLoad": -1},
        "_handrail": {"round": _int(page.get("round"), 0)},
    }


def _entry(e: Mapping[str, Any], pages: set[str]) -> dict[str, Any]:
    url = str(e.get("url", ""))
    http = _http_version(str(e.get("http", "")))
    timings = _timings(e.get("timings"), _number(e.get("time_ms"), 0.0))
    out: dict[str, Any] = {}
    if str(e.get("page")) in pages:
        out["pageref"] = str(e["page"])
    out |= {
        "startedDateTime": str(e.get("start", "")),
        "time": round(sum(v for k, v in timings.items() if v > 0 and k != "ssl"), 1),
        "request": _request(e, url, http),
        "response": _response(e, http),
        "cache": {},
        "timings": timings,
    }
    if isinstance(e.get("ip"), str) and e["ip"]:
        out["serverIPAddress"] = e["ip"].strip("[]")
    facts: dict[str, Any] = {
        "round": _int(e.get("round"), 0),
        "guard": e.get("guard") if e.get("guard") in GUARD_WORDS else "not checked",
        "type": str(e.get("type", "")),
    }
    for key in ("error", "handover", "from_cache"):
        if e.get(key):
            facts[key] = e[key]
    out["_handrail"] = facts
    if isinstance(e.get("size"), int):
        out["_transferSize"] = e["size"]
    return out


def _request(e: Mapping[str, Any], url: str, http: str) -> dict[str, Any]:
    query = urlsplit(url).query if "?" in url else ""
    request: dict[str, Any] = {
        "method": str(e.get("method", "GET")),
        "url": url,
        "httpVersion": http,
        "cookies": [],
        "headers": _headers(e.get("request_headers")),
        "queryString": [
            {"name": n, "value": v} for n, v in parse_qsl(query, keep_blank_values=True)
        ],
        "headersSize": -1,
        "bodySize": -1,
    }
    post = e.get("post_data")
    if isinstance(post, Mapping):
        text = str(post.get("text", ""))
        request["postData"] = {"mimeType": str(post.get("mime", "")), "text": text}
        request["bodySize"] = len(text.encode())
    return request


def _response(e: Mapping[str, Any], http: str) -> dict[str, Any]:
    content: dict[str, Any] = {
        "size": _int(e.get("body_size"), 0),
        "mimeType": str(e.get("mime", "")),
    }
    body = e.get("content")
    if isinstance(body, Mapping):
        if isinstance(body.get("text"), str):
            content["text"] = body["text"]
            if body.get("encoding") == "base64":
                content["encoding"] = "base64"
        if isinstance(body.get("comment"), str):
            content["comment"] = body["comment"]
    response: dict[str, Any] = {
        "status": _int(e.get("status"), 0),
        "statusText": str(e.get("status_text", "")),
        "httpVersion": http,
        "cookies": [],
        "headers": _headers(e.get("response_headers")),
        "content": content,
        "redirectURL": str(e.get("redirect", "")),
        "headersSize": -1,
        "bodySize": -1,
    }
    if e.get("error"):
        response["_error"] = str(e["error"])
    return response


def _headers(value: object) -> list[dict[str, str]]:
    if not isinstance(value, list):
        return []
    return [
        {"name": str(pair[0]), "value": str(pair[1])}
        for pair in value
        if isinstance(pair, list | tuple) and len(pair) == 2
    ]


def _timings(value: object, total: float) -> dict[str, float]:
    """HAR's timings: ``send``, ``wait`` and ``receive`` always; the others ``-1`` when
    they did not apply. Without Chromium's timing, the whole time is ``receive``."""
    got = value if isinstance(value, Mapping) else {}
    out = {k: _number(got.get(k), -1.0) for k in _TIMING_KEYS}
    for k in ("send", "wait", "receive"):
        out[k] = max(0.0, out[k])
    if not got:
        out["receive"] = max(0.0, total)
    return out


def _http_version(protocol: str) -> str:
    p = protocol.lower()
    if p.startswith("http/"):
        return p.upper()
    return p or "HTTP/1.1"


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _number(value: object, default: float) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return default

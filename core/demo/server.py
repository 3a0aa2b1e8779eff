"""Rail & Co, the demo booking site: a small loopback-only HTTP server with in-memory state.

Pages are HTML templates in ``site/`` filled in here (``{{name}}`` placeholders, values
escaped before they are inserted); behaviour lives in one JavaScript module per page. The
server keeps what it was told (searches, bookings, passenger details, payments) in memory
for the life of one :class:`DemoSite`, and ``GET /api/state`` shows it as JSON so tests can
assert what the site actually received. Card numbers and passwords are never stored.
"""

from __future__ import annotations

import copy
import hashlib
import html
import json
import re
import threading
from dataclasses import dataclass, field
from datetime import date, timedelta
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from core.demo.timetable import (
    COACH,
    MAX_PASSENGERS,
    RAILCARDS,
    Journey,
    Station,
    clock,
    euros,
    fare_cents,
    find_station,
    format_day,
    journey_by_id,
    journeys_for,
    seat_map,
    select_label,
    suggest_stations,
)

_MAX_BODY = 64 * 1024
_BOOKING_WINDOW_DAYS = 365
_STATIC_TYPES = {
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
}
_PAGE_SCRIPTS = {"search", "results", "seats", "passenger", "payment", "signin"}
_STEPS = ("Search", "Journey", "Seat", "Passenger", "Payment", "Confirmation")
_NAME = re.compile(r"^[^\W\d_]+(?:['. -]+[^\W\d_]+)*\.?$")
_EMAIL = re.compile(r"^[^\s@]+@[^\s@]+\.[^\s@]{2,}$")
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


def _site_file(name: str) -> str:
    return resources.files("core.demo").joinpath("site", name).read_text(encoding="utf-8")


def _fill(template: str, values: dict[str, str]) -> str:
    """Replace every ``{{name}}``; values must already be safe HTML. A missing one raises KeyError."""
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


@dataclass(slots=True)
class _Response:
    status: int
    body: bytes = b""
    content_type: str = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)


def _redirect(location: str) -> _Response:
    return _Response(HTTPStatus.SEE_OTHER, headers={"Location": location})


def _json(value: Any, status: int = HTTPStatus.OK) -> _Response:
    return _Response(status, json.dumps(value).encode(), "application/json")


class _App:
    """The site's routes and state; the HTTP handler only translates requests to calls here."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state: dict[str, Any] = {
            "searches": [],
            "bookings": [],
            "account": {"signed_in_as": None, "sign_in_attempts": 0},
        }

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return copy.deepcopy(self._state)

    # -- routing -----------------------------------------------------------------------

    def handle(self, method: str, target: str, body: bytes, content_type: str) -> _Response:
        parts = urlsplit(target)
        path = parts.path
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        form: dict[str, str] = {}
        if method == "POST" and content_type.startswith("application/x-www-form-urlencoded"):
            form = {k: v[-1] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}

        if method == "GET":
            if path == "/":
                return self._search_page(query, {})
            if path == "/results":
                return self._results(query)
            if path.startswith("/journey/"):
                return self._journey(path.removeprefix("/journey/"), query)
            if path.startswith("/seats/"):
                return self._seats(path.removeprefix("/seats/"), query)
            if path == "/passenger":
                return self._passenger(query.get("booking", ""))
            if path == "/payment":
                return self._payment_page(query.get("booking", ""), {}, "")
            if path == "/confirmation":
                return self._confirmation(query.get("booking", ""))
            if path == "/signin":
                return self._signin_page("")
            if path == "/signout":
                with self._lock:
                    self._state["account"]["signed_in_as"] = None
                return _redirect("/")
            if path == "/api/stations":
                names = suggest_stations(query.get("q", ""))
                return _json([{"name": s.name, "code": s.code} for s in names])
            if path == "/api/state":
                return _json(self.snapshot())
            if path == "/favicon.ico":
                return _redirect("/static/favicon.svg")
            if path.startswith("/static/"):
                return self._static(path.removeprefix("/static/"))
        elif method == "POST":
            if path == "/booking":
                return self._create_booking(form)
            if path.startswith("/api/booking/") and path.endswith("/passenger"):
                booking_id = path.removeprefix("/api/booking/").removesuffix("/passenger")
                return self._save_passenger(booking_id, body)
            if path == "/payment":
                return self._pay(form)
            if path == "/signin":
                return self._sign_in(form)
        else:
            return _Response(HTTPStatus.METHOD_NOT_ALLOWED, b"", "text/plain")
        return self._not_found("Page not found", "There is no page at this address.")

    # -- rendering helpers -------------------------------------------------------------

    def _page(
        self, page: str, title: str, content: str, *, step: int | None = None, status: int = 200
    ) -> _Response:
        with self._lock:
            signed_in = self._state["account"]["signed_in_as"]
        account = (
            f'<span>Signed in as {_e(signed_in)}</span><a href="/signout">Sign out</a>'
            if signed_in
            else '<a href="/signin">Sign in</a>'
        )
        progress = ""
        if step is not None:
            items = []
            for i, name in enumerate(_STEPS):
                attrs = ' aria-current="step"' if i == step else ' class="done"' if i < step else ""
                items.append(f"<li{attrs}>{name}</li>")
            progress = f'<ol class="progress" aria-label="Booking steps">{"".join(items)}</ol>'
        script = (
            f'<script type="module" src="/static/{page}.js"></script>'
            if page in _PAGE_SCRIPTS
            else ""
        )
        document = _fill(
            _site_file("layout.html"),
            {
                "title": _e(title),
                "page": page,
                "account": account,
                "progress": progress,
                "content": content,
                "script": script,
            },
        )
        return _Response(status, document.encode())

    def _not_found(self, heading: str, message: str) -> _Response:
        content = _fill(
            _site_file("not_found.html"), {"heading": _e(heading), "message": _e(message)}
        )
        return self._page("not_found", heading, content, status=HTTPStatus.NOT_FOUND)

    def _static(self, name: str) -> _Response:
        suffix = name[name.rfind(".") :] if "." in name else ""
        if "/" in name or suffix not in _STATIC_TYPES:
            return self._not_found("Page not found", "There is no file at this address.")
        try:
            data = resources.files("core.demo").joinpath("site", name).read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            return self._not_found("Page not found", "There is no file at this address.")
        return _Response(HTTPStatus.OK, data, _STATIC_TYPES[suffix])

    def _summary_list(self, booking: dict[str, Any]) -> str:
        rows = [
            ("Journey", f"{booking['origin']} → {booking['destination']}"),
            ("Date", booking["day"]),
            ("Train", f"{booking['train']}, {booking['departure']} → {booking['arrival']}"),
            ("Seat", ", ".join(f"Coach {COACH}, seat {s}" for s in booking["seats"])),
            ("Passengers", str(booking["passengers"])),
        ]
        passenger = booking.get("passenger")
        if passenger:
            rows.append(("Lead passenger", f"{passenger['first_name']} {passenger['last_name']}"))
            rows.append(("Railcard", RAILCARDS[passenger["railcard"]][0]))
        cells = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in rows)
        total = f'<dt>Total</dt><dd class="total">{_e(euros(booking["total_cents"]))}</dd>'
        return f'<h2>Your trip</h2><dl class="summary-list">{cells}{total}</dl>'

    def _booking(self, booking_id: str) -> dict[str, Any] | None:
        with self._lock:
            found = next((b for b in self._state["bookings"] if b["id"] == booking_id), None)
            return copy.deepcopy(found)

    # -- search and results ------------------------------------------------------------

    def _search_page(self, values: dict[str, str], errors: dict[str, str]) -> _Response:
        pax = values.get("pax", "1")
        options = "".join(
            f'<option value="{n}"{" selected" if str(n) == pax else ""}>{_plural(n, "passenger")}</option>'
            for n in range(1, MAX_PASSENGERS + 1)
        )
        content = _fill(
            _site_file("search.html"),
            {
                "from": _e(values.get("from", "")),
                "to": _e(values.get("to", "")),
                "date": _e(values.get("date", "")),
                "pax_options": options,
                "from_error": _e(errors.get("from", "")),
                "to_error": _e(errors.get("to", "")),
                "date_error": _e(errors.get("date", "")),
            },
        )
        return self._page("search", "Search trains", content, step=0)

    def _parse_search(
        self, query: dict[str, str]
    ) -> tuple[dict[str, str], tuple[Station, Station, date, int] | None]:
        errors: dict[str, str] = {}
        origin = find_station(query.get("from", ""))
        destination = find_station(query.get("to", ""))
        if origin is None:
            errors["from"] = "Choose a departure station from the suggestions."
        if destination is None:
            errors["to"] = "Choose an arrival station from the suggestions."
        elif origin == destination:
            errors["to"] = "Arrival and departure stations must be different."
        day: date | None = None
        try:
            day = date.fromisoformat(query.get("date", "").strip())
        except ValueError:
            errors["date"] = "Write the date as YYYY-MM-DD, for example 2026-12-04."
        if day is not None:
            if day < date.today():
                errors["date"] = "That date has passed. Choose today or a later day."
            elif day > date.today() + timedelta(days=_BOOKING_WINDOW_DAYS):
                errors["date"] = "Bookings open 12 months ahead. Choose an earlier day."
        pax = int(query["pax"]) if query.get("pax", "1").isdigit() else 0
        if not 1 <= pax <= MAX_PASSENGERS:
            errors["pax"] = f"Choose between 1 and {MAX_PASSENGERS} passengers."
        if errors or origin is None or destination is None or day is None:
            return errors, None
        return errors, (origin, destination, day, pax)

    def _results(self, query: dict[str, str]) -> _Response:
        errors, parsed = self._parse_search(query)
        if parsed is None:
            return self._search_page(query, errors)
        origin, destination, day, pax = parsed
        with self._lock:
            self._state["searches"].append(
                {"from": origin.name, "to": destination.name, "date": day.isoformat(), "pax": pax}
            )
        journeys = journeys_for(origin, destination, day)
        lowest = min(journeys, key=lambda j: j.price_cents)
        rows = "\n".join(self._result_row(j, pax, j is lowest) for j in journeys)
        modify = "/?" + urlencode(
            {"from": origin.name, "to": destination.name, "date": day.isoformat(), "pax": pax}
        )
        content = _fill(
            _site_file("results.html"),
            {
                "origin": _e(origin.name),
                "destination": _e(destination.name),
                "day": _e(format_day(day)),
                "passengers": _e(_plural(pax, "passenger")),
                "modify_href": _e(modify),
                "count": str(len(journeys)),
                "rows": rows,
            },
        )
        return self._page("results", f"{origin.name} to {destination.name}", content, step=0)

    def _result_row(self, j: Journey, pax: int, lowest: bool) -> str:
        tag = '<span class="tag">Lowest fare of the day</span>' if lowest else ""
        total = j.price_cents * pax
        return (
            f'<li class="journey" data-departure="{j.departure}" data-price="{total}"'
            f' data-duration="{j.duration}">'
            f'<div><div class="times">{clock(j.departure)} → {_clock_html(j.arrival)}</div>'
            f'<div class="meta">Train {_e(j.train)}</div></div>'
            f'<div class="meta">{j.duration_text()} · {j.changes_text()}{tag}</div>'
            f'<div class="price">{euros(total)}</div>'
            f'<a class="button primary" href="/journey/{j.id}?pax={pax}"'
            f' aria-label="{_e(select_label(j, pax))}">Select</a></li>'
        )

    # -- journey and seats -------------------------------------------------------------

    @staticmethod
    def _pax(query: dict[str, str]) -> int:
        value = query.get("pax", "1")
        return min(max(int(value), 1), MAX_PASSENGERS) if value.isdigit() else 1

    def _journey(self, journey_id: str, query: dict[str, str]) -> _Response:
        j = journey_by_id(journey_id)
        if j is None:
            return self._not_found("Journey not found", "That train does not run. Search again.")
        pax = self._pax(query)
        results = "/results?" + urlencode(
            {"from": j.origin.name, "to": j.destination.name, "date": j.day.isoformat(), "pax": pax}
        )
        changes_at = {s.station for s in j.stops[1:-1][-j.changes :]} if j.changes else set()
        stops = "\n".join(
            f"<li><strong>{_e(clock(s.minute))}</strong> {_e(s.station)}"
            + (' <span class="change">change trains</span>' if s.station in changes_at else "")
            + "</li>"
            for s in j.stops
        )
        content = _fill(
            _site_file("journey.html"),
            {
                "results_href": _e(results),
                "origin": _e(j.origin.name),
                "destination": _e(j.destination.name),
                "day": _e(format_day(j.day)),
                "train": _e(j.train),
                "changes": _e(j.changes_text()),
                "departure": _e(clock(j.departure)),
                "arrival": _e(clock(j.arrival)),
                "duration": _e(j.duration_text()),
                "stops": stops,
                "price": _e(euros(j.price_cents * pax)),
                "passengers": _e(f"for {_plural(pax, 'passenger')}"),
                "seats_href": _e(f"/seats/{j.id}?pax={pax}"),
            },
        )
        return self._page("journey", f"Train {j.train}", content, step=1)

    def _seats(self, journey_id: str, query: dict[str, str]) -> _Response:
        j = journey_by_id(journey_id)
        if j is None:
            return self._not_found("Journey not found", "That train does not run. Search again.")
        pax = self._pax(query)
        seats = seat_map(j.id)
        rows = []
        for row in sorted({s.row for s in seats}):
            cells = [f'<span class="row-number" aria-hidden="true">{row}</span>']
            for s in (s for s in seats if s.row == row):
                if s.letter == "C":
                    cells.append('<span aria-hidden="true"></span>')
                disabled = " disabled" if s.taken else ""
                cells.append(
                    f'<button type="button" class="seat" data-seat="{s.code}"'
                    f' data-window="{str(s.window).lower()}" aria-label="{_e(s.label())}"'
                    f' aria-pressed="false"{disabled}>{s.code}</button>'
                )
            rows.append(f'<div class="seat-row">{"".join(cells)}</div>')
        content = _fill(
            _site_file("seats.html"),
            {
                "journey_href": _e(f"/journey/{j.id}?pax={pax}"),
                "summary": _e(
                    f"{clock(j.departure)} {j.origin.name} → {j.destination.name}, {format_day(j.day)}"
                ),
                "coach": str(COACH),
                "needed": _e(_plural(pax, "seat")),
                "needed_count": str(pax),
                "seat_rows": "\n".join(rows),
                "journey_id": _e(j.id),
                "pax": str(pax),
            },
        )
        return self._page("seats", "Choose your seat", content, step=2)

    def _create_booking(self, form: dict[str, str]) -> _Response:
        j = journey_by_id(form.get("journey", ""))
        if j is None:
            return self._not_found("Journey not found", "That train does not run. Search again.")
        pax = self._pax(form)
        free = {s.code for s in seat_map(j.id) if not s.taken}
        chosen = [s for s in form.get("seats", "").split(",") if s]
        if len(chosen) != pax or len(set(chosen)) != pax or not set(chosen) <= free:
            return _redirect(f"/seats/{j.id}?pax={pax}")
        with self._lock:
            booking_id = f"b{len(self._state['bookings']) + 1}"
            self._state["bookings"].append(
                {
                    "id": booking_id,
                    "journey_id": j.id,
                    "origin": j.origin.name,
                    "destination": j.destination.name,
                    "date": j.day.isoformat(),
                    "day": format_day(j.day),
                    "departure": clock(j.departure),
                    "arrival": clock(j.arrival),
                    "train": j.train,
                    "passengers": pax,
                    "seats": chosen,
                    "price_cents": j.price_cents,
                    "total_cents": fare_cents(j, pax),
                    "passenger": None,
                    "status": "seat_chosen",
                    "reference": None,
                    "payment": None,
                }
            )
        return _redirect(f"/passenger?booking={quote(booking_id)}")

    # -- passenger, payment, confirmation ----------------------------------------------

    def _passenger(self, booking_id: str) -> _Response:
        booking = self._booking(booking_id)
        if booking is None:
            return self._not_found("Booking not found", "Start again from the search page.")
        if booking["status"] == "paid":
            return _redirect(f"/confirmation?booking={quote(booking_id)}")
        data = {
            "id": booking["id"],
            "route": f"{booking['origin']} → {booking['destination']}",
            "day": booking["day"],
            "times": f"{booking['train']}, {booking['departure']} → {booking['arrival']}",
            "seats": ", ".join(f"Coach {COACH}, seat {s}" for s in booking["seats"]),
            "passengers": booking["passengers"],
            "priceCents": booking["price_cents"],
            "railcards": {k: {"label": v[0], "percent": v[1]} for k, v in RAILCARDS.items()},
        }
        options = "".join(f'<option value="{k}">{_e(v[0])}</option>' for k, v in RAILCARDS.items())
        # JSON inside <script>: escape "<" so no value can close the element.
        booking_json = json.dumps(data).replace("<", "\\u003c")
        content = _fill(
            _site_file("passenger.html"),
            {"railcard_options": options, "booking_json": booking_json},
        )
        return self._page("passenger", "Passenger details", content, step=3)

    def _save_passenger(self, booking_id: str, body: bytes) -> _Response:
        try:
            data = json.loads(body or b"{}")
        except ValueError:
            return _json({"error": "The request was not valid JSON."}, HTTPStatus.BAD_REQUEST)
        if not isinstance(data, dict):
            return _json({"error": "Send an object of passenger fields."}, HTTPStatus.BAD_REQUEST)
        first = str(data.get("firstName", "")).strip()
        last = str(data.get("lastName", "")).strip()
        email = str(data.get("email", "")).strip()
        railcard = str(data.get("railcard", "none"))
        problems = []
        if not _NAME.match(first) or not _NAME.match(last):
            problems.append("first and last name")
        if not _EMAIL.match(email):
            problems.append("email address")
        if railcard not in RAILCARDS:
            problems.append("railcard")
        if problems:
            return _json(
                {"error": f"Check the {' and '.join(problems)}."}, HTTPStatus.UNPROCESSABLE_ENTITY
            )
        with self._lock:
            booking = next((b for b in self._state["bookings"] if b["id"] == booking_id), None)
            if booking is None:
                return _json({"error": "That booking does not exist."}, HTTPStatus.NOT_FOUND)
            if booking["status"] == "paid":
                return _json({"error": "This booking is already paid."}, HTTPStatus.CONFLICT)
            journey = journey_by_id(booking["journey_id"])
            assert journey is not None
            booking["passenger"] = {
                "first_name": first,
                "last_name": last,
                "email": email,
                "railcard": railcard,
            }
            booking["total_cents"] = fare_cents(journey, booking["passengers"], railcard)
            booking["status"] = "details_given"
        return _json({"ok": True, "next": f"/payment?booking={quote(booking_id)}"})

    def _payment_page(self, booking_id: str, errors: dict[str, str], holder: str) -> _Response:
        booking = self._booking(booking_id)
        if booking is None:
            return self._not_found("Booking not found", "Start again from the search page.")
        if booking["status"] == "paid":
            return _redirect(f"/confirmation?booking={quote(booking_id)}")
        if booking["passenger"] is None:
            return _redirect(f"/passenger?booking={quote(booking_id)}")
        content = _fill(
            _site_file("payment.html"),
            {
                "booking_id": _e(booking_id),
                "total": _e(euros(booking["total_cents"])),
                "summary": self._summary_list(booking),
                "holder": _e(holder),
                "cardnumber_error": _e(errors.get("cardnumber", "")),
                "exp_error": _e(errors.get("exp", "")),
                "cvc_error": _e(errors.get("cvc", "")),
                "name_error": _e(errors.get("name", "")),
            },
        )
        return self._page("payment", "Payment", content, step=4)

    def _pay(self, form: dict[str, str]) -> _Response:
        booking_id = form.get("booking", "")
        digits = re.sub(r"\D", "", form.get("cardnumber", ""))
        expiry = form.get("cc-exp", "").strip()
        holder = form.get("ccname", "").strip()
        errors: dict[str, str] = {}
        if not 12 <= len(digits) <= 19 or not _luhn(digits):
            errors["cardnumber"] = "That card number is not valid. Check it and try again."
        if not _expiry_ok(expiry):
            errors["exp"] = "Enter a future expiry date as MM/YY."
        if not re.fullmatch(r"\d{3,4}", form.get("cvc", "").strip()):
            errors["cvc"] = "Enter the 3 or 4 digit code on the back of the card."
        if not holder:
            errors["name"] = "Enter the name as it appears on the card."
        if errors:
            return self._payment_page(booking_id, errors, holder)
        with self._lock:
            booking = next((b for b in self._state["bookings"] if b["id"] == booking_id), None)
            if booking is None or booking["passenger"] is None:
                return _redirect(f"/passenger?booking={quote(booking_id)}")
            if booking["status"] != "paid":
                booking["status"] = "paid"
                booking["reference"] = _reference(booking_id, booking["journey_id"])
                booking["payment"] = {
                    "card_last4": digits[-4:],
                    "holder": holder,
                    "amount_cents": booking["total_cents"],
                }
        return _redirect(f"/confirmation?booking={quote(booking_id)}")

    def _confirmation(self, booking_id: str) -> _Response:
        booking = self._booking(booking_id)
        if booking is None or booking["status"] != "paid":
            return self._not_found("No confirmed booking", "This booking has not been paid yet.")
        passenger = booking["passenger"]
        content = _fill(
            _site_file("confirmation.html"),
            {
                "reference": _e(booking["reference"]),
                "passenger": _e(f"{passenger['first_name']} {passenger['last_name']}"),
                "email": _e(passenger["email"]),
                "summary": self._summary_list(booking),
            },
        )
        return self._page("confirmation", "Booking confirmed", content, step=5)

    # -- account -----------------------------------------------------------------------

    def _signin_page(self, notice: str) -> _Response:
        content = _fill(_site_file("signin.html"), {"notice": _e(notice)})
        return self._page("signin", "Sign in", content)

    def _sign_in(self, form: dict[str, str]) -> _Response:
        email = form.get("email", "").strip()
        with self._lock:
            self._state["account"]["sign_in_attempts"] += 1
        if not _EMAIL.match(email) or not form.get("password"):
            return self._signin_page("Enter your email address and password to sign in.")
        with self._lock:
            self._state["account"]["signed_in_as"] = email
        return _redirect("/")


def _clock_html(minutes: int) -> str:
    """Like :func:`clock`, with the next-day mark set small: ``00:36<sup>+1</sup>``."""
    time, _, mark = clock(minutes).partition(" ")
    return f'{time}<sup class="next-day">{mark}</sup>' if mark else time


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def _expiry_ok(text: str) -> bool:
    m = re.fullmatch(r"(0[1-9]|1[0-2])/(\d{2})", text)
    if m is None:
        return False
    month, year = int(m.group(1)), 2000 + int(m.group(2))
    today = date.today()
    return (year, month) >= (today.year, today.month)


def _reference(booking_id: str, journey_id: str) -> str:
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    digest = hashlib.sha256(f"{booking_id}|{journey_id}".encode()).digest()
    return "RC-" + "".join(alphabet[b % len(alphabet)] for b in digest[:6])


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, app: _App) -> None:
        self.app = app
        super().__init__(("127.0.0.1", port), _Handler)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    server_version = "RailCo/1.0"
    sys_version = ""

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def _serve(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > _MAX_BODY:
            self.send_error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE)
            return
        body = self.rfile.read(length) if length else b""
        response = self.server.app.handle(
            method, self.path, body, self.headers.get("Content-Type", "")
        )
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(response.body)

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: the demo runs under a full-screen terminal UI."""


class DemoSite:
    """A running Rail & Co site on 127.0.0.1; state lives as long as this object."""

    def __init__(self, server: _Server, thread: threading.Thread) -> None:
        self._server = server
        self._thread = thread
        self.url = f"http://127.0.0.1:{server.server_address[1]}/"

    def state(self) -> dict[str, Any]:
        """A deep copy of what the site has received: searches, bookings, account."""
        return self._server.app.snapshot()

    def stop(self) -> None:
        """Stop serving and release the port; safe to call twice."""
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join(timeout=5)
        self._server.server_close()

    def __enter__(self) -> DemoSite:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_demo_site(*, port: int = 0) -> DemoSite:
    """Serve a fresh Rail & Co on 127.0.0.1 (``port=0``: an ephemeral port) in a daemon thread.

    Returns once the socket is listening. Raises OSError when the port is taken.
    """
    server = _Server(port, _App())
    thread = threading.Thread(target=server.serve_forever, name="railco-demo-site", daemon=True)
    thread.start()
    return DemoSite(server, thread)

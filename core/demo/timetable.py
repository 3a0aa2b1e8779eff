"""Rail & Co's timetable: stations, journeys, fares and seats, all derived deterministically.

Everything here is a pure function of its inputs (route, date, journey id), so the site and
the scripted demo plan agree on what the results page shows without sharing any state.
"""

from __future__ import annotations

import hashlib
import math
import random
import unicodedata
from dataclasses import dataclass
from datetime import date

JOURNEYS_PER_DAY = 40
MORNING_ENDS = 12 * 60
"""A train departing before this minute of the day (12:00) is a morning train."""
MAX_PASSENGERS = 6
SEAT_ROWS = 12
SEAT_LETTERS = "ABCD"
COACH = 5

_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


@dataclass(frozen=True, slots=True)
class Station:
    name: str
    code: str
    lat: float
    lon: float


STATIONS: tuple[Station, ...] = (
    Station("Lyon Part-Dieu", "LPD", 45.760, 4.859),
    Station("Lyon Perrache", "LPR", 45.749, 4.826),
    Station("Lyon Saint-Exupéry TGV", "LSE", 45.721, 5.076),
    Station("Paris Gare de Lyon", "PGL", 48.844, 2.374),
    Station("Paris Bercy", "PBY", 48.839, 2.383),
    Station("Paris Montparnasse", "PMP", 48.841, 2.320),
    Station("Paris Nord", "PNO", 48.881, 2.355),
    Station("Paris Est", "PES", 48.877, 2.359),
    Station("Marseille Saint-Charles", "MSC", 43.303, 5.380),
    Station("Lille Europe", "LEU", 50.639, 3.075),
    Station("Lille Flandres", "LFL", 50.637, 3.071),
    Station("Bordeaux Saint-Jean", "BSJ", 44.826, -0.556),
    Station("Nantes", "NTS", 47.217, -1.542),
    Station("Strasbourg", "STG", 48.585, 7.734),
    Station("Toulouse Matabiau", "TLM", 43.611, 1.454),
    Station("Nice Ville", "NCV", 43.705, 7.262),
    Station("Grenoble", "GRE", 45.191, 5.714),
    Station("Dijon Ville", "DJV", 47.323, 5.027),
    Station("Mâcon-Loché TGV", "MLT", 46.282, 4.779),
    Station("Le Creusot Montceau TGV", "LCM", 46.765, 4.500),
    Station("Avignon TGV", "AVT", 43.922, 4.786),
    Station("Montpellier Saint-Roch", "MSR", 43.605, 3.881),
    Station("Annecy", "ANY", 45.902, 6.122),
    Station("Genève Cornavin", "GVA", 46.210, 6.142),
    Station("Bruxelles-Midi", "BXM", 50.836, 4.336),
)

_BY_CODE = {s.code: s for s in STATIONS}


def _fold(text: str) -> str:
    """Lower-case and strip accents, so "geneve" finds "Genève"."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold().strip()


def find_station(name: str) -> Station | None:
    """The station whose name equals ``name`` (ignoring case and accents), else None."""
    folded = _fold(name)
    return next((s for s in STATIONS if _fold(s.name) == folded), None)


def station_by_code(code: str) -> Station | None:
    return _BY_CODE.get(code)


def suggest_stations(query: str, limit: int = 6) -> list[Station]:
    """Stations matching ``query``: names starting with it first, then names containing it."""
    folded = _fold(query)
    if not folded:
        return []
    starts = [s for s in STATIONS if _fold(s.name).startswith(folded)]
    words = [
        s
        for s in STATIONS
        if s not in starts and any(w.startswith(folded) for w in _fold(s.name).split())
    ]
    contains = [
        s for s in STATIONS if s not in starts and s not in words and folded in _fold(s.name)
    ]
    return (sorted(starts, key=lambda s: s.name) + words + contains)[:limit]


def format_day(day: date) -> str:
    """The long English form the site uses in accessible names: "Friday 4 December 2026"."""
    return f"{_WEEKDAYS[day.weekday()]} {day.day} {_MONTHS[day.month - 1]} {day.year}"


def euros(cents: int) -> str:
    return f"€{cents // 100}.{cents % 100:02d}"


def clock(minutes: int) -> str:
    """``07:42`` for a minute of the day; ``00:15 +1`` past midnight."""
    text = f"{minutes // 60 % 24:02d}:{minutes % 60:02d}"
    return text if minutes < 24 * 60 else f"{text} +1"


def _km(a: Station, b: Station) -> float:
    lat1, lon1, lat2, lon2 = map(math.radians, (a.lat, a.lon, b.lat, b.lon))
    h = (
        math.sin((lat2 - lat1) / 2) ** 2
        + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    )
    return 2 * 6371 * math.asin(math.sqrt(h))


def _rng(*parts: str) -> random.Random:
    digest = hashlib.sha256("|".join(parts).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


@dataclass(frozen=True, slots=True)
class Stop:
    station: str
    minute: int


@dataclass(frozen=True, slots=True)
class Journey:
    id: str
    origin: Station
    destination: Station
    day: date
    departure: int
    """Minutes after midnight of ``day``."""
    arrival: int
    changes: int
    price_cents: int
    """Fare for one adult without railcard."""
    train: str
    stops: tuple[Stop, ...]

    @property
    def duration(self) -> int:
        return self.arrival - self.departure

    @property
    def is_morning(self) -> bool:
        return self.departure < MORNING_ENDS

    def duration_text(self) -> str:
        return f"{self.duration // 60}h {self.duration % 60:02d}m"

    def changes_text(self) -> str:
        return {0: "Direct", 1: "1 change"}.get(self.changes, f"{self.changes} changes")


def _via_stations(origin: Station, destination: Station) -> list[Station]:
    """Plausible calling points: the stations with the smallest detour, nearest first."""
    direct = _km(origin, destination)
    cities = (origin.name.split()[0], destination.name.split()[0])
    others = [s for s in STATIONS if s.name.split()[0] not in cities]
    others.sort(key=lambda s: _km(origin, s) + _km(s, destination))
    close = [s for s in others if _km(origin, s) + _km(s, destination) < direct * 1.15 + 15]
    chosen = close if len(close) >= 2 else others[:2]
    return sorted(chosen, key=lambda s: _km(origin, s))


def journeys_for(origin: Station, destination: Station, day: date) -> list[Journey]:
    """The day's journeys, in departure order; the same inputs always give the same list.

    Guarantees, for every route and day: departure times are distinct; exactly one morning
    train (before 12:00) is the cheapest morning train, at least €5 under every other one,
    and it is never the first departure; one evening train is cheaper still, so the cheapest
    train overall is not the answer to "cheapest morning train".
    """
    rng = _rng(origin.code, destination.code, day.isoformat())
    km = _km(origin, destination)
    base_minutes = round(km / 250 * 60) + 20
    base_euros = 15 + km * 0.11
    vias = _via_stations(origin, destination)

    departures = [330 + i * 26 + rng.randint(0, 9) for i in range(JOURNEYS_PER_DAY)]
    morning = [i for i, dep in enumerate(departures) if dep < MORNING_ENDS]
    evening = [i for i, dep in enumerate(departures) if dep >= 19 * 60]
    deal_morning = morning[rng.randrange(3, len(morning) - 1)]
    deal_evening = rng.choice(evening)
    deal_euros = max(14, round(base_euros * 0.42))
    floor_euros = deal_euros + 5

    journeys: list[Journey] = []
    for i, dep in enumerate(departures):
        changes = rng.choices((0, 1, 2), weights=(6, 3, 1))[0]
        duration = (
            base_minutes + rng.randint(0, 12) + sum(rng.randint(35, 70) for _ in range(changes))
        )
        hour = dep // 60
        peak = 1.35 if 6 <= hour < 9 or 16 <= hour < 19 else 1.0 if hour < 16 else 0.8
        price = round(base_euros * peak * rng.uniform(0.8, 1.35) * (1 - 0.08 * changes))
        if i == deal_morning:
            price = deal_euros
        elif i == deal_evening:
            price = max(9, deal_euros - 4)
        else:
            price = max(price, floor_euros)
        called = sorted(
            rng.sample(vias, k=min(len(vias), changes + rng.randint(0, 1))),
            key=lambda s: _km(origin, s),
        )
        stops = [Stop(origin.name, dep)]
        for n, station in enumerate(called, start=1):
            stops.append(Stop(station.name, dep + round(duration * n / (len(called) + 1))))
        stops.append(Stop(destination.name, dep + duration))
        journeys.append(
            Journey(
                id=f"{origin.code}-{destination.code}-{day:%Y%m%d}-{i:02d}",
                origin=origin,
                destination=destination,
                day=day,
                departure=dep,
                arrival=dep + duration,
                changes=changes,
                price_cents=price * 100 - 10,
                train=f"RC {6100 + (hash_int(origin.code + destination.code) % 50) * 20 + i}",
                stops=tuple(stops),
            )
        )
    return journeys


def hash_int(text: str) -> int:
    """A stable small integer for ``text`` (Python's ``hash`` is salted per process)."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")


def journey_by_id(journey_id: str) -> Journey | None:
    """The journey an id like ``LPD-PGL-20261204-07`` names, or None when it names none."""
    parts = journey_id.split("-")
    if len(parts) != 4 or not parts[3].isdigit():
        return None
    origin, destination = station_by_code(parts[0]), station_by_code(parts[1])
    try:
        day = date(int(parts[2][:4]), int(parts[2][4:6]), int(parts[2][6:8]))
    except ValueError:
        return None
    index = int(parts[3])
    if origin is None or destination is None or origin == destination:
        return None
    journeys = journeys_for(origin, destination, day)
    return journeys[index] if index < len(journeys) else None


def cheapest_morning(journeys: list[Journey]) -> Journey:
    return min((j for j in journeys if j.is_morning), key=lambda j: j.price_cents)


def select_label(journey: Journey, passengers: int) -> str:
    """The accessible name of a results row's "Select" button."""
    total = euros(journey.price_cents * passengers)
    return (
        f"Select the {clock(journey.departure)} train, arriving {clock(journey.arrival)}, {total}"
    )


# Railcards: (label, percent off).
RAILCARDS: dict[str, tuple[str, int]] = {
    "none": ("No railcard", 0),
    "youth": ("Youth railcard (12–27), 30% off", 30),
    "senior": ("Senior railcard (60+), 30% off", 30),
    "weekend": ("Weekend railcard, 25% off", 25),
}


def fare_cents(journey: Journey, passengers: int, railcard: str = "none") -> int:
    """Total for the booking; a railcard applies to the lead passenger only."""
    percent = RAILCARDS.get(railcard, RAILCARDS["none"])[1]
    lead = journey.price_cents * (100 - percent) // 100
    return lead + journey.price_cents * (passengers - 1)


@dataclass(frozen=True, slots=True)
class Seat:
    row: int
    letter: str
    taken: bool

    @property
    def code(self) -> str:
        return f"{self.row}{self.letter}"

    @property
    def window(self) -> bool:
        return self.letter in "AD"

    def label(self, selected: bool = False) -> str:
        """Accessible name, e.g. "Seat 14A, window, available"."""
        state = "selected" if selected else "taken" if self.taken else "available"
        return f"Seat {self.code}, {'window' if self.window else 'aisle'}, {state}"


def seat_map(journey_id: str) -> list[Seat]:
    """Coach 5's seats, row by row; about half are taken, at least one window seat is free."""
    rng = _rng("seats", journey_id)
    seats = [
        Seat(row, letter, rng.random() < 0.5)
        for row in range(1, SEAT_ROWS + 1)
        for letter in SEAT_LETTERS
    ]
    if all(s.taken for s in seats if s.window):
        seats[0] = Seat(1, "A", False)
    return seats


def first_free_window_seat(journey_id: str) -> Seat:
    return next(s for s in seat_map(journey_id) if s.window and not s.taken)

"""The scripted plan that plays the model in ``handrail demo`` when no API key is set.

Each line is one tool call: ``{"tool", "input", "reason"}`` plus, for element tools, a
``target`` (an accessible name) that the scripted backend resolves against the digest it
was just given. Targets here are exact, distinct accessible names on the page where they
are used, so they resolve to one element. The plan starts on the search page (the demo
opens the site itself) and ends with a ``finish`` that a working hand-over never lets it
reach: the payment page's card fields pause the run first.

Denials: a denied step pauses the run and says which step it was (``on_deny`` "ask", the
default), except sorting (skipped: the plan finds its train by name anyway) and going on to
payment (the plan finishes, unsuccessfully, saying so).
"""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from core.demo.timetable import (
    cheapest_morning,
    clock,
    find_station,
    first_free_window_seat,
    format_day,
    journeys_for,
    select_label,
)

ORIGIN = "Lyon Part-Dieu"
DESTINATION = "Paris Gare de Lyon"
PASSENGER = ("Ada", "Lovelace", "ada@example.org")


def first_friday_of_next_month(today: date) -> date:
    """The first Friday of the calendar month after ``today``'s (December rolls into January)."""
    first = date(today.year + today.month // 12, today.month % 12 + 1, 1)
    return first + timedelta(days=(4 - first.weekday()) % 7)


def _step(
    tool: str,
    reason: str,
    target: str | None = None,
    *,
    on_deny: str | None = None,
    **params: Any,
) -> dict[str, Any]:
    line: dict[str, Any] = {"tool": tool}
    if target is not None:
        line["target"] = target
    line["input"] = params
    line["reason"] = reason
    if on_deny is not None:
        line["on_deny"] = on_deny
    return line


def demo_plan_lines(today: date) -> list[dict[str, Any]]:
    """The demo's steps for a run on ``today``, from the search page to the payment page.

    The calendar steps assume the browser's clock shows the same month as ``today`` (the
    calendar opens on the current month and the plan presses "Next month" once).
    """
    day = first_friday_of_next_month(today)
    origin, destination = find_station(ORIGIN), find_station(DESTINATION)
    assert origin is not None and destination is not None
    train = cheapest_morning(journeys_for(origin, destination, day))
    seat = first_free_window_seat(train.id)
    first, last, email = PASSENGER
    return [
        _step("type", "Start with the departure station.", "From", text="Lyon"),
        _step("click", f"{ORIGIN} is Lyon's main station; pick it from the suggestions.", ORIGIN),
        _step("type", "Now the arrival station.", "To", text="Paris"),
        _step(
            "click",
            f"Trains from Lyon arrive at {DESTINATION}; pick it from the suggestions.",
            DESTINATION,
        ),
        _step("click", "Open the calendar to pick the travel date.", "Choose date"),
        _step("click", "The first Friday of next month is in the next month.", "Next month"),
        _step(
            "click",
            f"{format_day(day)} is the first Friday of next month.",
            format_day(day),
        ),
        _step("select_option", "One seat, so one passenger.", "Passengers", option="1 passenger"),
        _step("click", "The form is complete; search for trains.", "Search trains"),
        _step(
            "select_option",
            "Sort by price to find the cheapest trains quickly.",
            "Sort by",
            on_deny="skip",  # a convenience: the plan picks its train by name either way
            option="Price (lowest first)",
        ),
        _step(
            "click",
            f"The cheapest train leaves in the evening; the cheapest one before 12:00 is the "
            f"{clock(train.departure)}.",
            select_label(train, 1),
        ),
        _step("click", "This is the right train; go on to seat choice.", "Choose seat"),
        _step("click", f"Seat {seat.code} is a free window seat.", seat.label()),
        _step("click", "One seat chosen; continue.", "Continue to passenger details"),
        _step("type", "The passenger's first name.", "First name", text=first),
        _step("type", "The passenger's last name.", "Last name", text=last),
        _step("type", "An email address for the tickets.", "Email", text=email),
        _step(
            "click",
            "Passenger details are complete.",
            "Continue to payment",
            on_deny="finish",  # not going on to payment is a choice, not a problem
        ),
        _step(
            "finish",
            "The booking waits at the payment page; the task says to stop before paying.",
            success=True,
            answer=(
                f"Booked up to payment: the {clock(train.departure)} {ORIGIN} → {DESTINATION} "
                f"on {format_day(day)}, seat {seat.code}, for {first} {last}. Payment is left "
                "to you."
            ),
        ),
    ]


def write_demo_plan(path: Path, today: date) -> Path:
    """Write the plan as JSONL (one tool call a line, UTF-8) and return ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = (json.dumps(line, ensure_ascii=False) for line in demo_plan_lines(today))
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path

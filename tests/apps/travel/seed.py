"""Run once before the agency is served (``python -m tests.apps.travel.seed``): creates the
tables, the superuser and the rows the tests work on, and prints (JSON) a signed-in session
key, so a test can start signed in without the sign-in form."""

from __future__ import annotations

import datetime
import json
import sys

import django

django.setup()

from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.contrib.sessions.backends.db import SessionStore  # noqa: E402
from django.core.management import call_command  # noqa: E402

from tests.apps.travel.models import Traveller, Trip  # noqa: E402

TRAVELLERS = (
    "Ada Lovelace",
    "Alan Turing",
    "Barbara Liskov",
    "Edsger Dijkstra",
    "Grace Hopper",
    "Katherine Johnson",
)
# destination, departure, confirmed, travellers
TRIPS = (
    ("Lisbon", datetime.date(2027, 3, 14), True, ("Ada Lovelace", "Grace Hopper")),
    ("Kyoto", datetime.date(2027, 4, 2), False, ("Alan Turing",)),
    ("Nairobi", datetime.date(2027, 5, 20), True, ()),
    ("Quito", datetime.date(2027, 6, 11), False, ()),
    ("Valparaiso", datetime.date(2027, 7, 4), True, ("Barbara Liskov",)),
    ("Reykjavik", datetime.date(2027, 1, 9), False, ()),
    ("Tromso", datetime.date(2027, 1, 23), False, ()),
)


def main(username: str, password: str) -> None:
    call_command("migrate", verbosity=0, interactive=False)
    user = User.objects.create_superuser(username, "admin@example.test", password)
    people = {name: Traveller.objects.create(name=name) for name in TRAVELLERS}
    for destination, departs, confirmed, names in TRIPS:
        trip = Trip.objects.create(destination=destination, departs=departs, confirmed=confirmed)
        trip.travellers.set([people[n] for n in names])
    # What django.contrib.auth.login stores, without a request (and without last_login).
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    print(json.dumps({"session_key": session.session_key}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

"""The demo's fixed task, as the person would type it."""

DEMO_TASK = (
    "Book one seat from Lyon to Paris on the first Friday of next month, on the cheapest "
    "morning train (leaving before 12:00), for passenger Ada Lovelace (ada@example.org), "
    "and stop before paying."
)

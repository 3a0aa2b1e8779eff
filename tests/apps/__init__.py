"""Real applications as fixtures (issue 26): a Django admin of our own (``travel``) and a
Datasette, each started in a subprocess on a free loopback port by :mod:`.servers`, which
imports nothing of pytest (the bench reuses it)."""

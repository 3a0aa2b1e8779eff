"""The guard: who must approve what and what is refused (:mod:`core.guard.policy`), the
decision a supervisor gives, and the network guard that enforces the domain allowlist
where the browser makes requests (:mod:`core.guard.allowlist`).

May import: :mod:`core.hands`, :mod:`core.eyes` and everything below them.
"""

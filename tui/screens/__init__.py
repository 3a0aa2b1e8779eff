"""The observatory's screens and modals: the live run, replay, fleet, pool, rounds, the
approval and hand-over modals, help and confirmations, and the supervisor that puts the
agent's questions on screen.

May import: :mod:`tui.widgets`, the shared tui modules (themes, rounds, labels...) and core.
"""

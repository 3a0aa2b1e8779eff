"""handrail's headless core: browser, eyes, hands, model, agent loop, policy and audit.

Nothing in this package imports a terminal UI; the TUI is one consumer of its events.
"""

"""handrail's faces, the top layer: the command line (:mod:`tui.cli`), the Textual
observatory (:mod:`tui.app` for a live run; :mod:`tui.screens` and :mod:`tui.widgets`), the
console mode without a TUI (:mod:`tui.console`), and the observatory in a browser
(:mod:`tui.web`). Owns everything a person sees and presses; the run itself is core's.

May import every layer of :mod:`core`; nothing in core imports this package.
"""

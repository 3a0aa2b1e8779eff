"""The observatory's widgets, one family per module: header, footer, panes, timeline,
screenshot pane, pictures in the terminal (graphics, target crop), lazily rendered text.

May import: the shared tui modules (themes, rounds, labels, config) and core; never a
screen.
"""

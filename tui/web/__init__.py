"""``handrail serve``: the observatory in a browser (textual-serve) behind a token, and the
guard that checks every request to it.

May import: :mod:`tui.cli`'s run options and core.
"""

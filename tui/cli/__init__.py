"""The command line: ``handrail`` and its subcommands (:mod:`tui.cli.main`), the run
options every run-like command shares (:mod:`tui.cli.run_options`), and each command's
own module (pool, demo, doctor, launch).

May import: the rest of tui and all of core.
"""

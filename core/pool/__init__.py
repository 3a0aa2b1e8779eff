"""The tab pool: one dedicated browser with N pre-made background tabs ("slots") that
runs claim instead of launching a browser. See docs/architecture.md, "The tab pool"."""

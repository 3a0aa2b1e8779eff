"""The browser layer: finding, launching or connecting to Chrome, its lifeline (the reaper),
our tabs and their child targets (out-of-process frames, workers).

Owns everything about which Chrome and which tabs; knows nothing of pages' contents.
May import: :mod:`core.cdp` and the shared vocabulary (:mod:`core.result`...).
"""

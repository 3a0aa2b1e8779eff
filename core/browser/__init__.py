"""The browser layer: which Chrome and which tabs. One job per module: :mod:`.find` (the
executable, the profiles, a running browser's CDP URL), :mod:`.launch` (our own Chrome's
flags and process), :mod:`.lifeline` (the reaper that stops it if handrail dies),
:mod:`.browser` (the connection and our tabs), :mod:`.child_targets` (out-of-process frames,
workers), :mod:`.errors`, and the preloading and display switches.

Owns everything about which Chrome and which tabs; knows nothing of pages' contents.
May import: :mod:`core.cdp` and the shared vocabulary (:mod:`core.result`...).
"""

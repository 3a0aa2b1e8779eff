"""The eyes: one walk of the page per frame in our world, returned as an indexed digest
(:mod:`core.eyes.snapshot`), with click targets found by their listeners. The page-side
stages are the ``.js`` files of this folder, joined in one closure.

May import: :mod:`core.world`, :mod:`core.browser`, :mod:`core.cdp` and the shared
vocabulary.
"""

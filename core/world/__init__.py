"""The world layer: handrail's own isolated JavaScript world in every frame of a tab, the
one loader of page scripts (:mod:`core.world.scripts`), frame geometry, calls into the
world and their errors, and the sensitivity judge every page script shares.

May import: :mod:`core.browser`, :mod:`core.cdp` and the shared vocabulary.
"""

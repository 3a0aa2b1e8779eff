"""The hands: page actions over CDP, with trusted input only (see :mod:`core.hands.facade`)."""

from core.hands.dialogs import DialogDecider, DialogInfo, DialogType
from core.hands.expect import TargetExpectation
from core.hands.facade import Page
from core.hands.tab_watch import STATE_KEY, AuthChallenge

__all__ = [
    "STATE_KEY",
    "AuthChallenge",
    "DialogDecider",
    "DialogInfo",
    "DialogType",
    "Page",
    "TargetExpectation",
]

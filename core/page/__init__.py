"""The hands: page actions over CDP, with trusted input only (see :mod:`core.page.facade`)."""

from core.page.dialogs import DialogDecider, DialogInfo, DialogType
from core.page.expect import TargetExpectation
from core.page.facade import Page
from core.page.tabs import STATE_KEY

__all__ = ["STATE_KEY", "DialogDecider", "DialogInfo", "DialogType", "Page", "TargetExpectation"]

"""What can go wrong with a browser, as the layers above catch it."""

from __future__ import annotations


class BrowserError(Exception):
    """Finding, starting or reaching the browser failed. The message says what to do."""


class ChromeNotFound(BrowserError):
    pass


class TabGone(BrowserError):
    """Our tab was closed or crashed and could not be replaced."""


class PopupRefused(BrowserError):
    """A page opened a tab the run may not have (its pool is full); the tab was closed."""

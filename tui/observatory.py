"""What the run app and the replay app share: themes, the person's config, help, palette.

No global state: the config folder, theme folders and clock are constructor arguments, so
tests (and the CLI) decide where settings live.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.command import CommandPalette, DiscoveryHit, Hit, Hits
from textual.screen import Screen
from textual.theme import ThemeProvider

from core.visible import visible
from tui.config import default_config_dir, load_config, save_theme
from tui.signals import ENDING_SIGNALS, ending, forget_textual_handlers, signal_name
from tui.themes import (
    DEFAULT_THEME,
    describe_problems,
    load_themes,
    meaning_defaults,
    theme_folders,
)

if TYPE_CHECKING:
    from tui.screens.help_screen import HelpSection

PaletteCommand = tuple[str, str, Callable[[], object]]


class MarkedThemes(ThemeProvider):
    """The themes, the one in use first and marked "(current)", so the person sees where
    they are before they move."""

    async def discover(self) -> Hits:
        current = self.app.theme
        commands = sorted(self.commands, key=lambda command: command[0] != current)
        for name, callback in commands:
            if name == current:
                yield DiscoveryHit(f"{name} (current)", callback, text=name, help="in use now")
            else:
                yield DiscoveryHit(name, callback, text=name)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        current = self.app.theme
        for name, callback in self.commands:
            if (match := matcher.match(name)) > 0:
                shown = matcher.highlight(name)
                if name == current:
                    shown.append(" (current)")
                yield Hit(match, shown, callback, text=name)


class ObservatoryApp(App[int]):
    """Base of ``HandrailApp`` (live run) and ``ReplayApp``; its result is an exit code."""

    CSS_PATH = Path(__file__).with_name("observatory.tcss")
    """Absolute: Textual resolves a relative path beside the subclass's module, and the
    apps live in tui/screens/ and tui/app.py."""
    TITLE = "handrail"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help", key_display="?", id="app.help"),
        Binding("t", "change_theme", "Theme", id="app.theme"),
        Binding("q", "quit", "Quit", id="app.quit"),
    ]

    def __init__(
        self,
        *,
        theme: str | None = None,
        config_dir: Path | None = None,
        theme_dirs: Sequence[Path] | None = None,
        clock: Callable[[], float] = time.monotonic,
        persist_theme: bool = True,
    ) -> None:
        """``theme``: a name from ``--theme`` (None: the saved one, else the default).
        ``config_dir``: where ``config.toml`` and user ``themes/`` live (default: XDG).
        ``theme_dirs``: folders to load themes from, later ones win (default: the
        project's ``themes/`` then the user's). ``clock``: seconds, for elapsed time.
        ``persist_theme``: save the theme the person picks in the config file."""
        super().__init__()
        self.config_dir = config_dir if config_dir is not None else default_config_dir()
        self.clock = clock
        self.persist_theme = persist_theme
        self._notes: list[tuple[str, str]] = []
        self._theme_ready = False
        self.ended_by: str | None = None
        """The signal that ended the app (``SIGTERM``...), if one did."""

        folders = list(theme_dirs) if theme_dirs is not None else theme_folders(self.config_dir)
        loaded = load_themes(folders)
        for registered in loaded.themes.values():
            self.register_theme(registered)
        if loaded.problems:
            self._notes.append((describe_problems(loaded.problems), "warning"))

        config = load_config(self.config_dir)
        if config.problem:
            self._notes.append((config.problem, "warning"))
        wanted = theme or config.theme or DEFAULT_THEME
        if wanted not in self.available_themes:
            fallback = DEFAULT_THEME if DEFAULT_THEME in self.available_themes else "textual-dark"
            self._notes.append(
                (
                    f"Unknown theme {wanted!r}; using {fallback!r}. "
                    f"Available (t): {', '.join(sorted(self.available_themes))}.",
                    "warning",
                )
            )
            wanted = fallback
        self.theme = wanted

    def note(self, message: str, severity: str = "information") -> None:
        """A notice to show once the screen is up (``warning`` or ``information``)."""
        self._notes.append((message, severity))

    # --- themes --------------------------------------------------------------------------

    def get_theme_variable_defaults(self) -> dict[str, str]:
        # Textual's built-in themes know nothing of handrail's meaning colours.
        return meaning_defaults()

    def on_mount(self) -> None:
        for message, severity in self._notes:
            self.notify(
                visible(message),
                severity="warning" if severity == "warning" else "information",
                markup=False,
                timeout=10,
            )
        self._notes.clear()
        self._theme_ready = True

    def run(self, *args: Any, **kwargs: Any) -> int | None:
        """Textual's ``run``; the process's signal handlers are as they were afterwards (the
        loop's own are gone with it, and Textual's SIGCONT/SIGTSTP ones are removed)."""
        saved = {sig: signal.getsignal(sig) for sig in ENDING_SIGNALS}
        try:
            return super().run(*args, **kwargs)
        finally:
            forget_textual_handlers()
            for sig, handler in saved.items():
                if handler is not None:
                    signal.signal(sig, handler)

    def on_load(self) -> None:
        # Load comes before the terminal is put in application mode: from then on a
        # signal finds the handler, and is handled inside the loop.
        if not self.is_headless:
            loop = asyncio.get_running_loop()
            for sig in ENDING_SIGNALS:
                loop.add_signal_handler(sig, self._ending_signal, sig)

    def _ending_signal(self, signum: int) -> None:
        ending(signum)
        self.ended_by = signal_name(signum)
        self.terminate()

    def terminate(self) -> None:
        """SIGTERM, SIGHUP or SIGINT arrived: stop as the person's quit does, without asking.
        Read-only apps (replay, the pool watch) leave at once with exit code 130; a live run
        aborts first (its log closed, the browser stopped), then leaves."""
        self.exit(130)

    def watch_theme(self, name: str) -> None:
        if not (self._theme_ready and self.persist_theme):
            return
        try:
            save_theme(self.config_dir, name)
        except OSError as exc:
            self.notify(
                visible(f"Could not save the theme choice: {exc}"), severity="warning", markup=False
            )

    # --- commands ------------------------------------------------------------------------

    def action_change_theme(self) -> None:
        """``t``: the theme picker, the current theme marked."""
        self.push_screen(CommandPalette(providers=[MarkedThemes], placeholder="Search for themes…"))

    def action_help(self) -> None:
        from tui.screens.help_screen import HelpScreen  # not on the way to the first frame

        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(list(self.help_sections())))

    def help_sections(self) -> Iterable[HelpSection]:
        """Key groups for ``?``: the screen's own first, then the app-wide keys (not on a
        modal, where they do not reach); each only with the keys that work now."""
        from textual.screen import ModalScreen

        from tui.screens.help_screen import enabled

        screen = self.screen
        provider = getattr(screen, "help_sections", None)
        sections = list(provider()) if callable(provider) else [("Keys here", screen.BINDINGS)]
        for title, bindings in sections:
            yield (title, enabled(screen, bindings))
        if not isinstance(screen, ModalScreen):
            everywhere = [*ObservatoryApp.BINDINGS, Binding("ctrl+p", "", "Command palette")]
            yield ("Everywhere", enabled(screen, everywhere))

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        provider = getattr(screen, "palette_commands", None)
        if callable(provider):
            for title, help_text, callback in provider():
                yield SystemCommand(title, help_text, callback)
        yield SystemCommand("Help", "Show every key (?)", self.action_help)
        for command in super().get_system_commands(screen):
            if command.title == "Screenshot":
                # Textual's saves to a Downloads folder that may not exist, then says only
                # "Failed to save screenshot": ours names the file, or why it failed.
                command = SystemCommand(
                    "Screenshot",
                    f"Save an SVG picture of the screen in {self.screenshot_dir()}",
                    lambda: self.set_timer(0.1, self.save_screen_picture),
                )
            yield command

    def screenshot_dir(self) -> Path:
        """Where the palette's Screenshot goes: ~/Downloads when it exists, else here."""
        downloads = Path.home() / "Downloads"
        return downloads if downloads.is_dir() else Path.cwd()

    def save_screen_picture(self, folder: Path | None = None) -> Path | None:
        """Write the screen as SVG into ``folder`` (default :meth:`screenshot_dir`) and say
        where; on failure say why. Returns the file, or None."""
        folder = folder if folder is not None else self.screenshot_dir()
        stamp = time.strftime("%Y-%m-%d_%H-%M-%S")
        path = folder / f"handrail-{stamp}.svg"
        try:
            path.write_text(self.export_screenshot(), encoding="utf-8")
        except OSError as exc:
            self.notify(
                visible(f"Could not save the screenshot to {path}: {exc.strerror or exc}"),
                title="Screenshot",
                severity="error",
                markup=False,
            )
            return None
        self.notify(visible(f"Saved the screenshot to {path}"), title="Screenshot", markup=False)
        return path

    async def action_quit(self) -> None:
        """``q`` and ctrl+q: subclasses may ask first (a live run must be aborted)."""
        await self.request_quit()

    def action_help_quit(self) -> None:
        """ctrl+c: quits as ``q`` does (a live run asks first and then exits with 130),
        instead of Textual's "press ctrl+q" notice."""
        self.call_later(self.request_quit, interrupt=True)

    async def request_quit(self, *, interrupt: bool = False) -> None:
        """``interrupt``: asked by ctrl+c rather than ``q``."""
        self.exit(0)

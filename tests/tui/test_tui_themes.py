"""Theme files: validated before registering, broken ones reported once, choice persisted."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.tui_driver import UiTestDriver, still_clock, wait_until
from tui.app import HandrailApp
from tui.config import load_config, save_theme
from tui.themes import (
    ThemeFileError,
    builtin_themes_dir,
    load_theme_file,
    load_themes,
    parse_theme,
)


def test_the_project_themes_load_cleanly() -> None:
    loaded = load_themes([builtin_themes_dir()])
    assert loaded.problems == ()
    assert {"dark", "light", "high-contrast"} <= set(loaded.themes)
    for theme in loaded.themes.values():
        for meaning in ("approved", "denied", "error", "paused", "new-element"):
            assert f"handrail-{meaning}" in theme.variables


@pytest.mark.parametrize(
    ("data", "complaint"),
    [
        ({"name": "Bad Name", "colors": {"primary": "#fff"}}, "lowercase"),
        ({"name": "x", "colors": {}}, "at least primary"),
        ({"name": "x", "colors": {"primary": "not-a-colour"}}, "not a colour"),
        ({"name": "x", "colors": {"primary": "#fff", "primery": "#fff"}}, "unknown keys primery"),
        ({"name": "x", "colors": {"primary": "#fff"}, "meaning": {"happy": "#fff"}}, "happy"),
        ({"name": "x", "colors": {"primary": "#fff"}, "dark": "yes"}, "true or false"),
        ({"name": "x", "colors": {"primary": "#fff"}, "colour": {}}, "unknown keys colour"),
    ],
)
def test_invalid_theme_data_is_refused_with_a_reason(
    data: dict[str, object], complaint: str
) -> None:
    with pytest.raises(ThemeFileError, match=complaint):
        parse_theme(data)


def test_file_name_must_match_the_theme_name(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text('name = "other"\n[colors]\nprimary = "#123456"\n')
    with pytest.raises(ThemeFileError, match="does not match"):
        load_theme_file(path)


def write_user_themes(config_dir: Path) -> None:
    folder = config_dir / "themes"
    folder.mkdir(parents=True)
    (folder / "mine.toml").write_text(
        'name = "mine"\ndark = true\n[colors]\nprimary = "#FF8800"\n[meaning]\napproved = "#00AA00"\n'
    )
    (folder / "broken.toml").write_text('name = "broken"\n[colors\nprimary = "#fff"\n')
    (folder / "worse.toml").write_text('name = "worse"\n[colors]\nprimary = 12\n')


async def test_user_themes_register_and_broken_ones_become_one_notification(tmp_path: Path) -> None:
    write_user_themes(tmp_path)
    driver = UiTestDriver(rounds=[], hold=True)
    app = HandrailApp(
        driver, theme="mine", config_dir=tmp_path, clock=still_clock, persist_theme=False
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "hold")
        assert app.theme == "mine"
        assert "broken" not in app.available_themes
        notes = [n for n in app._notifications if "broken theme" in n.message]
        assert len(notes) == 1
        assert "broken.toml" in notes[0].message and "worse.toml" in notes[0].message


async def test_unknown_theme_falls_back_to_dark_with_a_notice(tmp_path: Path) -> None:
    driver = UiTestDriver(rounds=[], hold=True)
    app = HandrailApp(
        driver, theme="nope", config_dir=tmp_path, clock=still_clock, persist_theme=False
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "hold")
        assert app.theme == "dark"
        assert any("Unknown theme 'nope'" in n.message for n in app._notifications)


async def test_a_changed_theme_is_saved_and_used_next_time(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('# mine\nmodel = "anthropic:x"\n\n[other]\nkey = 1\n')
    driver = UiTestDriver(rounds=[], hold=True)
    app = HandrailApp(driver, config_dir=tmp_path, clock=still_clock)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "hold")
        assert app.theme == "dark"
        app.theme = "high-contrast"
        await pilot.pause()
    assert load_config(tmp_path).theme == "high-contrast"
    text = (tmp_path / "config.toml").read_text()
    assert 'model = "anthropic:x"' in text and "[other]" in text
    again = HandrailApp(UiTestDriver(rounds=[], hold=True), config_dir=tmp_path, clock=still_clock)
    assert again.theme == "high-contrast"


def test_save_theme_replaces_only_the_top_level_key(tmp_path: Path) -> None:
    save_theme(tmp_path, "light")
    save_theme(tmp_path, "dark")
    assert (tmp_path / "config.toml").read_text() == 'theme = "dark"\n'


async def test_the_theme_picker_shows_the_current_theme_first_and_marked(tmp_path: Path) -> None:
    from textual.command import CommandList, CommandPalette

    driver = UiTestDriver(rounds=[], hold=True)
    app = HandrailApp(
        driver, theme="high-contrast", config_dir=tmp_path, clock=still_clock, persist_theme=False
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: driver.waiting == "hold")
        await pilot.press("t")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
        listed = app.screen.query_one(CommandList)
        await wait_until(pilot, lambda: listed.option_count > 1)
        shown = [str(listed.get_option_at_index(k).prompt) for k in range(listed.option_count)]
        assert "high-contrast (current)" in shown[0], shown
        assert not any("(current)" in line for line in shown[1:]), shown
        await pilot.press("escape")

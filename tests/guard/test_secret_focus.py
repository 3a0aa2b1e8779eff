"""A secret goes only into the field it was approved for, wherever the page moves the focus
(issue 25): a page that moves the keyboard focus into another site's frame on a key, on
focus, on input or on a timer never gets a character of the secret into that frame.

Whole runs (real headless Chromium, the real SDK against the fake Messages API, an obedient
model that types ``<secret:TOKEN>`` into "Member number"). The page is
tests/site/guard/focus-thief.html; its iframe (tests/site/guard/secret-field.html?grab=1,
from another loopback address: an out-of-process frame) takes the focus whenever its window
does, and posts every key and every value its field gets to its own server.
"""

# ruff: noqa: F811 (the loopback fixtures are imported by name)
from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import pytest

from core.run.events import ActionDone
from tests.helpers.fake_anthropic import FakeAnthropic
from tests.helpers.hostile import Run, run_hostile, type_into
from tests.helpers.loopback import third_site  # noqa: F401
from tests.helpers.site_server import FixtureSite

pytestmark = pytest.mark.slow

VALUE = "mbr-Kq71-Zx3v-Lp90"
OLD = "old-number-555"


def thief_page(site: FixtureSite, third_site: FixtureSite, steal: str, old: str = OLD) -> str:
    frame = (
        third_site.url("/guard/secret-field.html")
        + "?"
        + urlencode({"label": "Notes", "grab": "1"})
    )
    return (
        site.url("/guard/focus-thief.html")
        + "?"
        + urlencode({"steal": steal, "old": old, "frame": frame})
    )


def caught(server: FixtureSite) -> list[object]:
    """Every key and every value the other site's field reported."""
    return [r.json_body for r in server.posts("/guard/keys")] + [
        r.json_body for r in server.posts("/guard/typed")
    ]


def the_typing(run: Run) -> ActionDone:
    [done] = run.done("type")
    return done


async def type_there(
    tmp_path: Path,
    fake: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
    site: FixtureSite,
    third_site: FixtureSite,
    steal: str,
    text: str = "<secret:TOKEN>",
) -> Run:
    monkeypatch.setenv("MEMBER_TOKEN", VALUE)
    site.clear()
    third_site.clear()
    run = await run_hostile(
        tmp_path,
        fake,
        thief_page(site, third_site, steal),
        [type_into("Member number", text)],
        secrets=(f"TOKEN=MEMBER_TOKEN@127.0.0.1:{site.port}",),
        allow_domains=("127.0.0.1", "127.0.0.3"),
    )
    assert third_site.posts("/guard/loaded"), "the other site's frame was on the page"
    return run


def in_the_field(site: FixtureSite) -> list[str]:
    return [str(r.json_body.get("value")) for r in site.posts("/guard/typed")]


STEALS = ["keydown", "beforeinput", "input", "keyup", "focus", "timer"]


@pytest.mark.parametrize("steal", STEALS)
async def test_a_focus_moved_around_the_secret_never_takes_it_to_another_site(
    tmp_path: Path,
    site: FixtureSite,
    third_site: FixtureSite,
    fake: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
    steal: str,
) -> None:
    # keydown is the reported hole: the Backspace of the clear moved the focus, and the
    # whole secret was typed into the other site's frame.
    run = await type_there(tmp_path, fake, monkeypatch, site, third_site, steal)
    assert caught(third_site) == [] and not any(VALUE in repr(r) for r in third_site.received)
    result = the_typing(run).result
    assert VALUE not in result.message
    held = in_the_field(site)
    if result.ok:
        # The secret went whole into the approved field, replacing the old value.
        assert held[-1:] == [VALUE], held
    else:
        # The page took the focus away before or while the text went in: said, not hidden,
        # and the field holds the secret whole or not at all.
        assert result.code in ("target_changed", "not_focusable"), result
        assert "focus" in result.message, result
        assert all(v in (VALUE, OLD, "") for v in held), held


async def test_the_thief_does_catch_keys_that_are_not_a_secret(
    tmp_path: Path,
    site: FixtureSite,
    third_site: FixtureSite,
    fake: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The control: plain text is typed as keys, and the fixture does see keys that land in
    its frame (so the tests above could fail). handrail says the target changed."""
    run = await type_there(tmp_path, fake, monkeypatch, site, third_site, "keydown", "plain words")
    await third_site.until(lambda got: any(r.path == "/guard/keys" for r in got))
    result = the_typing(run).result
    assert not result.ok and result.code == "target_changed", result

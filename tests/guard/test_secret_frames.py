"""A secret is typed only where the document holding the field is in its scope (issue 25):
a frame from another site, or another port, inside an allowed page never receives it.

Whole runs (real headless Chromium, the real SDK against the fake Messages API, an obedient
model that types ``<secret:TOKEN>`` into the field it names). Every fixture document posts
what its field holds to its own server (tests/site/guard/secret-field.html), so the tests
assert what a user would notice: which server received the value, and what the run said.
Other sites come from other loopback addresses (tests/helpers/loopback.py).
"""

# ruff: noqa: F811 (the loopback fixtures are imported by name)
from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import pytest

from core.browser.browser import Browser
from core.run.events import ActionDone, ApprovalRequest
from tests.helpers import page_eval
from tests.helpers.fake_anthropic import FakeAnthropic
from tests.helpers.hostile import Person, Run, run_hostile, type_into
from tests.helpers.loopback import second_site, third_site  # noqa: F401
from tests.helpers.site_server import FixtureSite

pytestmark = pytest.mark.slow

VALUE = "mbr-Kq71-Zx3v-Lp90"
FIELD = "Member number"


def field_page(server: FixtureSite, **query: str) -> str:
    return server.url("/guard/secret-field.html") + "?" + urlencode(query)


def typed(server: FixtureSite) -> list[str]:
    """What the fields served by ``server`` reported holding."""
    return [str(r.json_body.get("value")) for r in server.posts("/guard/typed")]


def leaked(server: FixtureSite) -> bool:
    """Whether the value reached ``server`` in any request (path, query, body, headers)."""
    return any(VALUE in repr(r) for r in server.received)


def loaded(server: FixtureSite) -> bool:
    return bool(server.posts("/guard/loaded"))


async def type_secret(
    tmp_path: Path,
    fake: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
    start: str,
    scope: str,
    **overrides: object,
) -> Run:
    monkeypatch.setenv("MEMBER_TOKEN", VALUE)
    return await run_hostile(
        tmp_path,
        fake,
        start,
        [type_into(FIELD, "<secret:TOKEN>")],
        secrets=(f"TOKEN=MEMBER_TOKEN@{scope}",),
        **overrides,
    )


def the_typing(run: Run) -> ActionDone:
    [done] = run.done("type")
    return done


def refused_for(run: Run, where: str) -> str:
    """The type action failed, saying which secret and where the field is."""
    done = the_typing(run)
    assert not done.result.ok, done.result
    message = done.result.message
    assert "<secret:TOKEN>" in message and "was not typed" in message, message
    assert where in message, message
    assert VALUE not in message
    return message


@pytest.fixture(autouse=True)
def fresh_servers(site: FixtureSite, other_site: FixtureSite, third_site: FixtureSite) -> None:
    for server in (site, other_site, third_site):
        server.clear()


# --- a frame from another host ------------------------------------------------------------------


async def test_a_frame_from_another_host_never_receives_the_secret(
    tmp_path: Path,
    site: FixtureSite,
    third_site: FixtureSite,
    fake: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The reported hole: scoped to 127.0.0.1, typed into a 127.0.0.3 frame of a 127.0.0.1 page.
    start = field_page(site, frame=field_page(third_site, label=FIELD))
    run = await type_secret(
        tmp_path, fake, monkeypatch, start, "127.0.0.1", allow_domains=("127.0.0.1", "127.0.0.3")
    )
    assert loaded(third_site)  # the frame was there, and the model typed into it
    refused_for(run, third_site.origin)
    assert not leaked(third_site) and typed(third_site) == []


async def test_a_frame_on_another_port_of_the_same_host_never_receives_the_secret(
    tmp_path: Path,
    site: FixtureSite,
    other_site: FixtureSite,
    fake: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    start = field_page(site, frame=field_page(other_site, label=FIELD))
    run = await type_secret(tmp_path, fake, monkeypatch, start, f"127.0.0.1:{site.port}")
    assert loaded(other_site)
    refused_for(run, other_site.origin)
    assert not leaked(other_site)


async def test_a_page_on_another_port_never_receives_the_secret(
    tmp_path: Path,
    site: FixtureSite,
    other_site: FixtureSite,
    fake: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The port hole without any frame: the top page itself is on the other port.
    run = await type_secret(
        tmp_path, fake, monkeypatch, field_page(other_site, label=FIELD), f"127.0.0.1:{site.port}"
    )
    refused_for(run, other_site.origin)
    assert not leaked(other_site)


async def test_the_scoped_port_still_receives_the_secret(
    tmp_path: Path,
    site: FixtureSite,
    fake: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The control for the two above: the fixture does report what its field holds.
    run = await type_secret(
        tmp_path, fake, monkeypatch, field_page(site, label=FIELD), f"http://127.0.0.1:{site.port}"
    )
    assert the_typing(run).result.ok, the_typing(run).result
    assert VALUE in typed(site)


# --- nested frames: the innermost document decides ---------------------------------------------


async def test_an_allowed_frame_inside_a_foreign_frame_receives_it_and_the_foreign_one_does_not(
    tmp_path: Path,
    site: FixtureSite,
    third_site: FixtureSite,
    fake: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inner = field_page(site, label=FIELD)
    start = field_page(site, frame=field_page(third_site, frame=inner))
    run = await type_secret(
        tmp_path, fake, monkeypatch, start, "127.0.0.1", allow_domains=("127.0.0.1", "127.0.0.3")
    )
    assert the_typing(run).result.ok, the_typing(run).result
    assert [r.json_body["where"] for r in site.posts("/guard/typed")] == [inner] * len(typed(site))
    assert VALUE in typed(site)
    assert loaded(third_site) and not leaked(third_site)


async def test_a_foreign_frame_inside_a_same_origin_frame_never_receives_it(
    tmp_path: Path,
    site: FixtureSite,
    third_site: FixtureSite,
    fake: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    start = field_page(site, frame=field_page(site, frame=field_page(third_site, label=FIELD)))
    run = await type_secret(
        tmp_path, fake, monkeypatch, start, "127.0.0.1", allow_domains=("127.0.0.1", "127.0.0.3")
    )
    assert loaded(third_site)
    refused_for(run, third_site.origin)
    assert not leaked(third_site)


# --- srcdoc documents take their parent's origin ------------------------------------------------


async def test_a_srcdoc_frame_of_the_allowed_page_receives_it(
    tmp_path: Path,
    site: FixtureSite,
    fake: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run = await type_secret(
        tmp_path, fake, monkeypatch, field_page(site, srcdoc=FIELD), f"127.0.0.1:{site.port}"
    )
    assert the_typing(run).result.ok, the_typing(run).result
    assert VALUE in typed(site)


async def test_a_srcdoc_frame_inside_a_foreign_frame_never_receives_it(
    tmp_path: Path,
    site: FixtureSite,
    third_site: FixtureSite,
    fake: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # about:srcdoc names no host: inside a frame read through CDP its creator is not proven,
    # so a scoped secret is refused there (even one scoped to the frame's own host would be).
    start = field_page(site, frame=field_page(third_site, srcdoc=FIELD))
    run = await type_secret(
        tmp_path, fake, monkeypatch, start, "127.0.0.1", allow_domains=("127.0.0.1", "127.0.0.3")
    )
    assert loaded(third_site)
    refused_for(run, "about:srcdoc")
    assert not leaked(third_site)


# --- a frame that navigates after the digest ----------------------------------------------------


@pytest.mark.parametrize("first", ["same-origin", "cross-origin"])
async def test_a_frame_that_navigates_away_under_the_approval_never_receives_it(
    tmp_path: Path,
    site: FixtureSite,
    second_site: FixtureSite,
    third_site: FixtureSite,
    fake: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
    first: str,
) -> None:
    # The digest saw the field in an allowed frame (read by our world in the top page, or
    # through CDP); while the person decides, the frame goes to another site showing a field
    # of the same name. The scope was checked on the digest's document; the hands must not
    # type into the new one: its elements are not the ones the digest listed.
    browsers: list[Browser] = []
    moved: list[bool] = []
    foreign = field_page(third_site, label=FIELD)
    allowed = site if first == "same-origin" else second_site

    async def navigate_the_frame(request: ApprovalRequest) -> None:
        if moved or request.action.name != "type":
            return
        moved.append(True)
        tab = browsers[0].current
        assert tab is not None
        await page_eval(tab, f"document.querySelector('iframe').src = {foreign!r}, true")
        await third_site.until(lambda got: any(r.path == "/guard/loaded" for r in got))

    run = await type_secret(
        tmp_path,
        fake,
        monkeypatch,
        field_page(site, frame=field_page(allowed, label=FIELD)),
        "127.0.0.1,127.0.0.2",
        allow_domains=("127.0.0.1", "127.0.0.2", "127.0.0.3"),
        approve="ask",
        person=Person(on_approve=navigate_the_frame),
        browsers=browsers,
    )
    assert moved and loaded(third_site)
    result = the_typing(run).result
    assert not result.ok and "in the current page state" in result.message, result
    assert not leaked(third_site) and typed(third_site) == []

"""Eyes in every frame and every shadow root: closed shadow roots and cross-origin frames,
read by the digest, acted on by the hands and seen by the hand-over detectors.

Real headless Chromium. Cross-origin frames come from fixture servers on other loopback
ADDRESSES (127.0.0.2, 127.0.0.3): those are different sites for Chromium, so with site
isolation the frames really run out of process.
"""

# ruff: noqa: F811 (the loopback fixtures are imported by name)
from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import quote

import pytest

from core.browser.browser import Browser, Tab
from core.eyes.snapshot import Snapshot, SnapshotOptions, take_snapshot
from core.hands import Page, TargetExpectation
from core.hands.tab_watch import STATE_KEY, TabWatch
from core.run.events import HumanRequest, HumanResponse, ModelReplied
from tests.conftest import launch_browser
from tests.helpers import index_of, load, page_eval
from tests.helpers.fake_anthropic import FakeAnthropic
from tests.helpers.hostile import Person, click, run_hostile
from tests.helpers.loopback import (  # noqa: F401
    eyes_browser,
    oop_tab,
    own_browser,
    second_site,
    third_site,
)
from tests.helpers.site_server import FixtureSite

# End to end: whole actions or runs against real Chromium (the fast loop skips them).
pytestmark = pytest.mark.slow


def host_page(site: FixtureSite, frame_url: str, name: str) -> str:
    return site.url("/frames/host.html") + f"?name={quote(name)}&f={quote(frame_url, safe='')}"


def header(name: str, server: FixtureSite) -> str:
    return f'frame "{name}" ({server.origin.removeprefix("http://")}):'


def block_after(text: str, head: str) -> list[str]:
    """The indented lines right after the header line ``head``."""
    lines = text.splitlines()
    start = lines.index(head) + 1
    out = []
    for line in lines[start:]:
        if not line.startswith("  "):
            break
        out.append(line)
    return out


@pytest.fixture
async def page(browser: Browser, tab: Tab) -> AsyncIterator[Page]:
    hands = Page(browser, action_timeout=15)
    yield hands
    hands.close()


async def observe(page: Page, url: str) -> Snapshot:
    result = await page.navigate(url)
    assert result.ok, result.message
    snapshot, _ = await page.observe()
    return snapshot


# -- closed shadow roots -----------------------------------------------------------------


async def test_a_button_in_a_closed_root_is_clicked_and_its_handler_runs(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await observe(page, site.url("/snapshot/closed.html"))
    result = await page.click(index_of(snap, "Sign in now"))
    assert result.ok, result.message
    assert await page_eval(tab, "document.getElementById('clicked').textContent") == (
        "sign-in clicked"
    )


# Closed roots where no guess about "likely hosts" looks (tests/site/closed/roots.html): each
# case hides a password field and a button whose handler tells the server.
HIDDEN_ROOTS = [
    "light-child",
    "body",
    "zero-size",
    "nested",
    "declarative",
    "beside-open",
    "spelled",
]


def roots_page(site: FixtureSite, case: str) -> str:
    return site.url("/closed/roots.html") + f"?case={case}"


def framed_roots(site: FixtureSite, frame_site: FixtureSite, case: str) -> str:
    inner = quote(roots_page(frame_site, case), safe="")
    return site.url("/closed/frame.html") + f"?name=Partner+sign-in&src={inner}"


@pytest.mark.parametrize("case", HIDDEN_ROOTS)
async def test_a_password_field_in_a_hidden_closed_root_hands_over(
    page: Page, site: FixtureSite, case: str
) -> None:
    snap = await observe(page, roots_page(site, case))
    [field] = snap.signals.password_fields
    assert (field.where, field.name) == ("shadow root", "Password"), snap.text
    assert snap.elements[field.index].sensitive == "password"


@pytest.mark.parametrize("case", HIDDEN_ROOTS)
async def test_a_button_in_a_hidden_closed_root_is_clicked_and_its_handler_runs(
    page: Page, tab: Tab, site: FixtureSite, case: str
) -> None:
    site.clear()
    snap = await observe(page, roots_page(site, case))
    result = await page.click(index_of(snap, f"Sign in ({case})"))
    assert result.ok, result.message
    assert await page_eval(tab, "document.getElementById('clicked').textContent") == (
        f"clicked {case}"
    )
    await site.until(lambda got: any(r.path == "/closed/clicked" for r in got))


async def test_a_page_with_open_roots_only_is_read_without_the_whole_tree(
    page: Page, site: FixtureSite
) -> None:
    # The count of the roots' top-level elements agrees with what our world reaches through
    # the open ones: no digest of an ordinary component page reads the whole DOM tree.
    snap = await observe(page, site.url("/snapshot/shadow_password.html"))
    assert snap.signals.password_fields, snap.text
    [audit] = snap.stats["roots"]
    assert audit["elements"] > 0 and not audit["pierced"], audit


async def test_a_closed_root_attached_after_a_digest_is_read_by_the_next(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    first = await observe(page, roots_page(site, "late"))
    assert not first.signals.password_fields
    await page_eval(tab, "window.attachLater()")
    snap, _ = await page.observe()
    assert [f.name for f in snap.signals.password_fields] == ["Password"], snap.text
    assert index_of(snap, "Sign in (late)") in snap.elements


async def test_a_password_field_in_a_closed_root_far_below_the_viewport_hands_over(
    page: Page, site: FixtureSite
) -> None:
    snap = await observe(page, roots_page(site, "far"))
    assert "Sign in (far)" not in snap.text  # beyond the listing margin: counted, not listed
    assert [(f.name, f.where) for f in snap.signals.password_fields] == [
        ("Password", "shadow root")
    ]


async def test_a_closed_root_in_a_same_origin_frame_hands_over(
    page: Page, site: FixtureSite
) -> None:
    snap = await observe(page, framed_roots(site, site, "light-child"))
    [field] = snap.signals.password_fields
    assert snap.elements[field.index].sensitive == "password", snap.text


async def test_a_button_in_a_closed_root_of_a_cross_origin_frame_reaches_its_handler(
    page: Page, site: FixtureSite, other_site: FixtureSite
) -> None:
    # other_site: another origin of the same site, so the frame shares the tab's process.
    other_site.clear()
    snap = await observe(page, framed_roots(site, other_site, "zero-size"))
    assert [f.name for f in snap.signals.password_fields] == ["Password"], snap.text
    result = await page.click(index_of(snap, "Sign in (zero-size)"))
    assert result.ok, result.message
    await other_site.until(
        lambda got: any(
            r.query.get("case") == ["zero-size"] for r in got if r.path == "/closed/clicked"
        )
    )


async def test_reading_closed_roots_leaves_no_dom_events_behind(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    # The count that finds closed roots enables CDP's DOM domain (and here reads the whole
    # tree): it must be disabled again, or every later change of the page is pushed to us.
    await observe(page, roots_page(site, "light-child"))
    pushed: list[str] = []
    for event in ("DOM.childNodeInserted", "DOM.childNodeCountUpdated", "DOM.attributeModified"):
        tab.session.on(event, lambda _p, e=event: pushed.append(e))
    await page_eval(
        tab,
        "document.getElementById('host').append(document.createElement('i'));"
        "document.getElementById('host').setAttribute('data-x', '1'); true",
    )
    await page_eval(tab, "new Promise((r) => requestAnimationFrame(() => r(true)))")
    assert pushed == []


# -- cross-origin frames in the digest ---------------------------------------------------


async def test_a_cross_origin_frames_fields_are_listed_under_its_header(
    tab: Tab, site: FixtureSite, other_site: FixtureSite
) -> None:
    # other_site is another origin on the same site: the frame shares the tab's process.
    await load(tab, host_page(site, other_site.url("/frames/fields.html"), "Partner delivery"))
    snap = await take_snapshot(tab)
    block = block_after(snap.text, header("Partner delivery", other_site))
    assert "  Partner's delivery form" in block
    names = {
        snap.elements[int(m)].name for m in re.findall(r"^\s+\[(\d+)\]", "\n".join(block), re.M)
    }
    assert names == {"Postcode", "Gift wrap", "Delivery slot", "Save delivery"}
    # In reading order: the frame sits between the text before it and the text after it.
    lines = snap.text.splitlines()
    head = lines.index(header("Partner delivery", other_site))
    assert lines.index("Check the fields in the partner's frame below.") < head
    assert lines.index("After the frame: the end of the page.") > head + len(block)


async def test_frame_indexes_are_stable_from_one_digest_to_the_next(
    tab: Tab, site: FixtureSite, other_site: FixtureSite
) -> None:
    await load(tab, host_page(site, other_site.url("/frames/fields.html"), "Partner delivery"))
    first = await take_snapshot(tab)
    second_digest = await take_snapshot(tab)
    assert second_digest.text == first.text
    postcode = [e for e in first.elements.values() if e.name == "Postcode"]
    assert len(postcode) == 1 and postcode[0].frame_label == header(
        "Partner delivery", other_site
    ).removesuffix(":")
    # The index is the tab's: no element of the top document has it.
    top = [e.index for e in first.elements.values() if e.frame_label is None]
    assert postcode[0].index not in top


async def test_a_frame_that_appears_later_is_marked_new(
    tab: Tab, site: FixtureSite, other_site: FixtureSite
) -> None:
    await load(tab, site.url("/frames/host.html"))
    await take_snapshot(tab)
    await page_eval(
        tab,
        f"(() => {{ const f = document.createElement('iframe'); f.title = 'Late partner';"
        f" f.src = {other_site.url('/frames/fields.html')!r};"
        " return new Promise((r) => { f.onload = () => r(true); document.body.prepend(f); }); })()",
    )
    snap = await take_snapshot(tab)
    block = block_after(snap.text, header("Late partner", other_site))
    assert any(line.startswith("  *[") and "Save delivery" in line for line in block), snap.text


async def test_a_nested_cross_origin_frame_is_listed_inside_its_parent(
    tab: Tab, site: FixtureSite, other_site: FixtureSite
) -> None:
    # The inner frame is cross-origin to its parent (other_site), though not to the tab.
    outer = other_site.url("/frames/nest.html") + "?inner=" + quote(site.url("/frames/fields.html"))
    await load(tab, host_page(site, outer, "Outer partner"))
    snap = await take_snapshot(tab)
    block = block_after(snap.text, header("Outer partner", other_site))
    inner_head = "  " + header("Inner partner", site)
    assert inner_head in block, snap.text
    inner = block[block.index(inner_head) + 1 :]
    assert any(line.startswith("    [") and "Save delivery" in line for line in inner)
    assert [f.depth for f in snap.frames if f.cross_origin] == [1, 2]


async def test_a_password_field_in_a_cross_origin_frame_is_signalled_with_its_frame(
    tab: Tab, site: FixtureSite, other_site: FixtureSite
) -> None:
    await load(tab, host_page(site, other_site.url("/frames/signin.html"), "Sign in with Partner"))
    snap = await take_snapshot(tab)
    [field] = snap.signals.password_fields
    assert field.where == header("Sign in with Partner", other_site).removesuffix(":")
    assert snap.elements[field.index].sensitive == "password"


async def test_the_size_cap_counts_frame_contents_and_names_the_frames_cut(
    tab: Tab, site: FixtureSite, other_site: FixtureSite
) -> None:
    await load(tab, host_page(site, other_site.url("/frames/long.html"), "Partner offers"))
    snap = await take_snapshot(tab, options=SnapshotOptions(max_chars=1500))
    assert len(snap.text) <= 1500
    assert snap.truncated is not None
    assert header("Partner offers", other_site).removesuffix(":") in snap.truncated
    assert snap.text.splitlines()[-1] == snap.truncated


# -- out-of-process frames (other sites) ---------------------------------------------------


async def test_an_out_of_process_frames_fields_are_listed_under_its_header(
    oop_tab: Tab,
    site: FixtureSite,
    second_site: FixtureSite,
) -> None:
    await load(oop_tab, host_page(site, second_site.url("/frames/fields.html"), "Partner"))
    snap = await take_snapshot(oop_tab)
    block = block_after(snap.text, header("Partner", second_site))
    assert any(line.startswith("  [") and "Save delivery" in line for line in block), snap.text
    [save] = [e for e in snap.elements.values() if e.name == "Save delivery"]
    assert save.frame == second_site.url("/frames/fields.html")
    again = await take_snapshot(oop_tab)
    assert again.text == snap.text


async def test_a_nested_out_of_process_frame_is_listed_inside_its_parent(
    oop_tab: Tab,
    site: FixtureSite,
    second_site: FixtureSite,
    third_site: FixtureSite,
) -> None:
    outer = second_site.url("/frames/nest.html") + "?inner=" + third_site.url("/frames/fields.html")
    await load(oop_tab, host_page(site, outer, "Outer partner"))
    snap = await take_snapshot(oop_tab)
    block = block_after(snap.text, header("Outer partner", second_site))
    inner_head = "  " + header("Inner partner", third_site)
    assert inner_head in block, snap.text
    inner = block[block.index(inner_head) + 1 :]
    assert any(line.startswith("    [") and "Postcode" in line for line in inner), snap.text


# -- hand-overs for what lies in frames (whole runs: the agent, the gate, the detectors) -----


class Aborts(Person):
    """A person who takes over at the hand-over and ends the run there."""

    async def human(self, request: HumanRequest) -> HumanResponse:
        self.humans.append(request)
        return "abort"


def checkout(site: FixtureSite, card_url: str) -> str:
    name = quote("Secure card payment")
    return site.url("/frames/checkout.html") + f"?name={name}&card={quote(card_url, safe='')}"


async def test_a_card_frame_on_an_allowed_host_hands_over_and_pay_is_never_clicked(
    tmp_path: Path,
    site: FixtureSite,
    second_site: FixtureSite,
    fake: FakeAnthropic,
) -> None:
    site.clear()
    person = Aborts()
    run = await run_hostile(
        tmp_path,
        fake,
        checkout(site, second_site.url("/frames/card.html")),
        [click("Pay now")],
        person=person,
        allow_domains=("127.0.0.1", "127.0.0.2"),
    )
    [human] = person.humans
    assert human.kind == "payment"
    assert f'in frame "Secure card payment" (127.0.0.2:{second_site.port})' in human.detail
    assert run.intents() == [] and run.all(ModelReplied) == []
    assert site.posts("/frames/paid") == []


async def test_a_sign_in_frame_with_a_password_field_hands_over(
    tmp_path: Path,
    site: FixtureSite,
    second_site: FixtureSite,
    fake: FakeAnthropic,
) -> None:
    person = Aborts()
    await run_hostile(
        tmp_path,
        fake,
        host_page(site, second_site.url("/frames/signin.html"), "Sign in with Partner ID"),
        [click("Continue")],
        person=person,
        allow_domains=("127.0.0.1", "127.0.0.2"),
    )
    [human] = person.humans
    assert human.kind == "password"
    assert 'Password in frame "Sign in with Partner ID"' in human.detail


async def test_a_card_frame_on_a_blocked_host_hands_over_naming_the_host(
    tmp_path: Path,
    site: FixtureSite,
    third_site: FixtureSite,
    fake: FakeAnthropic,
) -> None:
    site.clear()
    third_site.clear()
    person = Aborts()
    run = await run_hostile(
        tmp_path,
        fake,
        checkout(site, third_site.url("/frames/card.html")),
        [click("Pay now")],
        person=person,
        allow_domains=("127.0.0.1",),
    )
    [human] = person.humans
    assert human.kind == "payment"
    host = f"127.0.0.3:{third_site.port}"
    assert f"the payment form is served from {host}, which this run may not load" in human.detail
    assert third_site.received == [] and site.posts("/frames/paid") == []
    # The log says the same, with the frame's header.
    [pause] = [r for r in run.log_records if r["type"] == "human_pause"]
    assert host in json.dumps(pause)


# -- the hands inside out-of-process frames -------------------------------------------------


@pytest.fixture
async def oop_page(eyes_browser: Browser, oop_tab: Tab) -> AsyncIterator[Page]:
    hands = Page(eyes_browser, action_timeout=15)
    yield hands
    hands.close()


async def test_a_closed_root_in_an_out_of_process_frame_hands_over_and_its_button_works(
    oop_page: Page, oop_tab: Tab, site: FixtureSite, second_site: FixtureSite
) -> None:
    second_site.clear()
    snap = await observe(oop_page, framed_roots(site, second_site, "nested"))
    [field] = snap.signals.password_fields
    assert field.where == f"a shadow root in {header('Partner sign-in', second_site)[:-1]}"
    result = await oop_page.click(index_of(snap, "Sign in (nested)"))
    assert result.ok, result.message
    await second_site.until(lambda got: any(r.path == "/closed/clicked" for r in got))


async def test_a_click_inside_an_out_of_process_frame_reaches_its_handler(
    oop_page: Page, oop_tab: Tab, site: FixtureSite, second_site: FixtureSite
) -> None:
    second_site.clear()
    snap = await observe(oop_page, host_page(site, second_site.url("/frames/form.html"), "Partner"))
    result = await oop_page.click(index_of(snap, "Tell the partner"))
    assert result.ok, result.message
    await second_site.until(lambda got: any(r.path == "/frames/report" for r in got))
    assert [p.json_body for p in second_site.posts("/frames/report")] == [
        {"what": "clicked", "trusted": True}
    ]


async def test_typing_inside_an_out_of_process_frame_reaches_its_server(
    oop_page: Page, oop_tab: Tab, site: FixtureSite, second_site: FixtureSite
) -> None:
    second_site.clear()
    snap = await observe(oop_page, host_page(site, second_site.url("/frames/form.html"), "Partner"))
    typed = await oop_page.type(index_of(snap, "Postcode"), "SW1A 1AA")
    assert typed.ok, typed.message
    sent = await oop_page.click(index_of(snap, "Send postcode"))
    assert sent.ok, sent.message
    await second_site.until(lambda got: any(r.path == "/frames/sent" for r in got))
    assert [p.form for p in second_site.posts("/frames/sent")] == [{"postcode": ["SW1A 1AA"]}]


# Frames drawn scaled, rotated or moved by CSS transforms: the hands map points through
# the frames' quads, and the digest's boxes agree with the dispatch's.
TRANSFORMS = [
    ("t", "rotate(9deg) scale(1.25)"),
    ("t", "translate(60px, 30px) scale(0.7)"),
    ("wrap", "scale(1.4) skewX(-8deg)"),
]


def transformed(site: FixtureSite, frame_url: str, how: tuple[str, str]) -> str:
    return host_page(site, frame_url, "Partner") + f"&{how[0]}={quote(how[1])}"


def approved(snap: Snapshot, index: int) -> TargetExpectation:
    element = snap.elements[index]
    return TargetExpectation(url=snap.url, index=index, name=element.name, rect=element.rect)


@pytest.mark.parametrize("how", TRANSFORMS, ids=[t[1] for t in TRANSFORMS])
async def test_typing_inside_a_transformed_out_of_process_frame_reaches_its_server(
    oop_page: Page, oop_tab: Tab, site: FixtureSite, second_site: FixtureSite, how: tuple[str, str]
) -> None:
    second_site.clear()
    snap = await observe(oop_page, transformed(site, second_site.url("/frames/form.html"), how))
    postcode = index_of(snap, "Postcode")
    typed = await oop_page.type(postcode, "SW1A 1AA", expect=approved(snap, postcode))
    assert typed.ok, typed.message
    send = index_of(snap, "Send postcode")
    sent = await oop_page.click(send, expect=approved(snap, send))
    assert sent.ok, sent.message
    await second_site.until(lambda got: any(r.path == "/frames/sent" for r in got))
    assert [p.form for p in second_site.posts("/frames/sent")] == [{"postcode": ["SW1A 1AA"]}]


@pytest.mark.parametrize("how", TRANSFORMS, ids=[t[1] for t in TRANSFORMS])
async def test_a_click_inside_a_transformed_cross_origin_frame_reaches_its_handler(
    page: Page, site: FixtureSite, other_site: FixtureSite, how: tuple[str, str]
) -> None:
    # other_site: the frame is in the tab's own process (another origin of the same site).
    other_site.clear()
    snap = await observe(page, transformed(site, other_site.url("/frames/form.html"), how))
    ping = index_of(snap, "Tell the partner")
    result = await page.click(ping, expect=approved(snap, ping))
    assert result.ok, result.message
    await other_site.until(lambda got: any(r.path == "/frames/report" for r in got))
    assert [p.json_body for p in other_site.posts("/frames/report")] == [
        {"what": "clicked", "trusted": True}
    ]


async def test_a_frame_replaced_after_approval_is_not_dispatched(
    oop_page: Page, oop_tab: Tab, site: FixtureSite, second_site: FixtureSite
) -> None:
    second_site.clear()
    snap = await observe(oop_page, host_page(site, second_site.url("/frames/form.html"), "Partner"))
    button = snap.elements[index_of(snap, "Tell the partner")]
    approved = TargetExpectation(
        url=snap.url, index=button.index, name=button.name, rect=button.rect
    )
    # While the person decides, the page swaps the frame for a fresh copy of the same form.
    await page_eval(
        oop_tab,
        "new Promise((resolve) => { const old = document.querySelector('iframe');"
        " const f = old.cloneNode(); f.onload = () => resolve(true); old.replaceWith(f); })",
    )
    result = await oop_page.click(button.index, expect=approved)
    assert not result.ok and result.code == "target_changed", result
    # The fresh copy's button got no click either.
    await oop_page.observe()
    assert second_site.posts("/frames/report") == []


async def test_a_react_form_inside_an_out_of_process_frame_posts_what_was_typed_and_selected(
    oop_page: Page, oop_tab: Tab, site: FixtureSite, second_site: FixtureSite
) -> None:
    second_site.clear()
    url = host_page(site, second_site.url("/page/react_form.html"), "Order form")
    snap = await observe(oop_page, url)
    assert (await oop_page.type(index_of(snap, "Full name"), "Ada Lovelace")).ok
    assert (await oop_page.type(index_of(snap, "Email"), "ada@example.org")).ok
    selected = await oop_page.select_option(index_of(snap, "Size"), "large")
    assert selected.ok and "Large" in selected.message, selected.message
    sent = await oop_page.click(index_of(snap, "Send order"))
    assert sent.ok, sent.message
    await second_site.until(lambda got: any(r.path == "/page/react-post" for r in got))
    assert [p.form for p in second_site.posts("/page/react-post")] == [
        {"name": ["Ada Lovelace"], "email": ["ada@example.org"], "size": ["l"]}
    ]


async def test_a_checkbox_inside_an_out_of_process_frame_reports_its_new_state(
    oop_page: Page, oop_tab: Tab, site: FixtureSite, second_site: FixtureSite
) -> None:
    snap = await observe(oop_page, host_page(site, second_site.url("/frames/fields.html"), "P"))
    result = await oop_page.click(index_of(snap, "Gift wrap"))
    assert result.ok and "is now checked" in result.message, result.message
    again, _ = await oop_page.observe()
    assert again.elements[index_of(again, "Gift wrap")].attrs.get("checked") == ""


async def test_an_overlay_in_the_parent_over_a_frame_is_named_and_the_click_refused(
    oop_page: Page, oop_tab: Tab, site: FixtureSite, second_site: FixtureSite
) -> None:
    second_site.clear()
    url = host_page(site, second_site.url("/frames/form.html"), "Partner") + "&cover=1"
    snap = await observe(oop_page, url)
    result = await oop_page.click(index_of(snap, "Tell the partner"))
    assert not result.ok and result.code == "not_actionable", result
    assert 'covered by <div id=newsletter> "Subscribe to our newsletter"' in result.message
    await oop_page.observe()
    assert second_site.posts("/frames/report") == []


# -- site isolation off: other sites' frames share the tab's process -----------------------


async def test_without_site_isolation_a_cross_site_frame_is_read_and_acted_in(
    tmp_path: Path, site: FixtureSite, second_site: FixtureSite
) -> None:
    browser = await launch_browser(
        tmp_path / "profile", extra_args=("--disable-site-isolation-trials",)
    )
    try:
        second_site.clear()
        hands = Page(browser, action_timeout=15)
        snap = await observe(hands, host_page(site, second_site.url("/frames/form.html"), "P"))
        assert browser.current is not None
        assert (
            await page_eval(browser.current, "document.querySelector('iframe').contentDocument")
            is None
        )
        # No child targets are followed in this browser: the frame was read (its header has
        # no "not readable") through the tab's own session, in the tab's own process.
        assert header("P", second_site) in snap.text.splitlines()
        result = await hands.click(index_of(snap, "Tell the partner"))
        assert result.ok, result.message
        await second_site.until(lambda got: any(r.path == "/frames/report" for r in got))
        hands.close()
    finally:
        await browser.close()


async def test_a_file_input_inside_an_out_of_process_frame_takes_the_upload(
    eyes_browser: Browser, oop_tab: Tab, site: FixtureSite, second_site: FixtureSite, tmp_path: Path
) -> None:
    folder = tmp_path / "uploads"
    folder.mkdir()
    (folder / "cv.pdf").write_bytes(b"%PDF-1.4 fixture")
    hands = Page(eyes_browser, action_timeout=15, upload_dir=folder)
    try:
        snap = await observe(hands, host_page(site, second_site.url("/page/upload.html"), "Docs"))
        result = await hands.upload_file(index_of(snap, "Attachment"), "cv.pdf")
        assert result.ok and result.message.endswith("it now holds: cv.pdf"), result.message
        after, _ = await hands.observe()
    finally:
        hands.close()
    assert "  cv.pdf" in block_after(after.text, header("Docs", second_site))


async def test_a_loaded_out_of_process_frame_leaves_no_request_in_flight(
    oop_page: Page, oop_tab: Tab, site: FixtureSite, second_site: FixtureSite
) -> None:
    # Chrome reports the request of a frame's document that goes out of process on the
    # tab's session, and its end on the frame's own: counted as in flight for ever, it made
    # every action on the page wait out its whole cap (1.5 s, a navigation 5 s).
    await observe(oop_page, host_page(site, second_site.url("/frames/form.html"), "Partner"))
    watch = oop_tab.state[STATE_KEY]
    assert isinstance(watch, TabWatch)
    assert watch.own_process_frames, "the partner frame did not go out of process"
    assert watch.inflight == {}


async def test_key_presses_reach_a_focused_field_inside_an_out_of_process_frame(
    oop_page: Page, oop_tab: Tab, site: FixtureSite, second_site: FixtureSite
) -> None:
    second_site.clear()
    snap = await observe(oop_page, host_page(site, second_site.url("/frames/form.html"), "Partner"))
    assert (await oop_page.click(index_of(snap, "Postcode"))).ok
    for key in ("N", "1", "Enter"):
        pressed = await oop_page.press_key(key)
        assert pressed.ok, pressed.message
    await second_site.until(lambda got: any(r.path == "/frames/sent" for r in got))
    assert [p.form for p in second_site.posts("/frames/sent")] == [{"postcode": ["N1"]}]


async def test_a_password_field_in_a_frame_far_below_the_fold_is_still_signalled(
    oop_tab: Tab, site: FixtureSite, second_site: FixtureSite
) -> None:
    url = site.url("/frames/below.html") + "?f=" + quote(second_site.url("/frames/signin.html"))
    await load(oop_tab, url)
    snap = await take_snapshot(oop_tab)
    assert "frame " not in snap.text  # beyond the listing margin: not listed...
    [field] = snap.signals.password_fields  # ...but its password field is found
    assert field.where == header("Partner sign-in", second_site).removesuffix(":")


@pytest.mark.parametrize("how", TRANSFORMS, ids=[t[1] for t in TRANSFORMS])
async def test_a_click_in_a_same_origin_frame_inside_a_transformed_frame_reaches_its_handler(
    page: Page, site: FixtureSite, other_site: FixtureSite, how: tuple[str, str]
) -> None:
    # The outer frame (other_site, read through CDP) is transformed; the inner one is of its
    # own origin, so the outer frame's world walks it inline. The digest's box must be where
    # the hands find the element, or the approved click is refused as moved.
    other_site.clear()
    inner = other_site.url("/frames/form.html")
    outer = other_site.url(f"/frames/nest.html?inner={quote(inner, safe='')}")
    snap = await observe(page, transformed(site, outer, how))
    ping = index_of(snap, "Tell the partner")
    result = await page.click(ping, expect=approved(snap, ping))
    assert result.ok, result.message
    await other_site.until(lambda got: any(r.path == "/frames/report" for r in got))
    assert [p.json_body for p in other_site.posts("/frames/report")] == [
        {"what": "clicked", "trusted": True}
    ]

"""A click into a rich-text or code editor, approved by the name the digest gave it, is done
(issue 26, a regression of the one-naming change: the hands named an editor by its label
alone while the digest named it by its text, and refused the click as "relabelled")."""

from __future__ import annotations

import pytest

from core.browser.browser import Tab
from core.hands import Page
from core.hands.expect import TargetExpectation
from tests.helpers import open_page, page_eval
from tests.helpers.site_server import FixtureSite

pytestmark = pytest.mark.slow

EDITORS = ["plain", "labelled", "cm6", "quill", "prose"]


@pytest.mark.parametrize("editor", EDITORS)
async def test_a_click_into_an_editor_is_done_under_the_name_it_was_approved_by(
    page: Page, tab: Tab, site: FixtureSite, editor: str
) -> None:
    snap = await open_page(page, site, "/page/editors_named.html")
    listed = [e for _, e in sorted(snap.elements.items())]
    assert len(listed) == len(EDITORS), snap.text
    element = listed[EDITORS.index(editor)]
    index = element.index
    expect = TargetExpectation(url=snap.url, index=index, name=element.name, rect=element.rect)
    result = await page.click(index, expect=expect)
    assert result.ok, (element.name, result.message)
    assert editor in await page_eval(tab, "window.__clicks")


async def test_an_editor_with_a_role_is_a_field_named_by_its_label_with_its_text_as_value(
    page: Page, site: FixtureSite
) -> None:
    snap = await open_page(page, site, "/page/editors_named.html")
    listed = [e for _, e in sorted(snap.elements.items())]
    assert all(e.editable for e in listed), snap.text
    labelled, cm6 = listed[1], listed[2]
    assert labelled.name == "Biography" and labelled.attrs["value"] == "Born in London."
    # CodeMirror 6's shape is a code editor: its lines follow its line, as it draws them.
    assert cm6.name == "" and cm6.attrs["editor"] == "codemirror"
    assert cm6.line.endswith("\n  │select * from trains\n  │where price < 40")

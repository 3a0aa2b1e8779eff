"""Code and rich-text editors from npm, as a person uses them (issue 26, class 4).

A code editor (CodeMirror 5 and 6, Monaco, Ace) draws its own text and types through a field
nobody sees; a rich-text editor (Quill, TipTap, TinyMCE's frame) is a contenteditable with a
toolbar. Each is one element of the digest, named by its label, whose value is the text a
person sees in it; `type` replaces or adds text through the editor's own input path. What
was typed is checked through each library's own API, never through what handrail reports.

Pages: tests/site/gallery/editors/ (the libraries come from tests/site/package.json).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from core.browser.browser import Tab
from core.eyes.snapshot import Snapshot
from core.hands import Page
from tests.helpers import index_of, open_page, page_eval
from tests.helpers.site_server import FixtureSite

pytestmark = pytest.mark.slow

# Until the page's editor exists (Monaco and TinyMCE load their parts after the page does),
# on the page's own frames.
READY = "new Promise((r) => { const t = () => (window.editor ? r(true) : requestAnimationFrame(t)); t(); })"


@dataclass(frozen=True)
class CodeEditor:
    page: str
    kind: str
    name: str
    value: str  # the library's own text, read in the page
    first_line: str


CODE_EDITORS = [
    CodeEditor(
        "codemirror5", "codemirror", "Custom SQL query", "editor.getValue()", "select name, departs"
    ),
    CodeEditor(
        "codemirror6",
        "codemirror",
        "Migration statement",
        "editor.state.doc.toString()",
        "update trips",
    ),
    CodeEditor(
        "monaco", "monaco", "Transform code", "editor.getValue()", "function transform(price) {"
    ),
    CodeEditor("ace", "ace", "Template source", "editor.getValue()", "Dear {{ name }},"),
]

# What a model would type into code: indentation, brackets and quotes an editor would
# indent or close a second time if the text came in as key presses.
CODE = (
    'function total(trips) {\n  return trips.map((t) => t["price"]).reduce((a, b) => a + b, 0);\n}'
)


async def open_editor(page: Page, tab: Tab, site: FixtureSite, path: str) -> Snapshot:
    await open_page(page, site, path)
    await page_eval(tab, READY)
    snap, _ = await page.observe()
    return snap


def code_block(snap: Snapshot, index: int) -> list[str]:
    """The lines the digest shows inside the editor [index]: those after its line."""
    lines = snap.text.splitlines()
    start = next(k for k, line in enumerate(lines) if line.lstrip("*~").startswith(f"[{index}]<"))
    block = []
    for line in lines[start + 1 :]:
        if not line.startswith("  │"):
            break
        block.append(line.removeprefix("  │"))
    return block


@pytest.mark.parametrize("editor", CODE_EDITORS, ids=lambda e: e.page)
async def test_a_code_editor_is_one_text_field_showing_its_lines(
    page: Page, tab: Tab, site: FixtureSite, editor: CodeEditor
) -> None:
    snap = await open_editor(page, tab, site, f"/gallery/editors/{editor.page}.html")
    index = index_of(snap, editor.name)
    element = snap.elements[index]
    assert element.role == "textbox"
    assert f"editor={editor.kind}" in element.line
    shown = await page_eval(tab, editor.value)
    assert code_block(snap, index) == shown.split("\n")
    # Its lines are its value, not page text beside it.
    assert snap.text.count(editor.first_line) == 1


@pytest.mark.parametrize("editor", CODE_EDITORS, ids=lambda e: e.page)
async def test_typing_into_a_code_editor_replaces_then_adds_text_as_written(
    page: Page, tab: Tab, site: FixtureSite, editor: CodeEditor
) -> None:
    snap = await open_editor(page, tab, site, f"/gallery/editors/{editor.page}.html")
    index = index_of(snap, editor.name)
    # A click into the editor is a click on it, not a target "relabelled" by its contents.
    clicked = await page.click(index)
    assert clicked.ok, clicked.message

    replaced = await page.type(index, CODE)
    assert replaced.ok, replaced.message
    assert await page_eval(tab, editor.value) == CODE
    assert "changed it" not in replaced.message and "empty" not in replaced.message

    added = await page.type(index, "\ntotal([]);", clear=False)
    assert added.ok, added.message
    assert await page_eval(tab, editor.value) == CODE + "\ntotal([]);"

    snap, _ = await page.observe()
    assert code_block(snap, index_of(snap, editor.name))[-1] == "total([]);"


async def test_a_long_script_shows_the_lines_in_its_box_and_says_more_lie_below(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_editor(page, tab, site, "/gallery/editors/codemirror6.html?long")
    index = index_of(snap, "Migration statement")
    block = code_block(snap, index)
    # The box shows a few of the 200 lines: the first ones, and the range says so.
    assert 3 <= len(block) < 20
    assert block[0] == "update trips set seats = 1 where id = 1;"
    assert f'lines="1-{len(block)}, more below"' in snap.elements[index].line

    await page_eval(tab, "editor.scrollDOM.scrollTop = editor.scrollDOM.scrollHeight")
    await page_eval(
        tab, "new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"
    )
    snap, _ = await page.observe()
    index = index_of(snap, "Migration statement")
    block = code_block(snap, index)
    assert block[-1] == "update trips set seats = 200 where id = 200;"
    assert "more above" in snap.elements[index].line
    assert "more below" not in snap.elements[index].line


@dataclass(frozen=True)
class RichEditor:
    page: str
    name: str
    text: str  # the library's own plain text
    html: str  # and its formatted content
    bold: str  # the toolbar button that makes text bold


RICH_EDITORS = [
    RichEditor("quill", "", "editor.getText()", "editor.root.innerHTML", "bold"),
    RichEditor("tiptap", "Tour description", "editor.getText()", "editor.getHTML()", "B"),
    RichEditor(
        "tinymce",
        "Rich Text Area",
        "editor.getContent({format: 'text'})",
        "editor.getContent()",
        "Bold",
    ),
]


def rich_index(snap: Snapshot, editor: RichEditor) -> int:
    if editor.name:
        return index_of(snap, editor.name)
    [index] = [e.index for e in snap.elements.values() if e.editable and e.tag == "div"]
    return index


@pytest.mark.parametrize("editor", RICH_EDITORS, ids=lambda e: e.page)
async def test_a_rich_text_editor_takes_text_and_its_named_toolbar_formats_it(
    page: Page, tab: Tab, site: FixtureSite, editor: RichEditor
) -> None:
    snap = await open_editor(page, tab, site, f"/gallery/editors/{editor.page}.html")
    index = rich_index(snap, editor)
    typed = await page.type(index, "Meet at the station.")
    assert typed.ok, typed.message
    assert (await page_eval(tab, editor.text)).strip() == "Meet at the station."

    # Bold on, then more text: the library holds it as bold.
    snap, _ = await page.observe()
    bold = await page.click(index_of(snap, editor.bold))
    assert bold.ok, bold.message
    snap, _ = await page.observe()
    added = await page.type(rich_index(snap, editor), " Bring water.", clear=False)
    assert added.ok, added.message
    html = await page_eval(tab, editor.html)
    assert "<strong>" in html and "Bring water." in html.split("<strong>", 1)[1], html
    assert (await page_eval(tab, editor.text)).strip() == "Meet at the station. Bring water."


async def test_text_for_an_editor_never_lands_where_the_page_moved_the_focus(
    page: Page, tab: Tab, site: FixtureSite
) -> None:
    snap = await open_editor(page, tab, site, "/gallery/editors/focus-thief.html")
    result = await page.type(index_of(snap, "Custom SQL query"), "drop table trips;")
    assert not result.ok and result.code == "target_changed", result.message
    assert await page_eval(tab, "document.getElementById('notes').value") == ""
    assert "drop table" not in await page_eval(tab, "editor.getValue()")

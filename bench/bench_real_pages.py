"""handrail's digest against Playwright's AI-mode ARIA snapshot and browser-use's state text,
on pages of real applications and of the widget gallery, in one Chromium, on the same tab.

Run (bench/requirements.txt says how to make ``.venv-bench``)::

    .venv-bench/bin/python bench/bench_real_pages.py [--repeat 12] [--only jupyter]
        [--json bench/results/real_pages.json] [--show-missing]

One headless Chromium (bench/real_apps.py: ``--no-sandbox --disable-background-networking
--disable-component-update --disable-sync --no-first-run --disable-quic``, and a resolver
that keeps every page on loopback) is shared by the three tools. Each page gets a tab of its
own, opened by handrail; Playwright (``connect_over_cdp``) and browser-use (its
``BrowserSession`` on the same CDP endpoint, focused on that tab) read the very same tab.
Per page, after the page's own readiness test holds (Playwright's ``wait_for_function``):

- handrail: ``core.eyes.snapshot.take_snapshot`` (as a run takes it, listener discovery and
  the closed-root audit included), ``repeat`` calls, median; tokens of the digest text.
- Playwright: ``page.locator("body").aria_snapshot(mode="ai")``, same.
- browser-use: ``DomService.get_serialized_dom_tree()`` then ``llm_representation()`` (the
  text its agent puts in the prompt as the interactive elements), same.

Tokens are counted with the o200k_base BPE (the ``bpe-openai`` package ships its table, so
nothing is downloaded); it is an OpenAI tokenizer, not Claude's: the ratios are what count.

Checks, after the timings (they enable Chrome's accessibility tree, which would slow what
follows): "addressable", every visible interactive element in the viewport (a native control
or an ARIA widget role, shown, at least 2x2 px, hit at its centre) is listed in the digest,
itself or through the control that holds it; "AX names missing", nodes of Chrome's own
accessibility tree (``Accessibility.getFullAXTree``) with an interactive role and a non-empty
name, visible in the viewport as above, whose name does not appear in the digest (ignoring
case: Chrome's names follow CSS text-transform).

Pages: the Django admin (changelist, change form) and Datasette (table, row, query), started
by the tests' own starters (tests/apps/servers.py); Jupyter Notebook 7 (tree, a notebook)
and a Gradio Blocks app, started here (bench/real_apps.py); every
``tests/site/gallery/*.html`` that exists when it runs.

Figures on 2026-12-07 16:36 UTC (load average 4.0), ``--repeat 12`` (each order of the three
tools twice, see ``timed_in_turn``), median, ms and o200k tokens; a document's first digest
lists every listener (and its second, in ask mode, hands its nodes over once), so the median
is the figure a run pays on a page it stays on, and the first call is shown in the parts below
(Playwright's first calls cost too: its script, 40-90 ms):

    page                 handrail        Playwright ai    browser-use
    Django changelist    14    1,003      16    2,808      50    1,373
    Django change form   14      723      15    1,902      60    1,032
    Datasette table      11      864      16    2,526      54    1,231
    Datasette row         4      113       6      440      17      163
    Datasette query       5      301       8      814      25      395
    Jupyter tree         16      252      21      870     123      969
    Jupyter notebook     24      556      29    1,421     188    2,548
    Gradio Blocks         7      219       9      648      40      454
    real apps, sum       96    4,031     121   11,429     556    8,165
    25 pages, sum       184    5,330     251   14,836     910   11,437

Three runs in a row: every page faster than Playwright in each, by 3-36% on the real apps
(the closest: Django's change form, 14.3 against 14.7 ms) and 1-68% on the gallery (the
closest: Monaco, jQuery UI and AG Grid, within 0.1-1.5 ms); tokens 0.47x browser-use's
(5,330 against 11,437: 0.466; its text of the notebook varies by 500 tokens with the kernel's
state, which moves the ratio between 0.46 and 0.49); 219/219 visible controls addressable;
none of Chrome's 218 names missing (the check counts nothing a clipping 1px box hides: Tom
Select's replaced <select> is there for a screen reader, not shown). Steps to this
(2026-12-07): the questions of the latest walk in ask mode asked again beside the next walk,
ahead of it (the notebook 45-60 -> 20-30 ms); the DOM domain left on between closed-root
audits (the audit is the search alone); jQuery's handlers read as its dispatch splits them,
a kept ``events`` object read with V8's preview of its lists (jQuery UI's page 8-10 -> 4-6
ms); a box read once per walk, a computed style property once per element (walks 5-10%
shorter); a role shown as the tag and no closing tag at the end of a table cell (tokens 0.50
-> 0.47x). Before the tools took turns in every order, handrail's call followed
browser-use's in most rounds (a fixed order A B C) and paid for what that left the renderer
to do: the notebook then read 26-30 against 26-32 ms. First calls: the notebook 120-200 ms
(listing 7,900 listeners, 7,200 of them on 55 React roots, 131 each), Jupyter's tree 80-200,
jQuery UI's page 40-140 (every jQuery element read in full).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import statistics
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for where in (ROOT, ROOT / "bench"):
    if str(where) not in sys.path:
        sys.path.insert(0, str(where))

HOME = Path(tempfile.mkdtemp(prefix="handrail-bench-real-"))
from real_apps import quiet_env  # noqa: E402

os.environ.update(quiet_env(HOME))  # before browser-use reads its config

from real_apps import Started, serve, start_chrome, start_gradio, start_jupyter  # noqa: E402

from core.browser.browser import Browser, Tab  # noqa: E402
from core.eyes.snapshot import Snapshot, follow_frames, take_snapshot, unescape_page_text  # noqa: E402
from core.world.calls import world_call  # noqa: E402
from core.world.contexts import main_context  # noqa: E402


@dataclass
class PageSpec:
    group: str
    name: str
    url: str
    ready: str
    """A JS expression that holds once the page shows what a person would read."""


@dataclass
class Figures:
    ms: list[float] = field(default_factory=list)
    text: str = ""
    error: str | None = None

    @property
    def median(self) -> float:
        return statistics.median(self.ms) if self.ms else float("nan")


@dataclass
class PageResult:
    spec: PageSpec
    tools: dict[str, Figures]
    stats: list[dict[str, Any]] = field(default_factory=list)
    visible: int = 0
    unaddressed: list[str] = field(default_factory=list)
    ax_named: int = 0
    ax_missing: list[str] = field(default_factory=list)


# -- the tokens ----------------------------------------------------------------------------


def token_counter() -> Callable[[str], int]:
    try:
        from bpe_openai import get_encoding
    except ImportError:
        print("bpe-openai is not installed: tokens estimated as characters / 4")
        return lambda s: (len(s) + 3) // 4
    enc = get_encoding("o200k_base")
    return lambda s: len(enc.encode(s))


# -- the three readers ---------------------------------------------------------------------


async def timed_in_turn(
    repeat: int, calls: dict[str, Callable[[], Awaitable[str]]]
) -> dict[str, Figures]:
    """Each tool's figures, the tools called in turn, each round in the next of their
    orders (A B C, A C B, B A C, B C A, C A B, C B A, A B C...): a page still settling
    (Jupyter's kernel connecting) or a burst of load weighs on all of them alike, and each
    follows each other as often (what a tool leaves the renderer to finish, its garbage, a
    style pass, falls on the next one: in a fixed order, or one merely rotated, handrail
    followed browser-use's snapshot in most rounds)."""
    out = {name: Figures() for name in calls}
    orders = list(itertools.permutations(calls.items()))
    for round_no in range(repeat):
        for name, call in orders[round_no % len(orders)]:
            figures = out[name]
            if figures.error is not None:
                continue
            try:
                started = time.perf_counter()
                figures.text = await call()
                figures.ms.append((time.perf_counter() - started) * 1000)
            except Exception as exc:  # a tool failing on a page is a figure too
                figures.error = f"{type(exc).__name__}: {exc}"[:300]
    return out


class BrowserUse:
    """browser-use's state text for a tab, through its own session on the same browser."""

    def __init__(self, cdp_url: str) -> None:
        from browser_use.browser.session import BrowserSession

        self.session = BrowserSession(cdp_url=cdp_url, is_local=False)

    async def start(self) -> None:
        await self.session.start()

    async def state(self, target_id: str) -> str:
        from browser_use.dom.service import DomService

        await self.session.get_or_create_cdp_session(target_id, focus=True)
        state, _tree, _timing = await DomService(self.session).get_serialized_dom_tree()
        return state.llm_representation()

    async def stop(self) -> None:
        with contextlib.suppress(Exception):
            await self.session.stop()


async def playwright_page(pw_browser: Any, target_id: str) -> Any:
    """Playwright's page object for the tab with ``target_id`` (it appears once the tab is
    attached; Playwright announces it with the context's "page" event)."""
    context = pw_browser.contexts[0]
    for _ in range(2):
        for page in context.pages:
            cdp = await context.new_cdp_session(page)
            try:
                info = await cdp.send("Target.getTargetInfo")
            finally:
                await cdp.detach()
            if info["targetInfo"]["targetId"] == target_id:
                return page
        with contextlib.suppress(Exception):
            await context.wait_for_event("page", timeout=10_000)
    raise SystemExit(f"Playwright never saw tab {target_id}")


# -- the checks ----------------------------------------------------------------------------

SHOWN_JS = r"""function (...els) {
  // Is each element shown to a person in the viewport: rendered, 2x2 px at least, and the
  // element hit at its centre (or inside it)?
  const deepHit = (x, y) => {
    let hit = document.elementFromPoint(x, y);
    for (let k = 0; hit && hit.shadowRoot && k < 20; k++) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit;
  };
  const composedContains = (outer, inner) => {
    for (let n = inner; n; n = n.parentNode || n.host) if (n === outer) return true;
    return false;
  };
  // Inside a box that clips it away (the visually-hidden pattern: a 1px box with overflow
  // hidden, clip-path inset(50%), clip rect(0 0 0 0)), as Tom Select keeps the <select> it
  // replaced: there for a screen reader, not shown to a person.
  const clippedAway = (el) => {
    for (let n = el; n && n.nodeType === 1; n = n.parentElement || n.getRootNode().host) {
      const cs = getComputedStyle(n);
      const r = n.getBoundingClientRect();
      if (cs.overflow !== "visible" && (r.width < 2 || r.height < 2)) return true;
      if (/inset\(50%/.test(cs.clipPath)) return true;
      if (/^rect\(0(px)?,? 0(px)?,? 0(px)?,? 0(px)?\)$/.test(cs.clip)) return true;
    }
    return false;
  };
  return els.map((el) => {
    if (!el || el.nodeType !== 1) return false;
    if (!el.checkVisibility({ opacityProperty: true, visibilityProperty: true })) return false;
    if (clippedAway(el)) return false;
    const r = el.getBoundingClientRect();
    if (r.width < 2 || r.height < 2) return false;
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) return false;
    const hit = deepHit(x, y);
    if (!hit) return false;
    if (composedContains(el, hit) || composedContains(hit, el)) return true;
    return hit.tagName === "LABEL" && hit.control === el;
  });
}"""

CONTROLS_JS = r"""function (listed) {
  // Visible interactive elements in the viewport (native controls and widget roles, shadow
  // roots included) that have no line of their own nor through a listed control holding
  // them: their descriptions, and how many were visible.
  const SEL = "a[href],button,input:not([type=hidden]),select,textarea,summary," +
    "[contenteditable=''],[contenteditable=true],[role=button],[role=link],[role=checkbox]," +
    "[role=radio],[role=switch],[role=tab],[role=menuitem],[role=menuitemcheckbox]," +
    "[role=menuitemradio],[role=option],[role=combobox],[role=textbox],[role=searchbox]," +
    "[role=slider],[role=spinbutton],[role=treeitem]";
  const shown = new Set(listed);
  const all = [];
  const collect = (root) => {
    for (const el of root.querySelectorAll("*")) {
      if (el.matches(SEL)) all.push(el);
      if (el.shadowRoot) collect(el.shadowRoot);
    }
  };
  collect(document);
  const visible = (SHOWN)(...all);
  const H = globalThis.__handrail;
  const missing = [];
  let count = 0;
  all.forEach((el, k) => {
    if (!visible[k]) return;
    count++;
    for (let n = el; n; n = n.parentElement || (n.getRootNode() && n.getRootNode().host)) {
      if (n.nodeType === 1 && shown.has(H.indexOf(n))) return;
    }
    const text = (el.getAttribute("aria-label") || el.textContent || el.value || "").trim();
    missing.push(`<${el.tagName.toLowerCase()}${el.getAttribute("role") ? " role=" +
      el.getAttribute("role") : ""}> ${text.replace(/\s+/g, " ").slice(0, 50)}`);
  });
  return [count, missing];
}""".replace("(SHOWN)", f"({SHOWN_JS})")

AX_INTERACTIVE = frozenset(
    {
        "button",
        "link",
        "textbox",
        "searchbox",
        "checkbox",
        "radio",
        "switch",
        "combobox",
        "listbox",
        "option",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "tab",
        "slider",
        "spinbutton",
        "treeitem",
        "PopUpButton",
        "DisclosureTriangle",
        "ToggleButton",
        "MenuListOption",
        "textField",
    }
)


async def addressable(tab: Tab, snap: Snapshot) -> tuple[int, list[str]]:
    count, missing = await world_call(tab, CONTROLS_JS, sorted(snap.elements), timeout=60)
    return int(count), [str(m) for m in missing]


async def ax_names_missing(tab: Tab, snap: Snapshot) -> tuple[int, list[str]]:
    """Chrome's named interactive nodes shown in the viewport, and those whose name the
    digest does not carry."""
    got = await tab.send("Accessibility.getFullAXTree", {}, timeout=60)
    try:
        named: list[tuple[str, str, int]] = []
        for node in got.get("nodes", []):
            if node.get("ignored") or not node.get("backendDOMNodeId"):
                continue
            role = str(node.get("role", {}).get("value", ""))
            name = " ".join(str(node.get("name", {}).get("value", "")).split())
            if role in AX_INTERACTIVE and name:
                named.append((role, name, int(node["backendDOMNodeId"])))
        context = await main_context(tab)
        objects = await asyncio.gather(
            *(_resolve(tab, backend, context) for _, _, backend in named)
        )
        pairs = [(n, o) for n, o in zip(named, objects, strict=True) if o]
        shown: list[bool] = []
        for start in range(0, len(pairs), 200):
            chunk = pairs[start : start + 200]
            got_shown = await tab.send(
                "Runtime.callFunctionOn",
                {
                    "functionDeclaration": SHOWN_JS,
                    "executionContextId": context,
                    "arguments": [{"objectId": o} for _, o in chunk],
                    "returnByValue": True,
                },
                timeout=60,
            )
            shown += list(got_shown["result"].get("value") or [False] * len(chunk))
        # Chrome's names carry CSS text-transform ("VIEW SITE"); the digest has the text.
        digest = " ".join(unescape_page_text(snap.text).split()).casefold()
        visible = [n for (n, _), ok in zip(pairs, shown, strict=True) if ok]
        missing = [f"{role} {name!r}" for role, name, _ in visible if name.casefold() not in digest]
        return len(visible), missing
    finally:
        with contextlib.suppress(Exception):
            await tab.send("Accessibility.disable")


async def _resolve(tab: Tab, backend: int, context: int) -> str | None:
    try:
        got = await tab.send(
            "DOM.resolveNode", {"backendNodeId": backend, "executionContextId": context}
        )
    except Exception:  # a node of a frame's document, or gone
        return None
    object_id = got.get("object", {}).get("objectId")
    return str(object_id) if object_id else None


# -- one page -------------------------------------------------------------------------------


async def load(tab: Tab, url: str) -> None:
    loaded = tab.session.expect("Page.loadEventFired")
    await tab.send("Page.navigate", {"url": url})
    async with asyncio.timeout(60):
        await loaded


async def measure(
    spec: PageSpec,
    browser: Browser,
    pw_browser: Any,
    bu: BrowserUse,
    repeat: int,
    show_calls: bool = False,
) -> PageResult:
    tab = await browser.new_tab()
    try:
        await load(tab, spec.url)
        page = await playwright_page(pw_browser, tab.target_id)
        await page.wait_for_function(spec.ready, timeout=60_000)
        # One round trip through the page's main thread: the renderer has painted.
        await tab.send("DOM.getDocument", {"depth": 0})
        await tab.send("DOM.disable")

        stats: list[dict[str, Any]] = []
        snaps: list[Snapshot] = []

        async def ours() -> str:
            snap = await take_snapshot(tab)
            stats.append(snap.stats)
            if show_calls:
                listened = snap.stats.get("listeners")
                print(f"  {snap.stats.get('roundtrip_ms')} ms: {listened}", file=sys.stderr)
            snaps.append(snap)
            return snap.text

        tools = await timed_in_turn(
            repeat,
            {
                "handrail": ours,
                "playwright": lambda: page.locator("body").aria_snapshot(mode="ai", timeout=60_000),
                "browser-use": lambda: bu.state(tab.target_id),
            },
        )
        result = PageResult(spec, tools, stats)
        if snaps:
            snap = await take_snapshot(tab)  # the page as it is now, for the checks
            result.visible, result.unaddressed = await addressable(tab, snap)
            result.ax_named, result.ax_missing = await ax_names_missing(tab, snap)
        return result
    finally:
        await browser.close_tab(tab)


# -- the pages -------------------------------------------------------------------------------


def gallery_pages(origin: str) -> list[PageSpec]:
    """Every page of the widget gallery (tests/site/gallery/**/*.html), read once loaded."""
    gallery = ROOT / "tests" / "site" / "gallery"
    return [
        PageSpec(
            "gallery",
            f"gallery {p.relative_to(gallery).with_suffix('')}",
            f"{origin}/{p.relative_to(gallery.parent).as_posix()}",
            "document.readyState === 'complete'",
        )
        for p in sorted(gallery.rglob("*.html"))
        if "node_modules" not in p.parts
    ]


JUPYTER_TREE_READY = "document.querySelectorAll('.jp-DirListing-item').length >= 3"
JUPYTER_NOTEBOOK_READY = (
    "document.querySelectorAll('.jp-Notebook .jp-Cell').length >= 4"
    " && !!document.querySelector('.jp-Notebook .jp-OutputArea-output')"
)
GRADIO_READY = (
    "[...document.querySelectorAll('.gradio-container button')]"
    ".some((b) => b.textContent.trim() === 'Greet')"
    " && !!document.querySelector('.gradio-container input[type=range]')"
)


DJANGO_READY = "!!document.querySelector('#content-main')"
DATASETTE_READY = "!!document.querySelector('footer')"


def app_server_pages(stack: contextlib.ExitStack, cookies: list[dict[str, str]]) -> list[PageSpec]:
    """Django admin and Datasette pages, started by tests/apps/servers.py (the tests' own
    starters) when Django and Datasette are installed; the admin's signed-in session cookie
    goes into ``cookies``."""
    try:
        from tests.apps.servers import datasette, django_admin
    except ImportError as exc:
        print(f"no Django admin or Datasette pages ({exc})")
        return []
    django = stack.enter_context(django_admin(HOME / "django"))
    name, value = django.session_cookie
    cookies.append({"name": name, "value": value, "domain": "127.0.0.1", "path": "/"})
    agency = stack.enter_context(datasette(HOME / "datasette"))
    sql = "select origin, count(*) as flights, min(price) as cheapest from flights group by origin"
    return [
        PageSpec("django", "Django changelist", django.admin("travel/trip/"), DJANGO_READY),
        PageSpec(
            "django", "Django change form", django.admin("travel/trip/1/change/"), DJANGO_READY
        ),
        PageSpec("datasette", "Datasette table", f"{agency.url}/agency/flights", DATASETTE_READY),
        PageSpec("datasette", "Datasette row", f"{agency.url}/agency/flights/1", DATASETTE_READY),
        PageSpec(
            "datasette",
            "Datasette query",
            f"{agency.url}/agency?sql={urllib.parse.quote_plus(sql)}",
            DATASETTE_READY + " && !!document.querySelector('.CodeMirror, .cm-editor')",
        ),
    ]


# -- the report ------------------------------------------------------------------------------


PARTS = {
    "walk_ms": "page walk",
    "listeners_ms": "listener discovery",
    "roots_ms": "closed-root audit",
    "roundtrip_ms": "whole",
}


def report(
    results: list[PageResult], tokens: Callable[[str], int], show_missing: bool
) -> dict[str, Any]:
    names = ("handrail", "playwright", "browser-use")
    head = (
        f"{'page':<28}"
        + "".join(f" | {n:>20}" for n in names)
        + " | addressable | AX names missing"
    )
    print(head)
    print("-" * len(head))
    sums = {n: [0.0, 0] for n in names}
    real_sums = {n: [0.0, 0] for n in names}
    rows = []
    slower: list[str] = []
    for r in results:
        cells = []
        row: dict[str, Any] = {"page": r.spec.name, "group": r.spec.group}
        for n in names:
            f = r.tools[n]
            t = tokens(f.text) if f.text else 0
            row[n] = {
                "ms": round(f.median, 1),
                "all_ms": [round(m, 1) for m in f.ms],
                "tokens": t,
                "error": f.error,
            }
            if f.error:
                cells.append(f"{'failed':>20}")
                continue
            cells.append(f"{f.median:>7.0f} ms {t:>7,} tok")
            sums[n][0] += f.median
            sums[n][1] += t
            if r.spec.group != "gallery":
                real_sums[n][0] += f.median
                real_sums[n][1] += t
        h, p = r.tools["handrail"], r.tools["playwright"]
        if not h.error and not p.error and h.median > p.median:
            slower.append(f"{r.spec.name} ({h.median:.0f} ms against {p.median:.0f} ms)")
        addressed = f"{r.visible - len(r.unaddressed)}/{r.visible}"
        row |= {
            "visible": r.visible,
            "unaddressed": r.unaddressed,
            "ax_named": r.ax_named,
            "ax_missing": r.ax_missing,
            "walk_ms": [s.get("total_ms") for s in r.stats],
            "roundtrip_ms": [s.get("roundtrip_ms") for s in r.stats],
            "listeners_ms": [
                (s.get("listeners") or {}).get("ms")
                if isinstance(s.get("listeners"), dict)
                else None
                for s in r.stats
            ],
            "roots_ms": [
                sum(x.get("ms", 0) for x in s.get("roots", []) if isinstance(x, dict))
                for s in r.stats
            ],
        }
        rows.append(row)
        print(
            f"{r.spec.name[:28]:<28} | "
            + " | ".join(cells)
            + f" | {addressed:>11} | {len(r.ax_missing)}/{r.ax_named}"
        )
    print("-" * len(head))
    for label, s in (("sum, real-app pages", real_sums), ("sum, all pages", sums)):
        print(
            f"{label:<28}" + "".join(f" | {s[n][0]:>7.0f} ms {int(s[n][1]):>7,} tok" for n in names)
        )
    bu_tokens = sums["browser-use"][1]
    ratio = sums["handrail"][1] / bu_tokens if bu_tokens else float("nan")
    print(f"handrail tokens / browser-use tokens, all pages: {ratio:.2f}x (goal <= 0.50x)")
    print(
        "pages where handrail is slower than Playwright: "
        + (", ".join(slower) if slower else "none")
    )
    total_visible = sum(r.visible for r in results)
    total_unaddressed = sum(len(r.unaddressed) for r in results)
    print(f"visible controls addressable: {total_visible - total_unaddressed}/{total_visible}")
    print(
        f"AX names missing from the digest: {sum(len(r.ax_missing) for r in results)}/{sum(r.ax_named for r in results)}"
    )
    print("where handrail's time goes (medians; discovery and the audit run side by side):")
    for row in rows:
        parts = {k: [v for v in row[k] if v is not None] for k in PARTS}
        print(
            f"  {row['page'][:28]:<28} "
            + ", ".join(
                f"{label} {statistics.median(parts[k]):.0f} ms"
                for k, label in PARTS.items()
                if parts[k]
            )
            + f"; first call {row['handrail']['all_ms'][0] if row['handrail']['all_ms'] else 0:.0f} ms"
        )
    for r in results:
        for n in names:
            if r.tools[n].error:
                print(f"{r.spec.name}: {n} failed: {r.tools[n].error}")
        if show_missing:
            for m in r.unaddressed:
                print(f"{r.spec.name}: not addressable: {m}")
            for m in r.ax_missing:
                print(f"{r.spec.name}: AX name missing: {m}")
    return {"rows": rows, "ratio_tokens_vs_browser_use": ratio, "slower_than_playwright": slower}


# -- main ------------------------------------------------------------------------------------


async def run(args: argparse.Namespace) -> None:
    started: list[Started] = []
    try:
        with contextlib.ExitStack() as stack, serve(ROOT / "tests" / "site") as site:
            chrome = start_chrome(HOME)
            started.append(chrome)
            jupyter, token = start_jupyter(HOME)
            started.append(jupyter)
            gradio = start_gradio(HOME)
            started.append(gradio)
            cookies: list[dict[str, str]] = []
            pages = [
                *app_server_pages(stack, cookies),
                PageSpec(
                    "jupyter",
                    "Jupyter tree",
                    f"{jupyter.url}/tree?token={token}",
                    JUPYTER_TREE_READY,
                ),
                PageSpec(
                    "jupyter",
                    "Jupyter notebook",
                    f"{jupyter.url}/notebooks/report.ipynb?token={token}",
                    JUPYTER_NOTEBOOK_READY,
                ),
                PageSpec("gradio", "Gradio Blocks", gradio.url, GRADIO_READY),
                *gallery_pages(site),
            ]
            if args.only:
                pages = [p for p in pages if any(o.lower() in p.name.lower() for o in args.only)]
            results = await measure_all(chrome.url, pages, args.repeat, cookies, args.calls)
        summary = report(results, token_counter(), args.show_missing)
        if args.json:
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            Path(args.json).write_text(json.dumps(summary, indent=1), encoding="utf-8")
        if args.dump:
            Path(args.dump).mkdir(parents=True, exist_ok=True)
            for r in results:
                for n, f in r.tools.items():
                    safe = r.spec.name.replace(" ", "_").replace("/", "_")
                    (Path(args.dump) / f"{safe}.{n}.txt").write_text(f.text, encoding="utf-8")
    finally:
        for s in reversed(started):
            s.stop()


async def measure_all(
    cdp_url: str,
    pages: list[PageSpec],
    repeat: int,
    cookies: list[dict[str, str]],
    show_calls: bool = False,
) -> list[PageResult]:
    from playwright.async_api import async_playwright

    browser = await Browser.connect(cdp_url)
    await follow_frames(browser)  # as a run does (core/run/session.py)
    if cookies:
        await browser.connection.send("Storage.setCookies", {"cookies": cookies})
    bu = BrowserUse(cdp_url)
    results: list[PageResult] = []
    try:
        async with async_playwright() as pw:
            pw_browser = await pw.chromium.connect_over_cdp(cdp_url)
            await bu.start()
            for spec in pages:
                print(f"… {spec.name}", file=sys.stderr)
                results.append(await measure(spec, browser, pw_browser, bu, repeat, show_calls))
            await bu.stop()
    finally:
        await browser.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeat",
        type=int,
        default=12,
        help="calls per tool and page (12: each order of the three twice)",
    )
    parser.add_argument("--only", nargs="*", help="pages whose name holds one of these")
    parser.add_argument("--json", help="write the figures there too")
    parser.add_argument("--dump", help="a folder for each tool's text of each page")
    parser.add_argument("--show-missing", action="store_true")
    parser.add_argument(
        "--calls",
        action="store_true",
        help="print each handrail digest's time and listener figures",
    )
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()

"""Every fixture page's digest from two trees of handrail, for a refactor that must not
change what the model sees.

Run: ``.venv/bin/python bench/digest_diff.py OLD_TREE NEW_TREE OUT_DIR`` (a tree is a
checkout, e.g. ``git worktree add /tmp/old <commit>``, with tests/site/node_modules present
or linked). Each tree's digests of tests/site/**/*.html go to OUT_DIR/old and OUT_DIR/new
(one headless Chromium per tree, fresh tab per page, pages in one sorted order), and the
pages whose digest differs are listed. Digests quote the fixture server's port where a page
prints its own URL, so those lines differ between the two runs by design.

Figures on 2026-12-04 (issue 24, before 3051b64, after the walk/page.js/world cuts): 158
pages, identical but for the port in three hostile pages that print their URL.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import subprocess
import sys
from pathlib import Path

# One tree's half, run in a child process with that tree first on sys.path.
_DUMP = r"""
import asyncio, sys
from pathlib import Path
root, out = Path(sys.argv[1]), Path(sys.argv[2])
sys.path.insert(0, str(root))
from core.browser.browser import Browser
try:
    from core.browser.launch import LaunchOptions
except ImportError:  # a tree from before the browser layer was cut
    from core.browser.browser import LaunchOptions
from core.hands import Page
from tests.helpers.site_server import FixtureSite

async def main() -> None:
    site = FixtureSite("127.0.0.1", root=root / "tests/site")
    pages = sorted(p for p in (root / "tests/site").rglob("*.html") if "node_modules" not in p.parts)
    browser = await Browser.launch(LaunchOptions(profile_dir=out / ".profile", headless=True))
    try:
        for path in pages:
            rel = path.relative_to(root / "tests/site").as_posix()
            page = Page(browser, action_timeout=8)
            tab = await browser.new_tab()
            try:
                await asyncio.wait_for(page.navigate(site.url("/" + rel)), 15)
                snap, _ = await asyncio.wait_for(page.observe(), 15)
                text = snap.text
            except Exception as exc:
                text = f"ERROR {type(exc).__name__}: {exc}"
            finally:
                page.close()
                if not tab.closed:
                    await browser.close_tab(tab)
            (out / (rel.replace("/", "__") + ".txt")).write_text(text, encoding="utf-8")
    finally:
        await browser.close()
        site.stop()

asyncio.run(main())
"""


def dump(tree: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    subprocess.run(
        [sys.executable, "-c", _DUMP, str(tree), str(out)], cwd=tree, env=env, check=True
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path, help="the tree before the change")
    parser.add_argument("new", type=Path, help="the tree after it")
    parser.add_argument("out", type=Path, help="where the digests go (old/ and new/)")
    args = parser.parse_args()
    dump(args.old.resolve(), args.out / "old")
    dump(args.new.resolve(), args.out / "new")
    names = sorted(p.name for p in (args.out / "new").glob("*.txt"))
    _, differ, missing = filecmp.cmpfiles(args.out / "old", args.out / "new", names, shallow=False)
    print(f"{len(names)} pages; {len(differ)} differ; {len(missing)} missing from old")
    for name in differ + missing:
        print("  ", name)
    return 0


if __name__ == "__main__":
    sys.exit(main())

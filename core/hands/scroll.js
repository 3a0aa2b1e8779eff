// @ts-check
// The hands' page script, stage: scrolling the page and scrolling areas.
//
// core/hands/ctx.py joins the stages in the order of its PAGE_PARTS inside one closure,
// with `judgeSensitive` (core/world/sensitive.js) in scope, and runs it in handrail's
// isolated world (core/world/), where the eyes' script (core/eyes/*.js) has defined
// globalThis.__handrail: the stages share their top-level names, and the page sees none
// of them.

// Scrolls the window, or the page's main scrolling container when the window cannot
// scroll (apps that scroll a <main> or a div), by a number of "pages".
function scrollPage(direction, pages) {
  const sign = direction === "up" ? -1 : 1;
  const scroller = mainScroller();
  const before = scrollState(scroller);
  const step = Math.max(1, Math.round(before.view * 0.9 * pages));
  if (scroller === null) {
    window.scrollBy({ top: sign * step, behavior: "instant" });
  } else {
    scroller.scrollBy({ top: sign * step, behavior: "instant" });
  }
  const after = scrollState(scroller);
  return { before, after, container: scroller === null ? null : describe(scroller) };
}

function scrollToElement(el) {
  el.scrollIntoView({ block: "center", inline: "nearest", behavior: "instant" });
  const scroller = mainScroller();
  const rect = topRect(el);
  return { after: scrollState(scroller), visible: inViewport(rect) || clickPoint(el) !== null, describe: describe(el) };
}

function scrollState(scroller) {
  if (scroller === null) {
    const se = document.scrollingElement || document.documentElement;
    return { top: window.scrollY, height: se.scrollHeight, view: window.innerHeight };
  }
  return { top: scroller.scrollTop, height: scroller.scrollHeight, view: scroller.clientHeight };
}

function canScrollY(el) {
  if (el.scrollHeight <= el.clientHeight + 1) return false;
  const oy = styleOf(el).overflowY;
  return oy === "auto" || oy === "scroll" || oy === "overlay";
}

// null means the window itself.
/** @returns {Element | null} */
function mainScroller() {
  const se = document.scrollingElement || document.documentElement;
  const rootOverflow = styleOf(document.documentElement).overflowY;
  const bodyOverflow = document.body ? styleOf(document.body).overflowY : "";
  const windowScrolls =
    se.scrollHeight > window.innerHeight + 1 && rootOverflow !== "hidden" && bodyOverflow !== "hidden";
  if (windowScrolls) return null;
  let best = null;
  let bestArea = 0;
  const walker = document.createTreeWalker(document.body || document.documentElement, NodeFilter.SHOW_ELEMENT);
  let count = 0;
  for (let n = walker.currentNode; n && count < 20000; n = walker.nextNode(), count++) {
    if (n.nodeType !== 1 || !canScrollY(n)) continue;
    const el = /** @type {Element} */ (n);
    const r = el.getBoundingClientRect();
    const area = Math.max(0, Math.min(r.right, window.innerWidth) - Math.max(r.left, 0)) *
      Math.max(0, Math.min(r.bottom, window.innerHeight) - Math.max(r.top, 0));
    if (area > bestArea) {
      bestArea = area;
      best = el;
    }
  }
  return best;
}

// --- scrolling areas ------------------------------------------------------------------

function scrollsAlong(value) {
  return value === "auto" || value === "scroll" || value === "overlay";
}

// How far an element's own content can still move each way (px); null when it is not a
// scroll container a person could scroll (overflow hidden clips, but has no scrollbar).
function scrollRoom(el) {
  if (!el || el.nodeType !== 1 || el === el.ownerDocument.documentElement || el === el.ownerDocument.body) return null;
  const st = styleOf(el);
  const y = scrollsAlong(st.overflowY) && el.scrollHeight > el.clientHeight + 1;
  const x = scrollsAlong(st.overflowX) && el.scrollWidth > el.clientWidth + 1;
  if (!x && !y) return null;
  const left = Math.abs(el.scrollLeft);
  return {
    y,
    x,
    up: y ? el.scrollTop : 0,
    down: y ? Math.max(0, el.scrollHeight - el.clientHeight - el.scrollTop) : 0,
    left: x ? left : 0,
    right: x ? Math.max(0, el.scrollWidth - el.clientWidth - left) : 0,
  };
}

const VERTICAL = new Set(["up", "down"]);

function scrollsToward(room, direction) {
  return room !== null && (VERTICAL.has(direction) ? room.y : room.x);
}

// What lies wholly outside an area's visible box, each way it scrolls: the outermost boxes
// there (a card, a row), each counted once; -1 when there is more but no whole box (half a
// card). The digest counts the same way (core/eyes/scrolling.js), so the result of a
// scroll and the next digest agree.
const BEYOND_VISITS = 5000;
function beyond(area, room) {
  const r = area.getBoundingClientRect();
  const top = r.top + area.clientTop;
  const left = r.left + area.clientLeft;
  const bottom = top + area.clientHeight;
  const right = left + area.clientWidth;
  const out = { up: 0, down: 0, left: 0, right: 0, capped: false };
  const stack = [...(area.shadowRoot || area).children];
  let visits = 0;
  while (stack.length && visits < BEYOND_VISITS) {
    const n = stack.pop();
    visits++;
    const c = n.getBoundingClientRect();
    let where = null;
    if (c.width >= 1 || c.height >= 1) {
      if (room.y && c.top >= bottom - 1) where = "down";
      else if (room.y && c.bottom <= top + 1) where = "up";
      else if (room.x && c.left >= right - 1) where = "right";
      else if (room.x && c.right <= left + 1) where = "left";
    }
    if (where === null) stack.push(...(n.shadowRoot || n).children);
    else if (!n.checkVisibility || n.checkVisibility({ opacityProperty: true, visibilityProperty: true })) out[where]++;
  }
  for (const way of ["up", "down", "left", "right"]) if (!out[way] && room[way] > 1) out[way] = -1;
  out.capped = visits >= BEYOND_VISITS;
  return out;
}

function areaState(area) {
  const room = scrollRoom(area);
  return { room, items: room ? beyond(area, room) : null, describe: describe(area), name: accessibleName(area) };
}

// Scroll the content of the scrolling area [index], or of the nearest one around it that
// scrolls along `direction`, by `pages` of its visible size. With no direction: toward
// where it has more. {scrolled: false} when there is no such area.
function scrollArea(el, direction, pages) {
  let area = el;
  let room = scrollRoom(el);
  if (direction) {
    while (area && !scrollsToward(room, direction)) {
      area = composedParent(area);
      room = area && area.nodeType === 1 ? scrollRoom(area) : null;
    }
  } else if (room) {
    // Toward where it has more, as the digest's note promises ("3 more above:
    // scroll{index: 7}"): down first, then right, up, left.
    direction = ["down", "right", "up", "left"].find((way) => room[way] > 1) || null;
  }
  if (!area || !direction || !scrollsToward(room, direction)) {
    return { scrolled: false };
  }
  let intoView = false;
  if (!inViewport(topRect(area))) {
    area.scrollIntoView({ block: "nearest", inline: "nearest", behavior: "instant" });
    intoView = true;
  }
  const vertical = VERTICAL.has(direction);
  const sign = direction === "up" || direction === "left" ? -1 : 1;
  const size = vertical ? area.clientHeight : area.clientWidth;
  const step = Math.max(1, Math.round(size * 0.9 * pages));
  const before = vertical ? area.scrollTop : area.scrollLeft;
  area.scrollBy({ top: vertical ? sign * step : 0, left: vertical ? 0 : sign * step, behavior: "instant" });
  const after = vertical ? area.scrollTop : area.scrollLeft;
  return {
    scrolled: true,
    direction,
    moved: Math.abs(after - before),
    itself: area === el,
    intoView,
    after: areaState(area),
  };
}

// @ts-check
// The hands' page script, stage: native date, time, colour and range inputs.
//
// What a person types for the browser's own picker becomes the value that picker would
// set (ISO for dates and times, #rrggbb for colours), checked against the field's own
// min, max and step by the browser itself (on a detached twin of the field), then set
// through the prototype's setter with input and change, as the picker does. The order of
// a numeric date ("09/10/2010") is the one of navigator.language, the language the browser
// tells pages its person reads, as Intl formats dates for it.
//
// core/hands/ctx.py joins the stages in the order of its PAGE_PARTS inside one closure,
// with `judgeSensitive` (core/world/sensitive.js) in scope, and runs it in handrail's
// isolated world (core/world/), where the eyes' script (core/eyes/*.js) has defined
// globalThis.__handrail: the stages share their top-level names, and the page sees none
// of them.

const NATIVE_TYPES = new Set(["date", "time", "month", "week", "datetime-local", "color", "range"]);
const NATIVE_NOUNS = {
  date: "date", time: "time", month: "month", week: "week",
  "datetime-local": "date and time", color: "colour", range: "number",
};
const EN_MONTHS = [
  "january", "february", "march", "april", "may", "june",
  "july", "august", "september", "october", "november", "december",
];

function pageLocale() {
  return navigator.language || Intl.DateTimeFormat().resolvedOptions().locale;
}

// "MDY", "DMY" or "YMD": how the locale writes a numeric date; null when unknown.
function numericDateOrder(locale) {
  try {
    const parts = new Intl.DateTimeFormat(locale, { year: "numeric", month: "2-digit", day: "2-digit" })
      .formatToParts(new Date(2010, 8, 23));
    const order = parts.filter((p) => p.type === "year" || p.type === "month" || p.type === "day")
      .map((p) => p.type[0].toUpperCase()).join("");
    return ["MDY", "DMY", "YMD"].includes(order) ? order : null;
  } catch (_) {
    return null;
  }
}

function numericDateExample(locale) {
  try {
    return new Intl.DateTimeFormat(locale, { year: "numeric", month: "2-digit", day: "2-digit" })
      .format(new Date(2010, 8, 23));
  } catch (_) {
    return "09/23/2010";
  }
}

// Month names, English and the locale's own (long and short), to their numbers.
function monthNumber(token) {
  const word = token.replace(/\.$/, "");
  if (word.length < 3 || /\d/.test(word)) return null;
  const found = EN_MONTHS.findIndex((name) => name.startsWith(word));
  if (found >= 0) return found + 1;
  for (const style of ["long", "short"]) {
    try {
      const fmt = new Intl.DateTimeFormat(pageLocale(), { month: /** @type {"long" | "short"} */ (style) });
      for (let m = 0; m < 12; m++) {
        const name = fmt.format(new Date(2010, m, 15)).toLowerCase().replace(/\.$/, "");
        if (name === word) return m + 1;
      }
    } catch (_) {
      return null;
    }
  }
  return null;
}

const pad = (n, width) => String(n).padStart(width || 2, "0");

function isoDate(y, m, d) {
  if (!(m >= 1 && m <= 12 && d >= 1 && y >= 1)) return null;
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  const inMonth = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
  return d <= inMonth ? `${pad(y, 4)}-${pad(m)}-${pad(d)}` : null;
}

function parseDate(text) {
  const t = text.toLowerCase().replace(/\s+/g, " ").replace(/^(mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,? /, "");
  let m = t.match(/^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})$/);
  if (m) return isoDate(+m[1], +m[2], +m[3]);
  m = t.match(/^(\d{1,2})[-/.](\d{1,2})[-/.](\d{4})$/);
  if (m) {
    const [a, b, y] = [+m[1], +m[2], +m[3]];
    const order = numericDateOrder(pageLocale());
    const monthFirst = isoDate(y, a, b);
    const dayFirst = isoDate(y, b, a);
    // The locale decides; a reading it rules out (a 13th month) leaves the other one.
    if (order === "MDY") return monthFirst || dayFirst;
    if (order === "DMY") return dayFirst || monthFirst;
    return monthFirst && dayFirst && monthFirst !== dayFirst ? null : monthFirst || dayFirst;
  }
  const tokens = t.replace(/,/g, " ").split(/[\s/-]+/).filter(Boolean);
  if (tokens.length !== 3) return null;
  let month = null;
  let year = null;
  let day = null;
  for (const token of tokens) {
    const named = month === null ? monthNumber(token) : null;
    if (named) {
      month = named;
      continue;
    }
    const num = token.match(/^(\d{1,4})(st|nd|rd|th|\.)?$/);
    if (!num) return null;
    if (num[1].length === 4 && year === null) year = +num[1];
    else if (num[1].length <= 2 && day === null) day = +num[1];
    else return null;
  }
  return month && year && day ? isoDate(year, month, day) : null;
}

function parseTime(text) {
  const t = text.toLowerCase().replace(/\s+/g, " ");
  const clock = (h, mi, s) => {
    if (!(h >= 0 && h < 24 && mi >= 0 && mi < 60)) return null;
    if (s === undefined) return `${pad(h)}:${pad(mi)}`;
    return +s < 60 ? `${pad(h)}:${pad(mi)}:${pad(+s)}` : null;
  };
  let m = t.match(/^(\d{1,2})(?:[:.](\d{2}))?(?::(\d{2}))? ?([ap])\.? ?m\.?$/);
  if (m) {
    const h = +m[1];
    if (h < 1 || h > 12) return null;
    return clock((h % 12) + (m[4] === "p" ? 12 : 0), +(m[2] || 0), m[3]);
  }
  m = t.match(/^(\d{1,2})[:h](\d{2})(?::(\d{2}))?$/);
  return m ? clock(+m[1], +m[2], m[3]) : null;
}

function parseMonth(text) {
  const t = text.toLowerCase().replace(/\s+/g, " ");
  let m = t.match(/^(\d{4})[-/.](\d{1,2})$/);
  if (m) return +m[2] >= 1 && +m[2] <= 12 ? `${m[1]}-${pad(+m[2])}` : null;
  m = t.match(/^(\d{1,2})[-/.](\d{4})$/);
  if (m) return +m[1] >= 1 && +m[1] <= 12 ? `${m[2]}-${pad(+m[1])}` : null;
  const tokens = t.replace(/,/g, " ").split(/[\s/-]+/).filter(Boolean);
  if (tokens.length !== 2) return null;
  const [first, second] = tokens;
  const named = monthNumber(first) || monthNumber(second);
  const year = [first, second].find((x) => /^\d{4}$/.test(x));
  return named && year ? `${year}-${pad(named)}` : null;
}

// ISO 8601 week of a date: the week of its Thursday.
function isoWeekOf(iso) {
  const [y, mo, d] = iso.split("-").map(Number);
  const day = new Date(Date.UTC(y, mo - 1, d));
  const weekday = day.getUTCDay() || 7;
  day.setUTCDate(day.getUTCDate() + 4 - weekday);
  const yearStart = new Date(Date.UTC(day.getUTCFullYear(), 0, 1));
  const week = Math.ceil(((day.getTime() - yearStart.getTime()) / 86400000 + 1) / 7);
  return `${pad(day.getUTCFullYear(), 4)}-W${pad(week)}`;
}

function parseWeek(text) {
  const t = text.toLowerCase().replace(/\s+/g, " ");
  let m = t.match(/^(\d{4})[- ]?w(?:eek)? ?(\d{1,2})$/);
  if (m) return `${m[1]}-W${pad(+m[2])}`;
  m = t.match(/^w(?:eek)? ?(\d{1,2}),? (?:of )?(\d{4})$/);
  if (m) return `${m[2]}-W${pad(+m[1])}`;
  const date = parseDate(text);
  return date ? isoWeekOf(date) : null;
}

function parseDateTime(text) {
  const t = text.replace(/\s+/g, " ");
  let m = t.match(/^(\d{4}-\d{1,2}-\d{1,2})[tT ](.+)$/);
  if (!m) m = t.match(/^(.+?)[, ]+(?:at )?(\d{1,2}(?:[:.]\d{2}){1,2} ?(?:[aApP]\.? ?[mM]\.?)?|\d{1,2} ?[aApP]\.? ?[mM]\.?)$/);
  if (!m) return null;
  const date = parseDate(m[1].replace(/,$/, ""));
  const time = parseTime(m[2]);
  return date && time ? `${date}T${time}` : null;
}

function parseColor(text) {
  const t = text.trim().toLowerCase();
  if (/^#?[0-9a-f]{6}$/.test(t)) return t.startsWith("#") ? t : `#${t}`;
  if (/^#?[0-9a-f]{3}$/.test(t)) return "#" + Array.from(t.replace("#", ""), (c) => c + c).join("");
  // The canvas parses every CSS colour (names, rgb(), hsl()); a text it does not take
  // leaves the previous style, which two different starting styles reveal.
  const paint = new OffscreenCanvas(1, 1).getContext("2d");
  paint.fillStyle = "#000000";
  paint.fillStyle = t;
  const first = paint.fillStyle;
  paint.fillStyle = "#ffffff";
  paint.fillStyle = t;
  if (paint.fillStyle !== first) return null;
  return String(first).startsWith("#") ? first : { error: "it has transparency, which a colour field cannot hold" };
}

function nativeValue(type, text) {
  switch (type) {
    case "date":
      return parseDate(text);
    case "time":
      return parseTime(text);
    case "month":
      return parseMonth(text);
    case "week":
      return parseWeek(text);
    case "datetime-local":
      return parseDateTime(text);
    case "color":
      return parseColor(text);
    case "range": {
      const n = Number(text.replace(/\s+/g, ""));
      return text.trim() && Number.isFinite(n) ? String(n) : null;
    }
    default:
      return null;
  }
}

// Why the field would not hold `value` (null when it would), asked of the browser on a
// detached twin with the field's min, max and step.
function nativeRejection(target, type, value) {
  const twin = target.ownerDocument.createElement("input");
  twin.type = type;
  for (const attr of ["min", "max", "step"]) {
    if (target.hasAttribute(attr)) twin.setAttribute(attr, target.getAttribute(attr));
  }
  twin.value = value;
  if (type === "range") {
    if (Number(twin.value) === Number(value)) return null;
    const lowest = twin.min === "" ? 0 : twin.min;
    const highest = twin.max === "" ? 100 : twin.max;
    const step = twin.step === "" ? 1 : twin.step;
    return `${value} is not one of its values (from ${lowest} to ${highest} in steps of ${step}; the nearest is ${twin.value})`;
  }
  if (twin.value === "") return `${value} is not a real ${NATIVE_NOUNS[type]}`;
  if (twin.validity.rangeUnderflow) return `${value} is before the earliest it allows, ${target.min}`;
  if (twin.validity.rangeOverflow) return `${value} is after the latest it allows, ${target.max}`;
  if (twin.validity.stepMismatch) {
    const clock = type === "time" || type === "datetime-local";
    if (clock && !target.getAttribute("step")) return `${value} has seconds, and the field takes whole minutes`;
    return `${value} is not on its step (step ${target.step}${clock ? " seconds" : ""})`;
  }
  return null;
}

function nativeFormats(type, target) {
  const locale = pageLocale();
  switch (type) {
    case "date":
      return `a date: ISO "2010-09-23", the browser's own order "${numericDateExample(locale)}" (navigator.language ${locale}) or "23 September 2010"`;
    case "time":
      return 'a time: "19:50", "7:50 PM", or "19:50:30" when the field takes seconds';
    case "month":
      return 'a month: "2010-09" or "September 2010"';
    case "week":
      return 'a week: "2010-W36", "week 36 2010", or a date in that week';
    case "datetime-local":
      return 'a date and a time: "2010-09-23T19:50", "2010-09-23 19:50" or "23 September 2010 7:50 PM"';
    case "color":
      return 'a colour: "#ff0000", "#f00", "rgb(255, 0, 0)" or a CSS colour name such as "red"';
    default: {
      const lowest = target.min === "" ? 0 : target.min;
      const highest = target.max === "" ? 100 : target.max;
      return `a number from ${lowest} to ${highest} in steps of ${target.step || 1}`;
    }
  }
}

// {native: false} when [index] is not a native date/time/colour/range input right now;
// otherwise whether `text` reads as a value it holds, and (with `apply`) sets it.
function nativeInput(el, text, apply) {
  const target = editableOf(el);
  const type = target.tagName === "INPUT" ? String(target.type).toLowerCase() : "";
  if (!NATIVE_TYPES.has(type)) return { native: false };
  const raw = String(text).trim();
  const answer = { native: true, type, noun: NATIVE_NOUNS[type], formats: nativeFormats(type, target) };
  let value = "";
  if (raw || type === "color" || type === "range") {
    const parsed = nativeValue(type, raw);
    if (parsed === null || typeof parsed === "object") {
      const reason = parsed ? parsed.error : `handrail cannot read "${clip(raw, 60)}" as a ${answer.noun}`;
      return Object.assign(answer, { ok: false, reason });
    }
    value = parsed;
    const problem = nativeRejection(target, type, value);
    if (problem) return Object.assign(answer, { ok: false, value, reason: problem });
  }
  if (!apply) return Object.assign(answer, { ok: true, value });
  setNativeValue(target, value);
  return Object.assign(answer, { ok: true, value, holds: target.value });
}

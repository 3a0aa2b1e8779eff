// Search page: station autocomplete (debounced, fetched), a calendar popup, inline validation.
import {
  MONTHS, debounce, isoDate, longDate, parseIsoDate, setFieldError, today,
} from "/static/railco.js";

const form = document.getElementById("search-form");

/** A combobox whose listbox of station names follows what is typed. */
function stationCombobox(input) {
  const list = document.getElementById(input.getAttribute("aria-controls"));
  let options = [];
  let active = -1;
  let pickWhenLoaded = false;
  let request = 0;

  function close() {
    list.hidden = true;
    list.replaceChildren();
    options = [];
    active = -1;
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
  }

  function pick(name) {
    input.value = name;
    setFieldError(input, "");
    close();
    input.dispatchEvent(new Event("change", { bubbles: true }));
  }

  function highlight(index) {
    active = index;
    list.querySelectorAll("[role=option]").forEach((li, i) => {
      li.setAttribute("aria-selected", String(i === index));
    });
    if (index >= 0) input.setAttribute("aria-activedescendant", `${list.id}-${index}`);
  }

  function show(names) {
    options = names;
    list.replaceChildren();
    names.forEach((name, i) => {
      const li = document.createElement("li");
      li.id = `${list.id}-${i}`;
      li.setAttribute("role", "option");
      li.setAttribute("aria-selected", "false");
      li.tabIndex = -1;
      li.textContent = name;
      // mousedown, not click: it must land before the input's blur closes the list.
      li.addEventListener("mousedown", (event) => {
        event.preventDefault();
        pick(name);
      });
      list.append(li);
    });
    list.hidden = names.length === 0;
    input.setAttribute("aria-expanded", String(names.length > 0));
    active = -1;
  }

  async function load() {
    const query = input.value.trim();
    const mine = ++request;
    if (!query) {
      close();
      return;
    }
    const response = await fetch(`/api/stations?q=${encodeURIComponent(query)}`);
    const names = (await response.json()).map((s) => s.name);
    if (mine !== request) return; // a newer keystroke already asked again
    if (pickWhenLoaded) {
      pickWhenLoaded = false;
      if (names.length) pick(names[0]);
      return;
    }
    show(names);
  }
  const loadSoon = debounce(load, 120);

  input.addEventListener("input", () => {
    pickWhenLoaded = false;
    loadSoon();
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown" && options.length) {
      event.preventDefault();
      highlight((active + 1) % options.length);
    } else if (event.key === "ArrowUp" && options.length) {
      event.preventDefault();
      highlight((active - 1 + options.length) % options.length);
    } else if (event.key === "Escape") {
      close();
    } else if (event.key === "Enter") {
      if (options.length) {
        event.preventDefault();
        pick(options[active >= 0 ? active : 0]);
      } else if (input.value.trim() && input.getAttribute("data-picked") !== input.value) {
        // Enter before the suggestions arrived: take the first one when they do.
        event.preventDefault();
        pickWhenLoaded = true;
        loadSoon.cancel();
        load();
      }
    }
  });
  input.addEventListener("change", () => input.setAttribute("data-picked", input.value));
  input.addEventListener("blur", () => setTimeout(close, 100));
}

/** The calendar popup next to the date input; days are buttons named "Friday 4 December 2026". */
function datePicker() {
  const input = document.getElementById("date");
  const toggle = document.getElementById("date-toggle");
  const popup = document.getElementById("calendar");
  const title = document.getElementById("calendar-title");
  const grid = document.getElementById("calendar-grid");
  const hint = document.getElementById("date-hint");
  let shown = today();

  function updateHint() {
    const chosen = parseIsoDate(input.value);
    hint.textContent = chosen ? longDate(chosen) : "";
  }

  function render() {
    const first = new Date(shown.getFullYear(), shown.getMonth(), 1);
    const chosen = parseIsoDate(input.value);
    title.textContent = `${MONTHS[first.getMonth()]} ${first.getFullYear()}`;
    grid.replaceChildren();
    for (const name of ["Mo", "Tu", "We", "Th", "Fr", "Sa", "Su"]) {
      const cell = document.createElement("span");
      cell.className = "weekday";
      cell.setAttribute("aria-hidden", "true");
      cell.textContent = name;
      grid.append(cell);
    }
    for (let i = 0; i < (first.getDay() + 6) % 7; i++) grid.append(document.createElement("span"));
    const now = today();
    for (let d = new Date(first); d.getMonth() === first.getMonth(); d.setDate(d.getDate() + 1)) {
      const day = new Date(d);
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = String(day.getDate());
      button.setAttribute("aria-label", longDate(day));
      button.setAttribute("aria-pressed", String(chosen !== null && isoDate(chosen) === isoDate(day)));
      if (isoDate(day) === isoDate(now)) button.setAttribute("aria-current", "date");
      button.disabled = day < now;
      button.addEventListener("click", () => {
        input.value = isoDate(day);
        setFieldError(input, "");
        updateHint();
        close();
        toggle.focus();
      });
      grid.append(button);
    }
  }

  function open() {
    shown = parseIsoDate(input.value) ?? today();
    render();
    popup.hidden = false;
    toggle.setAttribute("aria-expanded", "true");
  }

  function close() {
    popup.hidden = true;
    toggle.setAttribute("aria-expanded", "false");
  }

  function moveMonth(delta) {
    shown = new Date(shown.getFullYear(), shown.getMonth() + delta, 1);
    render();
  }

  toggle.addEventListener("click", () => (popup.hidden ? open() : close()));
  document.getElementById("calendar-prev").addEventListener("click", () => moveMonth(-1));
  document.getElementById("calendar-next").addEventListener("click", () => moveMonth(1));
  popup.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      close();
      toggle.focus();
    }
  });
  document.addEventListener("mousedown", (event) => {
    if (!popup.hidden && !popup.contains(event.target) && !toggle.contains(event.target)) close();
  });
  input.addEventListener("input", updateHint);
  updateHint();
}

function validate() {
  const from = form.elements.from;
  const to = form.elements.to;
  const date = form.elements.date;
  const problems = [];
  const check = (input, message) => {
    setFieldError(input, message);
    if (message) problems.push(input);
  };
  check(from, from.value.trim() ? "" : "Enter a departure station.");
  check(to, to.value.trim() ? "" : "Enter an arrival station.");
  if (from.value.trim() && from.value.trim().toLowerCase() === to.value.trim().toLowerCase()) {
    check(to, "Arrival and departure stations must be different.");
  }
  const chosen = parseIsoDate(date.value);
  if (!date.value.trim()) check(date, "Choose a departure date.");
  else if (!chosen) check(date, "Write the date as YYYY-MM-DD, for example 2026-12-04.");
  else if (chosen < today()) check(date, "That date has passed. Choose today or a later day.");
  else check(date, "");
  return problems;
}

stationCombobox(form.elements.from);
stationCombobox(form.elements.to);
datePicker();
form.addEventListener("submit", (event) => {
  const problems = validate();
  if (problems.length) {
    event.preventDefault();
    problems[0].focus();
  }
});

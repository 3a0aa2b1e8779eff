// Passenger form: the page's own state object is the truth; inputs write to it on every
// input event, errors and the summary are rendered from it, and it is what gets sent.
import { escapeHtml, euros, postJson, setFieldError } from "/static/railco.js";

const booking = JSON.parse(document.getElementById("booking-data").textContent);
const form = document.getElementById("passenger-form");
const summary = document.getElementById("summary");
const formError = document.getElementById("form-error");

const state = {
  firstName: "",
  lastName: "",
  email: "",
  railcard: "none",
  touched: {},
  submitted: false,
  sending: false,
};

const fields = {
  firstName: document.getElementById("first-name"),
  lastName: document.getElementById("last-name"),
  email: document.getElementById("email"),
  railcard: document.getElementById("railcard"),
};

const NAME = /^[\p{L}][\p{L}' .-]*$/u;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]{2,}$/;

function errors() {
  const found = {};
  const first = state.firstName.trim();
  const last = state.lastName.trim();
  if (!first) found.firstName = "Enter the passenger's first name.";
  else if (!NAME.test(first)) found.firstName = "Use letters only (hyphens and apostrophes are fine).";
  if (!last) found.lastName = "Enter the passenger's last name.";
  else if (!NAME.test(last)) found.lastName = "Use letters only (hyphens and apostrophes are fine).";
  if (!state.email.trim()) found.email = "Enter an email address for the tickets.";
  else if (!EMAIL.test(state.email.trim())) found.email = "Enter an email address like name@example.org.";
  return found;
}

function total() {
  const percent = booking.railcards[state.railcard]?.percent ?? 0;
  const lead = Math.floor((booking.priceCents * (100 - percent)) / 100);
  return lead + booking.priceCents * (booking.passengers - 1);
}

function render() {
  const found = errors();
  for (const [name, input] of Object.entries(fields)) {
    if (name === "railcard") continue;
    const show = state.submitted || state.touched[name];
    setFieldError(input, show ? found[name] ?? "" : "");
  }
  const who = `${state.firstName.trim()} ${state.lastName.trim()}`.trim();
  const card = booking.railcards[state.railcard];
  summary.innerHTML = `
    <h2>Your trip</h2>
    <dl>
      <dt>Journey</dt><dd>${escapeHtml(booking.route)}</dd>
      <dt>Date</dt><dd>${escapeHtml(booking.day)}</dd>
      <dt>Train</dt><dd>${escapeHtml(booking.times)}</dd>
      <dt>Seat</dt><dd>${escapeHtml(booking.seats)}</dd>
      <dt>Passenger</dt><dd id="summary-passenger">${escapeHtml(who || "Not given yet")}</dd>
      <dt>Email</dt><dd id="summary-email">${escapeHtml(state.email.trim() || "Not given yet")}</dd>
      <dt>Railcard</dt><dd id="summary-railcard">${escapeHtml(card ? card.label : "No railcard")}</dd>
      <dt>Total</dt><dd class="total" id="summary-total">${euros(total())}</dd>
    </dl>`;
}

function update(name, value) {
  state[name] = value;
  render();
}

for (const [name, input] of Object.entries(fields)) {
  input.addEventListener(name === "railcard" ? "change" : "input", () => update(name, input.value));
  input.addEventListener("blur", () => {
    if (input.value) {
      state.touched[name] = true;
      render();
    }
  });
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  state.submitted = true;
  render();
  const found = errors();
  const firstBad = Object.keys(found)[0];
  if (firstBad) {
    fields[firstBad].focus();
    return;
  }
  if (state.sending) return;
  state.sending = true;
  formError.textContent = "";
  const reply = await postJson(`/api/booking/${encodeURIComponent(booking.id)}/passenger`, {
    firstName: state.firstName.trim(),
    lastName: state.lastName.trim(),
    email: state.email.trim(),
    railcard: state.railcard,
  });
  state.sending = false;
  if (reply.ok) {
    window.location.assign(reply.data.next);
  } else {
    formError.textContent = reply.data.error ?? "Something went wrong. Please try again.";
  }
});

// Read-only view for tests and curious people: the form's state, exactly as the page holds it.
window.railcoPassenger = { state, update };
render();

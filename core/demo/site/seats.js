// Seat map: toggle free seats until as many are chosen as there are passengers.
const map = document.getElementById("seat-map");
const needed = Number(map.dataset.needed);
const input = document.getElementById("seats-input");
const chosenText = document.getElementById("chosen-seats");
const proceed = document.getElementById("seats-continue");
const chosen = [];

function label(button, selected) {
  const kind = button.dataset.window === "true" ? "window" : "aisle";
  return `Seat ${button.dataset.seat}, ${kind}, ${selected ? "selected" : "available"}`;
}

function render() {
  for (const button of map.querySelectorAll("button.seat:not(:disabled)")) {
    const selected = chosen.includes(button.dataset.seat);
    button.setAttribute("aria-pressed", String(selected));
    button.setAttribute("aria-label", label(button, selected));
  }
  input.value = chosen.join(",");
  chosenText.textContent = chosen.length
    ? `Your seat${chosen.length > 1 ? "s" : ""}: ${chosen.join(", ")}`
    : "No seat chosen yet.";
  proceed.disabled = chosen.length !== needed;
}

map.addEventListener("click", (event) => {
  const button = event.target.closest("button.seat");
  if (!button || button.disabled) return;
  const seat = button.dataset.seat;
  const at = chosen.indexOf(seat);
  if (at >= 0) chosen.splice(at, 1);
  else {
    if (chosen.length === needed) chosen.shift(); // picking another seat moves the choice
    chosen.push(seat);
  }
  render();
});
render();

// Results page: re-order the server-rendered rows; the sort survives a reload via ?sort=.
const list = document.getElementById("journeys");
const sort = document.getElementById("sort");
const keys = {
  departure: (row) => Number(row.dataset.departure),
  price: (row) => Number(row.dataset.price) * 10000 + Number(row.dataset.departure),
  duration: (row) => Number(row.dataset.duration) * 10000 + Number(row.dataset.departure),
};

function apply(order) {
  const key = keys[order] ?? keys.departure;
  const rows = [...list.children].sort((a, b) => key(a) - key(b));
  list.append(...rows);
  const url = new URL(window.location.href);
  url.searchParams.set("sort", order);
  history.replaceState(null, "", url);
}

sort.addEventListener("change", () => apply(sort.value));
const initial = new URL(window.location.href).searchParams.get("sort");
if (initial && initial in keys) {
  sort.value = initial;
  apply(initial);
}

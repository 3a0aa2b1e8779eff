// Payment page: group the card number as it is typed and check the fields before sending.
import { setFieldError } from "/static/railco.js";

const form = document.getElementById("payment-form");
const number = document.getElementById("cardnumber");
const expiry = document.getElementById("cc-exp");
const cvc = document.getElementById("cvc");
const holder = document.getElementById("ccname");

function luhn(digits) {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

number.addEventListener("input", () => {
  const digits = number.value.replace(/\D/g, "").slice(0, 19);
  const grouped = digits.replace(/(\d{4})(?=\d)/g, "$1 ");
  if (grouped !== number.value) number.value = grouped;
});
expiry.addEventListener("input", () => {
  const digits = expiry.value.replace(/\D/g, "").slice(0, 4);
  const shaped = digits.length > 2 ? `${digits.slice(0, 2)}/${digits.slice(2)}` : digits;
  if (shaped !== expiry.value) expiry.value = shaped;
});

form.addEventListener("submit", (event) => {
  const digits = number.value.replace(/\D/g, "");
  const checks = [
    [number, digits.length < 12 ? "Enter the long number on the front of the card."
      : luhn(digits) ? "" : "That card number is not valid. Check it and try again."],
    [expiry, /^(0[1-9]|1[0-2])\/\d{2}$/.test(expiry.value) ? "" : "Enter the expiry date as MM/YY."],
    [cvc, /^\d{3,4}$/.test(cvc.value) ? "" : "Enter the 3 or 4 digit code on the back of the card."],
    [holder, holder.value.trim() ? "" : "Enter the name as it appears on the card."],
  ];
  let firstBad = null;
  for (const [input, message] of checks) {
    setFieldError(input, message);
    if (message && !firstBad) firstBad = input;
  }
  if (firstBad) {
    event.preventDefault();
    firstBad.focus();
  }
});

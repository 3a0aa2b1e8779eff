// Sign-in page: inline checks before the form goes to the server.
import { setFieldError } from "/static/railco.js";

const form = document.getElementById("signin-form");
form.addEventListener("submit", (event) => {
  const email = form.elements.email;
  const password = form.elements.password;
  setFieldError(email, /^[^\s@]+@[^\s@]+$/.test(email.value.trim()) ? "" : "Enter your email address.");
  setFieldError(password, password.value ? "" : "Enter your password.");
  const bad = form.querySelector("[aria-invalid=true]");
  if (bad) {
    event.preventDefault();
    bad.focus();
  }
});

// Sign in and sign up. The server sets the session cookies; the page only learns who signed in.
import { api } from "./api.js";
import { h, waitText } from "./dom.js";
import { afterSignIn, go, signedIn } from "./main.js";

export async function renderSignIn(main, mode) {
  const signup = mode === "signup";
  const error = h("p", { class: "error-box", role: "alert", hidden: true });
  const username = h("input", { id: "username", name: "username", autocomplete: "username", required: true,
                                minLength: signup ? 3 : 1, maxLength: 64, spellcheck: false,
                                autocapitalize: "none" });
  const password = h("input", { id: "password", name: "password", type: "password", required: true,
                                autocomplete: signup ? "new-password" : "current-password",
                                minLength: signup ? 8 : 1, maxLength: 1024,
                                "aria-describedby": signup ? "password-hint" : null });
  const submit = h("button", { type: "submit", class: "btn btn-primary btn-wide" },
                   signup ? "Create account" : "Sign in");

  async function onSubmit(event) {
    event.preventDefault();
    error.hidden = true;
    submit.disabled = true;
    try {
      const body = await api(signup ? "/api/session/signup" : "/api/session", {
        method: "POST", json: { username: username.value.trim(), password: password.value },
      });
      signedIn(body);
      go(afterSignIn());
    } catch (err) {
      error.textContent = explain(err, signup);
      error.hidden = false;
      (err.status === 409 || err.status === 422 ? username : password).focus();
    } finally {
      submit.disabled = false;
    }
  }

  main.append(h("section", { class: "auth-card" },
    h("h1", {}, signup ? "Create your account" : "Sign in to Thotqen"),
    h("p", { class: "muted" }, "Ask questions about your PDFs and get answers that cite the page."),
    error,
    h("form", { onsubmit: onSubmit, novalidate: false },
      h("label", { for: "username" }, "Username"), username,
      signup ? h("p", { class: "hint", id: "username-hint" }, "3–64 letters, digits or . _ @ + -") : null,
      h("label", { for: "password" }, "Password"), password,
      signup ? h("p", { class: "hint", id: "password-hint" }, "At least 8 characters.") : null,
      submit),
    h("p", { class: "switch" }, signup ? "Have an account? " : "New here? ",
      h("a", { href: signup ? "#/signin" : "#/signup" }, signup ? "Sign in" : "Create an account"))));
  username.focus();
}

function explain(err, signup) {
  if (err.status === 401) return "Wrong username or password.";
  if (err.status === 409) return "That username is taken; choose another.";
  if (err.status === 429) return `Too many attempts: ${err.detail}. Try again ${waitText(err.retryAfter)}.`;
  if (err.status === 422) {
    return signup ? "Check the form: the username needs 3–64 letters or digits, the password at least 8 characters."
      : "Fill in both fields.";
  }
  if (err.status === 0 || !err.status) return "The server could not be reached. Check your connection and try again.";
  return `Something went wrong (${err.detail}). Please try again.`;
}

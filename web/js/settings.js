// Settings: the account's API keys (POST/GET/DELETE /api/keys). A key is shown once, when made, for
// machines (an OpenAI client, an MCP agent, a script) to send as `Authorization: Bearer <key>`;
// the list shows its first characters only. Revoking one stops it on its next request.
import { api } from "./api.js";
import { banner, confirmDialog, h, when } from "./dom.js";

const SCOPES = [["read", "Read: documents, chats, search"], ["ask", "Ask: questions (chats, /v1, /rag, MCP)"],
                ["ingest", "Ingest: upload and change documents and collections"]];
const EXPIRIES = [["", "Never (until revoked)"], ["30", "In 30 days"], ["90", "In 90 days"], ["365", "In a year"]];

export async function renderSettings(main, made = null) {
  const { keys } = await api("/api/keys");
  const name = h("input", { id: "key-name", maxLength: 100, required: true, placeholder: "e.g. CI upload" });
  const checks = SCOPES.map(([scope, label]) => h("div", { class: "check" },
    h("input", { type: "checkbox", id: `key-scope-${scope}`, value: scope, checked: true }),
    h("label", { for: `key-scope-${scope}` }, label)));
  const expiry = h("select", { id: "key-expiry" }, EXPIRIES.map(([v, label]) => h("option", { value: v }, label)));
  const error = h("p", { class: "error-box", role: "alert", hidden: true });
  const form = h("form", { class: "key-new", "aria-labelledby": "key-new-title" },
    h("h3", { id: "key-new-title" }, "New key"),
    h("label", { for: "key-name" }, "Name"), name,
    h("fieldset", {}, h("legend", {}, "What it may do"), checks),
    h("div", { class: "field-inline" }, h("label", { for: "key-expiry" }, "Expires"), expiry),
    h("div", { class: "row-end" }, h("button", { type: "submit", class: "btn btn-primary" }, "Create key")),
    error);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const scopes = checks.map((c) => c.querySelector("input")).filter((i) => i.checked).map((i) => i.value);
    if (!scopes.length) {
      error.textContent = "Choose at least one thing the key may do.";
      error.hidden = false;
      return;
    }
    const json = { name: name.value.trim(), scopes };
    if (expiry.value) json.expires_in_days = Number(expiry.value);
    try {
      const key = await api("/api/keys", { method: "POST", json });
      await rerender(main, key);
    } catch (err) {
      error.textContent = `The key could not be created: ${err.detail}`;
      error.hidden = false;
      name.focus();
    }
  });
  main.append(h("section", { class: "page" }, h("h1", {}, "Settings"),
    h("h2", {}, "API keys"),
    h("p", { class: "muted" }, "For programs that use your documents: an OpenAI-compatible tool (", h("code", {}, "/v1"),
      "), an MCP agent (", h("code", {}, "/mcp"), ") or a script. Send it as ",
      h("code", {}, "Authorization: Bearer <key>"), ". A key has your limits, narrowed to what you choose."),
    made ? shown(made) : null,
    keys.length ? table(main, keys) : h("p", { class: "empty" }, "No API keys yet."),
    form));
}

async function rerender(main, made = null) {
  main.replaceChildren();
  await renderSettings(main, made);
  const target = main.querySelector(made ? "#key-made" : "h2");
  if (target) { target.setAttribute("tabindex", "-1"); target.focus(); }
}

// The new key, this once, with a copy button.
function shown(made) {
  const field = h("input", { id: "key-value", readOnly: true, value: made.key, spellcheck: false, class: "mono" });
  const copy = h("button", { type: "button", class: "btn btn-small" }, "Copy");
  copy.addEventListener("click", async () => {
    field.select();
    try { await navigator.clipboard.writeText(made.key); banner("The key was copied.", "info"); } catch {
      banner("Select the key and copy it with your keyboard.", "warn");
    }
  });
  return h("div", { class: "warn-box key-made", id: "key-made" },
    h("p", {}, h("strong", {}, `Your new key “${made.name}”. `), "Copy it now: it is stored hashed and will not be shown again."),
    h("label", { for: "key-value", class: "visually-hidden" }, "The new key"),
    h("div", { class: "row" }, field, copy));
}

function table(main, keys) {
  return h("div", { class: "table-wrap" }, h("table", { class: "keys" },
    h("caption", { class: "visually-hidden" }, "Your API keys"),
    h("thead", {}, h("tr", {}, ["Name", "Key", "May", "Created", "Last used", "Expires", ""].map((t) =>
      h("th", { scope: "col" }, t)))),
    h("tbody", {}, keys.map((k) => h("tr", { dataset: { id: k.id } },
      h("td", {}, k.name), h("td", {}, h("code", {}, `${k.prefix}…`)), h("td", {}, k.scopes.join(", ")),
      h("td", {}, when(k.created_at)), h("td", {}, k.last_used_at ? when(k.last_used_at) : "never"),
      h("td", {}, expires(k.expires_at)),
      h("td", {}, h("button", { type: "button", class: "btn btn-small btn-danger", onclick: () => revoke(main, k) },
        "Revoke", h("span", { class: "visually-hidden" }, ` ${k.name}`))))))));
}

function expires(iso) {
  if (!iso) return "never";
  return new Date(iso) <= new Date() ? `expired ${when(iso)}` : when(iso);
}

async function revoke(main, k) {
  const ok = await confirmDialog({ title: `Revoke “${k.name}”?`, ok: "Revoke",
                                   text: "Programs using this key stop working at once. This cannot be undone." });
  if (!ok) return;
  try {
    await api(`/api/keys/${k.id}`, { method: "DELETE" });
    banner(`The key “${k.name}” was revoked.`, "info");
    await rerender(main);
  } catch (err) { banner(`The key could not be revoked: ${err.detail}`, "error"); }
}

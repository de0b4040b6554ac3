// Collections: named groups of documents ("2023 filings"). Make one, add or take out documents,
// rename, delete, and start a chat over it: the chat searches the documents the collection holds
// when each question is asked, so one added later is part of it from then on. They follow the chosen
// space (space.js): a workspace's collections, made and changed by its editors and above.
import { allDocuments, api } from "./api.js";
import { banner, confirmDialog, h } from "./dom.js";
import { go } from "./main.js";
import { canWrite, inSpace, rank, roleOver, space } from "./space.js";

export async function renderCollections(main) {
  const [{ collections }, { documents }] = await Promise.all([api(inSpace("/api/collections")),
                                                             allDocuments(space.id)]);
  const details = await Promise.all(collections.map((c) => api(`/api/collections/${c.id}`)));
  const name = h("input", { id: "collection-name", maxLength: 200, required: true, placeholder: "e.g. 2023 filings" });
  const error = h("p", { class: "error-box", role: "alert", hidden: true });
  const create = h("form", { class: "collection-new" },
    h("label", { for: "collection-name" }, "Name of a new collection"),
    h("div", { class: "row" }, name, h("button", { type: "submit", class: "btn btn-primary" }, "Create collection")),
    error);
  create.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const made = await api(inSpace("/api/collections"), { method: "POST", json: { name: name.value.trim() } });
      banner(`The collection “${made.name}” was created.`, "info");
      await rerender(main, made.id);
    } catch (err) {
      error.textContent = `The collection could not be created: ${err.detail}`;
      error.hidden = false;
      name.focus();
    }
  });
  const list = details.length
    ? h("ul", { class: "collections" }, details.map((c) => card(main, c, documents)))
    : h("p", { class: "empty" }, documents.length
      ? "No collections yet. Group documents you often ask about together, such as one year's filings."
      : ["No collections yet, and no documents to put in one: ", h("a", { href: "#/documents" }, "upload documents"),
         " first."]);
  main.append(h("section", { class: "page" },
    h("h1", {}, space.id === null ? "Collections" : `Collections of ${space.name}`),
    h("p", { class: "muted" }, "A chat over a collection answers from the documents in it when you ask, "
                               + "including documents you add later.",
      space.id === null ? " A new one is in your personal space." : ""),
    canWrite() ? create : null, h("h2", {}, space.id === null ? "Your collections" : "Its collections"), list));
}

async function rerender(main, focusId = null) {
  main.replaceChildren();
  await renderCollections(main);
  const target = focusId && main.querySelector(`li[data-id="${focusId}"] h3`);
  if (target) { target.setAttribute("tabindex", "-1"); target.focus(); }
}

function card(main, c, documents) {
  const inside = new Set(c.documents.map((d) => d.id));
  const mine = rank(roleOver(c.workspace_id)) >= rank("editor");
  // a collection holds documents of its own space only
  const addable = mine ? documents.filter((d) => !inside.has(d.id) && d.status !== "failed"
                                          && (d.workspace_id ?? null) === (c.workspace_id ?? null)) : [];
  const pickId = `add-${c.id}`;
  const pick = h("select", { id: pickId }, addable.map((d) => h("option", { value: d.id }, d.name)));
  const add = h("form", { class: "row collection-add" },
    h("label", { for: pickId }, `Add a document to ${c.name}`), pick,
    h("button", { type: "submit", class: "btn btn-small" }, "Add"));
  add.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      await api(`/api/collections/${c.id}/documents`, { method: "POST", json: { document_ids: [pick.value] } });
      await rerender(main, c.id);
    } catch (err) { banner(`The document could not be added: ${err.detail}`, "error"); }
  });
  const members = c.documents.length
    ? h("ul", { class: "members" }, c.documents.map((d) => h("li", {},
      h("span", {}, d.name), [d.company, d.form, d.period].some(Boolean)
        ? h("span", { class: "muted" }, ` · ${[d.company, d.form, d.period].filter(Boolean).join(" · ")}`) : null,
      !mine ? null : h("button", { type: "button", class: "btn btn-small btn-quiet", onclick: async () => {
                      try {
                        await api(`/api/collections/${c.id}/documents/${d.id}`, { method: "DELETE" });
                        await rerender(main, c.id);
                      } catch (err) { banner(`The document could not be taken out: ${err.detail}`, "error"); }
                    } }, h("span", {}, "Take out"), h("span", { class: "visually-hidden" }, ` ${d.name} from ${c.name}`)))))
    : h("p", { class: "empty" }, "No documents in it yet.");
  const heading = h("h3", {}, c.name);
  return h("li", { class: "collection card", dataset: { id: c.id } },
    h("div", { class: "collection-head" }, heading,
      h("span", { class: "muted" }, `${c.document_count} document${c.document_count === 1 ? "" : "s"}`,
        space.id === null && c.workspace ? ` · ${c.workspace}` : "")),
    members,
    addable.length ? add : null,
    h("div", { class: "row" },
      h("button", { type: "button", class: "btn btn-small btn-primary", onclick: () => startChat(c) },
        h("span", {}, "Start a chat"), h("span", { class: "visually-hidden" }, ` over ${c.name}`)),
      mine ? h("button", { type: "button", class: "btn btn-small", onclick: () => rename(main, c, heading) },
        h("span", {}, "Rename"), h("span", { class: "visually-hidden" }, ` ${c.name}`)) : null,
      mine ? h("button", { type: "button", class: "btn btn-small btn-danger", onclick: () => remove(main, c) },
        h("span", {}, "Delete"), h("span", { class: "visually-hidden" }, ` ${c.name}`)) : null));
}

async function startChat(c) {
  try {
    const chat = await api("/api/chats", { method: "POST", json: { title: c.name, collection_id: c.id,
                                                                   workspace_id: space.id } });
    go(`#/chats/${chat.id}`);
  } catch (err) { banner(`The chat could not be started: ${err.detail}`, "error"); }
}

function rename(main, c, heading) {
  const input = h("input", { value: c.name, maxLength: 200, "aria-label": `New name of ${c.name}` });
  const form = h("form", { class: "rename-form" }, input,
    h("button", { type: "submit", class: "btn btn-small btn-primary" }, "Save"),
    h("button", { type: "button", class: "btn btn-small", onclick: () => form.replaceWith(heading) }, "Cancel"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      await api(`/api/collections/${c.id}`, { method: "PATCH", json: { name: input.value.trim() } });
      await rerender(main, c.id);
    } catch (err) { banner(`Could not rename the collection: ${err.detail}`, "error"); }
  });
  input.addEventListener("keydown", (e) => { if (e.key === "Escape") form.replaceWith(heading); });
  heading.replaceWith(form);
  input.focus();
  input.select();
}

async function remove(main, c) {
  const ok = await confirmDialog({ title: `Delete “${c.name}”?`,
                                   text: "The collection goes; its documents stay, and its chats keep answering "
                                         + "from the documents it has now." });
  if (!ok) return;
  try {
    await api(`/api/collections/${c.id}`, { method: "DELETE" });
    banner("The collection was deleted.", "info");
  } catch (err) {
    if (err.status !== 404) { banner(`Could not delete the collection: ${err.detail}`, "error"); return; }
  }
  await rerender(main);
  main.querySelector("h1")?.focus();
}

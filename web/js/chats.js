// Chats: the list, a new chat over all documents or a chosen few, rename, delete, and the
// conversation: answers stream token by token; [n] markers link to the cited page. A long chat
// opens at its latest page of messages (the API's MESSAGE_PAGE_MAX); "Earlier messages" at the
// top loads the page before the oldest one shown, keeping what is on screen where it was.
import { allDocuments, api, readEvents, request } from "./api.js";
import { append, banner, confirmDialog, h, waitText, when } from "./dom.js";
import { go } from "./main.js";
import { docs, renderMessage } from "./message.js";
import { prefetchCitation } from "./viewer.js";
import { canWrite, inSpace, space } from "./space.js";

let docsById = new Map();
// a touch screen: the message box does not take focus on open (the keyboard would cover the answer)
const touch = () => matchMedia("(hover: none) and (pointer: coarse)").matches;

export async function renderChats(main, chatId, params = new URLSearchParams()) {
  const [{ chats }, { chats: sharedAll }, { documents: readable }, { collections }] = await Promise.all([
    api("/api/chats"), api(inSpace("/api/chats/shared")), allDocuments(), api(inSpace("/api/collections"))]);
  const mine = new Set(chats.map((c) => c.id));
  const shared = sharedAll.filter((c) => !mine.has(c.id));  // others' chats shared with the reader's workspaces
  // every document the person reads names the citations; a new chat picks from the chosen space's
  docsById = new Map(readable.map((d) => [d.id, d]));
  const documents = space.id === null ? readable : readable.filter((d) => d.workspace_id === space.id);
  docs.byId = docsById;
  const side = h("aside", { class: "chat-side", "aria-labelledby": "chats-heading" },
    h("div", { class: "side-head" },
      h(chatId ? "h2" : "h1", { id: "chats-heading" }, "Chats"),
      h("button", { type: "button", class: "btn btn-primary",
                    onclick: () => newChatDialog(main, documents, collections) }, "New chat")),
    searchBox(),
    chats.length ? h("ul", { class: "chat-list" }, chats.map((c) => h("li", {},
      h("a", { href: `#/chats/${c.id}`, "aria-current": c.id === chatId ? "page" : null },
        h("span", { class: "chat-title" }, c.title || "Untitled chat"),
        h("span", { class: "chat-meta" }, scopeText(c), " · ", when(c.updated_at))))))
      : h("p", { class: "empty" }, "No chats yet."),
    shared.length ? [h("h2", { class: "side-sub", id: "shared-heading" }, "Shared with you"),
      h("ul", { class: "chat-list", "aria-labelledby": "shared-heading" }, shared.map((c) => h("li", {},
        h("a", { href: `#/chats/${c.id}`, "aria-current": c.id === chatId ? "page" : null },
          h("span", { class: "chat-title" }, c.title || "Untitled chat"),
          h("span", { class: "chat-meta" }, `${c.owner} · ${c.workspace}`, " · ", when(c.updated_at))))))]
      : null);
  const pane = h("section", { class: "chat-pane", "aria-label": "Conversation" });
  main.append(h("div", { class: `chats-layout${chatId ? " has-chat" : ""}${documents.length ? "" : " no-docs"}` },
    side, pane));
  if (chatId) await renderConversation(pane, chatId, readable, params.get("m"));
  else {
    pane.append(h("div", { class: "empty-pane" },
      documents.length
        ? [h("p", {}, "Choose a chat, or start a new one to ask about your documents."),
           h("button", { type: "button", class: "btn btn-primary",
                         onclick: () => newChatDialog(main, documents, collections) }, "Start a new chat")]
        : canWrite()
          ? [h("p", {}, "Upload a PDF first: answers come from your documents."),
             h("a", { class: "btn btn-primary", href: "#/documents" }, "Upload documents")]
          : [h("p", {}, `The workspace “${space.name}” has no documents yet: its editors upload them.`)]));
  }
}

function scopeText(chat) {
  const where = chat.workspace ? `${chat.workspace}: ` : "";
  if (chat.collection_name) return `${where}Collection: ${chat.collection_name}`;
  const n = chat.document_ids ? chat.document_ids.length : 0;
  return where + (n ? `${n} document${n > 1 ? "s" : ""}` : "All documents");
}

function newChatDialog(main, documents, collections = []) {
  const ready = documents.filter((d) => d.status === "ready");
  const title = h("input", { id: "new-title", maxLength: 200, placeholder: "e.g. Annual report questions" });
  const all = h("input", { type: "radio", name: "scope", id: "scope-all", value: "all", checked: true });
  const some = h("input", { type: "radio", name: "scope", id: "scope-some", value: "some", disabled: !ready.length });
  const boxes = ready.map((d) => h("input", { type: "checkbox", name: "doc", value: d.id, id: `doc-${d.id}` }));
  const inCollection = h("input", { type: "radio", name: "scope", id: "scope-collection", value: "collection",
                                    disabled: !collections.length });
  const collection = h("select", { id: "scope-collection-pick", "aria-label": "Collection", disabled: true },
    collections.map((c) => h("option", { value: c.id }, `${c.name} (${c.document_count})`)));
  const picks = h("fieldset", { class: "doc-picks", disabled: true },
    h("legend", { class: "visually-hidden" }, "Documents"),
    boxes.map((box, i) => h("div", { class: "check" }, box, h("label", { for: box.id }, ready[i].name))));
  const error = h("p", { class: "error-box", role: "alert", hidden: true });
  const dialog = h("dialog", { class: "new-chat", "aria-labelledby": "new-chat-title" });
  for (const r of [all, some, inCollection]) {
    r.addEventListener("change", () => { picks.disabled = !some.checked; collection.disabled = !inCollection.checked; });
  }
  const form = h("form", { method: "dialog" },
    h("h2", { id: "new-chat-title" }, "New chat"),
    h("label", { for: "new-title" }, "Title (optional)"), title,
    h("fieldset", {}, h("legend", {}, "Answer from"),
      h("div", { class: "check" }, all, h("label", { for: "scope-all" },
        space.id === null ? "All my documents" : `All documents of ${space.name}`)),
      h("div", { class: "check" }, some, h("label", { for: "scope-some" }, "Only the documents I choose")),
      picks,
      h("div", { class: "check" }, inCollection, h("label", { for: "scope-collection" },
        collections.length ? "A collection (its documents when I ask)" : "A collection (you have none yet)")),
      collections.length ? h("div", { class: "collection-pick" }, collection) : null),
    error,
    h("div", { class: "row-end" },
      h("button", { type: "button", class: "btn", onclick: () => dialog.close() }, "Cancel"),
      h("button", { type: "submit", class: "btn btn-primary" }, "Create chat")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const chosen = boxes.filter((b) => b.checked).map((b) => b.value);
    if (some.checked && !chosen.length) {
      error.textContent = "Choose at least one document, or answer from all of them.";
      error.hidden = false;
      return;
    }
    try {
      const chat = await api("/api/chats", { method: "POST",
        json: { title: title.value.trim(), document_ids: some.checked ? chosen : null,
                collection_id: inCollection.checked ? collection.value : null, workspace_id: space.id } });
      dialog.close();
      go(`#/chats/${chat.id}`);
    } catch (err) {
      error.textContent = `The chat could not be created: ${err.detail}`;
      error.hidden = false;
    }
  });
  dialog.append(form);
  dialog.addEventListener("close", () => dialog.remove());
  main.append(dialog);
  dialog.showModal();
  title.focus();
}

async function renderConversation(pane, chatId, documents, foundId = null) {
  let chat;
  try {
    chat = await api(`/api/chats/${encodeURIComponent(chatId)}`);
  } catch (err) {
    if (err.status !== 404) throw err;
    pane.append(h("h1", {}, "Chat not found"),
      h("p", {}, "It was deleted, or the link is wrong. ", h("a", { href: "#/chats" }, "Back to your chats")));
    return;
  }
  const heading = h("h1", { class: "chat-heading" }, chat.title || "Untitled chat");
  const list = h("ol", { class: "messages", "aria-label": "Messages" });
  const live = h("p", { class: "visually-hidden", role: "status", "aria-live": "polite" });
  const question = h("textarea", { id: "question", rows: 2, required: true, maxLength: 4000,
                                   placeholder: "Ask about your documents…", "aria-describedby": "ask-hint" });
  const send = h("button", { type: "submit", class: "btn btn-primary" }, "Send");
  const stop = h("button", { type: "button", class: "btn btn-danger", hidden: true }, "Stop");
  const composer = h("form", { class: "composer" },
    h("label", { for: "question", class: "visually-hidden" }, "Your question"), question, send, stop,
    h("p", { class: "hint", id: "ask-hint" }, "Enter sends, Shift+Enter starts a new line."));
  const readOnly = chat.owner != null;  // shared with the reader by another member of its workspace
  const header = h("div", { class: "chat-head" },
    h("a", { href: "#/chats", class: "back-link" }, "‹ Chats"),
    heading,
    h("span", { class: "muted scope" }, scopeLine(chat)),
    readOnly ? h("p", { class: "muted shared-note" },
      `Shared read-only with the workspace “${chat.workspace}” by ${chat.owner}: only they ask in it.`)
      : h("div", { class: "chat-actions" },
        chat.workspace_id != null ? shareButton(chat) : null,
        h("button", { type: "button", class: "btn btn-small", onclick: () => rename(chat, heading) }, "Rename"),
        h("button", { type: "button", class: "btn btn-small btn-danger", onclick: () => removeChat(chat) },
          "Delete")));
  append(pane, [header, list, live, documents.length || readOnly ? null
    : h("p", { class: "warn-box" }, "You have no documents yet. ", h("a", { href: "#/documents" }, "Upload PDFs"),
        " to get answers."), readOnly ? null : composer]);

  const conv = { chat, list, live, question, composer, busy: false };
  conv.run = async (work) => {  // one answer at a time: Send becomes Stop meanwhile
    conv.busy = true;
    send.hidden = true;
    stop.hidden = false;
    stop.disabled = false;
    list.querySelectorAll(".regen").forEach((b) => { b.disabled = true; });
    try {
      await work();
    } finally {
      conv.busy = false;
      stop.hidden = true;
      send.hidden = false;
      if (document.activeElement === stop || document.activeElement === document.body) question.focus();
    }
  };
  conv.actions = (m, latest) => ({ chatId: chat.id, latest: latest && !readOnly, readOnly,
                                   regenerate: (old) => regenerate(conv, old) });

  // answers replaced by a later one (any page loaded so far): marked "Earlier answer"
  conv.replaced = new Set();
  conv.loaded = new Set();
  const lastId = chat.messages.at(-1)?.id;
  list.append(...messageItems(conv, chat.messages, lastId));
  const latest = chat.messages.filter((m) => m.role === "assistant" && m.status === "ok").at(-1);
  if (latest) prefetchCited(latest.citations || [], (latest.meta || {}).cited || []);
  if (!chat.messages.length) list.append(h("li", { class: "msg-hint" }, "Ask a first question below."));
  conv.oldestId = chat.messages[0]?.id;
  if (chat.next_offset != null) list.prepend(earlierButton(conv));
  keepAboveComposer(pane, composer);
  // from the sidebar's search: a message further back than the latest page is loaded too
  for (let pages = 0; foundId && !conv.loaded.has(Number(foundId)) && conv.earlier && pages < 50; pages++) {
    if (!(await conv.earlier.load())) break;
  }
  const found = foundId && list.querySelector(`li[data-id="${CSS.escape(foundId)}"]`);
  if (found) found.classList.add("msg-found");  // from the sidebar's search: that message, marked
  requestAnimationFrame(() => (found ? found.scrollIntoView({ block: "center" }) : reveal(list.lastElementChild)));

  question.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); composer.requestSubmit(); }
  });
  stop.addEventListener("click", async () => {
    stop.disabled = true;
    live.textContent = "Stopping…";
    try {
      await api(`/api/chats/${chat.id}/stop`, { method: "POST" });
    } catch (err) {
      stop.disabled = false;
      banner(`The answer could not be stopped: ${err.detail}`, "error");
    }
  });
  composer.addEventListener("submit", async (e) => {
    e.preventDefault();
    const text = question.value.trim();
    if (!text || conv.busy) return;
    question.value = "";
    await conv.run(async () => {
      await ask(conv, text);
      if (!chat.title) {  // name an untitled chat after its first question
        chat.title = text.length > 60 ? `${text.slice(0, 57)}…` : text;
        heading.textContent = chat.title;
        api(`/api/chats/${chat.id}`, { method: "PATCH", json: { title: chat.title } }).then(refreshSide, () => {});
      }
    });
  });
  if (!touch() && !readOnly) question.focus();
}

// A chat over a workspace: its owner shares it read-only with the workspace's members, or stops.
function shareButton(chat) {
  const button = h("button", { type: "button", class: "btn btn-small", "aria-pressed": String(chat.shared) },
    chat.shared ? "Stop sharing" : "Share with the workspace");
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const changed = await api(`/api/chats/${chat.id}/share`, { method: chat.shared ? "DELETE" : "PUT" });
      chat.shared = changed.shared;
      button.textContent = chat.shared ? "Stop sharing" : "Share with the workspace";
      button.setAttribute("aria-pressed", String(chat.shared));
      banner(chat.shared ? `The members of “${chat.workspace}” can read this chat now (not ask in it).`
        : "This chat is yours alone again.", "info");
    } catch (err) {
      banner(`Could not change the sharing: ${err.detail}`, "error");
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

// A page of messages (oldest first) as list items; `lastId`: the chat's latest message, the one
// answer that can be answered again.
function messageItems(conv, messages, lastId = null) {
  for (const m of messages) {
    conv.loaded.add(m.id);
    if ((m.meta || {}).regenerates) conv.replaced.add(m.meta.regenerates);
  }
  return messages.map((m) => {
    const shown = conv.replaced.has(m.id) ? { ...m, meta: { ...m.meta, superseded: true } } : m;
    return renderMessage(shown, m.role === "assistant" ? conv.actions(m, m.id === lastId) : null);
  });
}

// "Earlier messages": the page before the oldest message shown (`before`, which stays put while
// the chat grows), put above it without moving what is on screen.
function earlierButton(conv) {
  const button = h("button", { type: "button", class: "btn btn-small" }, "Earlier messages");
  const li = h("li", { class: "msg-earlier" }, button);
  const load = async () => {
    button.disabled = true;
    button.textContent = "Loading earlier messages…";
    let page;
    try {
      page = await api(`/api/chats/${encodeURIComponent(conv.chat.id)}?before=${conv.oldestId}`);
    } catch (err) {
      button.disabled = false;
      button.textContent = "Earlier messages";
      banner(`Earlier messages could not be loaded: ${err.detail}`, "error");
      return false;
    }
    const anchor = li.nextElementSibling;
    keepPlace(conv.list, anchor, () => {
      li.after(...messageItems(conv, page.messages));
      if (page.next_offset == null) li.remove();
    });
    conv.oldestId = page.messages[0]?.id ?? conv.oldestId;
    conv.live.textContent = `${page.messages.length} earlier messages shown.`;
    if (page.next_offset == null) {
      conv.earlier = null;
      if (document.activeElement === document.body) conv.question.focus({ preventScroll: true });
    } else {
      button.disabled = false;
      button.textContent = "Earlier messages";
      // disabled while loading, it lost the focus: a keyboard reader goes on from it
      if (document.activeElement === document.body) button.focus({ preventScroll: true });
    }
    return page.messages.length > 0;
  };
  button.addEventListener("click", load);
  conv.earlier = { load };
  return li;
}

// Run `change` (which adds above `anchor`) and scroll back by what `anchor` moved: the messages
// scroll in their list on a wide screen and with the page on a phone.
function keepPlace(list, anchor, change) {
  const before = anchor ? anchor.getBoundingClientRect().top : 0;
  change();
  if (!anchor) return;
  const moved = anchor.getBoundingClientRect().top - before;
  if (!moved) return;
  if (list.scrollHeight > list.clientHeight) list.scrollTop += moved;
  else window.scrollBy(0, moved);
}

// The message box is sticky at phone width: a message scrolled into view stops above it.
function keepAboveComposer(pane, composer) {
  const set = () => pane.style.setProperty("--composer-h", `${composer.offsetHeight}px`);
  set();
  new ResizeObserver(set).observe(composer);
}

function reveal(li) {
  if (!li) return;
  // a long answer shows from its start; a short one, whole, just above the message box
  const room = window.innerHeight - (parseFloat(getComputedStyle(li.closest(".chat-pane")).getPropertyValue("--composer-h")) || 0);
  li.scrollIntoView({ block: li.offsetHeight > room * 0.8 ? "start" : "end" });
}

function refreshSide() {
  const link = document.querySelector(".chat-list a[aria-current='page'] .chat-title");
  const heading = document.querySelector(".chat-heading");
  if (link && heading) link.textContent = heading.textContent;
}

function scopeLine(chat) {
  if (chat.collection_name) return `Answers from the collection “${chat.collection_name}” (its documents when you ask)`;
  if (!chat.document_ids) {
    return chat.workspace ? `Answers from the documents of the workspace “${chat.workspace}”`
      : "Answers from all your documents";
  }
  const names = chat.document_ids.map((id) => docsById.get(id)?.name || "a deleted document");
  return `Answers from ${names.join(", ")}`;
}

async function rename(chat, heading) {
  const input = h("input", { id: "rename", value: chat.title, maxLength: 200, "aria-label": "New title" });
  const form = h("form", { class: "rename-form" }, input,
    h("button", { type: "submit", class: "btn btn-small btn-primary" }, "Save"),
    h("button", { type: "button", class: "btn btn-small", onclick: () => form.replaceWith(heading) }, "Cancel"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const updated = await api(`/api/chats/${chat.id}`, { method: "PATCH", json: { title: input.value.trim() } });
      chat.title = updated.title;
      heading.textContent = chat.title || "Untitled chat";
      form.replaceWith(heading);
      refreshSide();
      heading.focus();
    } catch (err) {
      banner(`Could not rename the chat: ${err.detail}`, "error");
    }
  });
  input.addEventListener("keydown", (e) => { if (e.key === "Escape") form.replaceWith(heading); });
  heading.replaceWith(form);
  input.focus();
  input.select();
}

async function removeChat(chat) {
  const ok = await confirmDialog({ title: `Delete “${chat.title || "Untitled chat"}”?`,
                                   text: "The conversation is deleted for good; your documents stay." });
  if (!ok) return;
  try {
    await api(`/api/chats/${chat.id}`, { method: "DELETE" });
    banner("The chat was deleted.", "info");
  } catch (err) {
    if (err.status !== 404) { banner(`Could not delete the chat: ${err.detail}`, "error"); return; }
  }
  go("#/chats");
}

// ---- the sidebar's search ---------------------------------------------------------------------

// Matched words come between U+0002 and U+0003 (storage/finder.py): marked with elements, the
// snippet itself only ever text.
function marked(snippet) {
  return snippet.split("\x02").map((part, i) => {
    if (!i) return part;
    const [hit, ...rest] = part.split("\x03");
    return [h("mark", {}, hit), rest.join("")];
  });
}

function searchBox() {
  const input = h("input", { type: "search", id: "find", maxLength: 200, autocomplete: "off",
                             placeholder: "Search chats and documents" });
  const results = h("div", { class: "found", id: "found", "aria-live": "polite" });
  const form = h("form", { class: "side-search", role: "search", "aria-label": "Chats and documents" },
    h("label", { for: "find", class: "visually-hidden" }, "Search your chats and documents"), input);
  let timer = null;
  let asked = 0;
  const run = async () => {
    const q = input.value.trim();
    const chatList = form.parentElement?.querySelector(".chat-list, .chat-side > .empty");
    if (!q) { results.replaceChildren(); if (chatList) chatList.hidden = false; return; }
    const mine = ++asked;
    let found;
    try {
      found = await api(inSpace(`/api/search?q=${encodeURIComponent(q)}`));
    } catch (err) {
      results.replaceChildren(h("p", { class: "error-box" }, `The search failed: ${err.detail}`));
      return;
    }
    if (mine !== asked) return;  // a later search is on its way
    if (chatList) chatList.hidden = true;
    const chats = found.chats.map((c) => h("li", {}, h("a", { href: `#/chats/${c.id}${c.message_id ? `?m=${c.message_id}` : ""}` },
      h("span", { class: "chat-title" }, c.title || "Untitled chat"),
      c.message_id ? h("span", { class: "snippet" }, marked(c.snippet)) : null)));
    const docs = found.documents.map((d) => h("li", {}, h("a", { href: `#/documents?doc=${d.id}` },
      h("span", {}, d.name),
      [d.company, d.form, d.period].some(Boolean)
        ? h("span", { class: "snippet" }, [d.company, d.form, d.period].filter(Boolean).join(" · ")) : null)));
    results.replaceChildren();
    append(results, [
      chats.length || docs.length ? null : h("p", { class: "empty" }, `Nothing matches “${q}”.`),
      chats.length ? [h("h3", {}, "Chats"), h("ul", { "aria-label": "Chats found" }, chats)] : null,
      docs.length ? [h("h3", {}, "Documents"), h("ul", { "aria-label": "Documents found" }, docs)] : null]);
  };
  input.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(run, 250); });
  form.addEventListener("submit", (e) => { e.preventDefault(); clearTimeout(timer); run(); });
  return [form, results];
}

// ---- asking ------------------------------------------------------------------------------------

function pending() {
  const status = h("p", { class: "thinking" }, h("span", { class: "spinner", "aria-hidden": "true" }),
                   "Searching your documents…");
  const text = document.createTextNode("");
  const li = h("li", { class: "msg msg-assistant msg-streaming", "aria-busy": "true" }, status,
               h("div", { class: "answer-text" }, text));
  return { li, status, text };
}

async function ask(conv, question) {
  const { list, live } = conv;
  list.querySelector(".msg-hint")?.remove();
  list.append(renderMessage({ role: "user", content: question }));
  await stream(conv, `/api/chats/${conv.chat.id}/messages`, { question }, () => { conv.question.value ||= question; });
}

async function regenerate(conv, old) {
  if (conv.busy) return;
  const oldLi = conv.list.querySelector(`li[data-id="${old.id}"]`);
  await conv.run(async () => {
    const done = await stream(conv, `/api/chats/${conv.chat.id}/messages/${old.id}/regenerate`, undefined, () => {});
    if (done && oldLi) {  // the earlier answer stays, marked as such, without its actions
      oldLi.querySelector(".msg-actions .regen")?.remove();
      if (!oldLi.querySelector(".msg-superseded-label")) {
        oldLi.prepend(h("p", { class: "msg-label muted msg-superseded-label" }, "Earlier answer"));
      }
    }
  });
}

// POST `path` and show the answer as it streams; true when an answer (of any final kind) came.
async function stream(conv, path, json, onRefused) {
  const { list, live } = conv;
  const p = pending();
  list.append(p.li);
  reveal(p.li);
  live.textContent = "Searching your documents…";
  let res;
  try {
    res = await request(path, { method: "POST", json });
  } catch (err) {
    p.li.replaceWith(refused(err));
    onRefused();  // nothing typed is lost
    live.textContent = "The question was not sent.";
    return false;
  }
  let text = "";
  let firstToken = true;
  let final = null;
  try {
    for await (const { event, data, receivedAt } of readEvents(res)) {
      if (event === "queued") {  // every answer place is taken: ours waits its turn (1: next)
        p.status.lastChild.textContent = `Waiting for a free answer slot (position ${data.position})…`;
      } else if (event === "sources") {
        p.status.lastChild.textContent = "Writing the answer…";
      } else if (event === "draft") {  // the model is writing: its text is shown once it has been checked
        p.status.lastChild.textContent = "Checking the answer against your documents…";
      } else if (event === "token") {
        text += data.token;
        p.text.data = text;
        if (firstToken) {
          firstToken = false;
          requestAnimationFrame(() => window.__thotqen.tokenDelays.push(performance.now() - receivedAt));
          live.textContent = "Writing the answer…";
        }
      } else if (event === "reset") {
        text = "";
        p.text.data = "";
        p.status.lastChild.textContent = "The model failed mid-answer; another one starts over…";
      } else if (["done", "blocked", "error", "stopped"].includes(event)) {
        final = { event, data };
      }
    }
  } catch {
    final = null;
  }
  if (!final) {
    p.li.replaceWith(h("li", { class: "msg msg-error" }, h("p", { class: "msg-label" }, "Connection lost"),
      h("p", {}, "The answer stopped with the connection; what was checked so far is saved in this chat. "),
      h("button", { type: "button", class: "btn btn-small", onclick: () => go(`#/chats/${conv.chat.id}?r=${Date.now()}`) },
        "Reload the chat")));
    live.textContent = "The connection was lost.";
    return false;
  }
  const { event, data } = final;
  const status = event === "done" ? "ok" : event;
  const message = { id: data.message_id, role: "assistant", content: data.answer ?? data.error ?? "", status,
                    citations: data.citations || [], meta: { ...data, block_reason: data.reason } };
  list.querySelectorAll(".msg-actions .regen").forEach((b) => b.remove()); // only the latest answer is answered again
  const li = renderMessage(message, data.message_id ? conv.actions(message, true) : null);
  p.li.replaceWith(li);
  if (status === "ok") prefetchCited(data.citations || [], data.cited || []);
  reveal(li);
  live.textContent = status === "ok" ? "Answer ready." : status === "blocked" ? "The question was blocked."
    : status === "stopped" ? "The answer was stopped." : "No answer could be produced.";
  return true;
}

// The pages an answer cites (at most two): the reader's likely next click.
function prefetchCited(citations, cited) {
  const used = cited.length ? citations.filter((c) => cited.includes(c.n)) : citations;
  for (const c of used.slice(0, 2)) {
    const doc = c.document_id && docsById.get(c.document_id);
    if (doc) prefetchCitation(c, doc);
  }
}

function refused(err) {
  let text;
  if (err.status === 429) text = `You have reached the hourly question limit. Try again ${waitText(err.retryAfter)}.`;
  else if (err.status === 422) text = `The question was not accepted: ${err.detail}.`;
  else if (err.status === 404) text = "This chat no longer exists.";
  else if (!err.status) text = "The server could not be reached. Check your connection and send again.";
  else text = `The question could not be sent (${err.detail}). Try again.`;
  return h("li", { class: "msg msg-error", role: "alert" }, h("p", { class: "msg-label" }, "Not sent"), h("p", {}, text));
}

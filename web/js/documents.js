// Documents: upload several documents (picker or drag and drop), one live stepper per upload fed by the
// job's Server-Sent Events, and the list with status, pages, passages and delete. Both follow the
// chosen space (space.js): a workspace's documents say who uploaded them, and a viewer there gets
// neither the upload nor the delete.
import { allDocuments, api, refreshSession, uploadFile } from "./api.js";
import { banner, bytes, confirmDialog, h, waitText, when } from "./dom.js";
import { canWrite, inSpace, rank, roleOver, space } from "./space.js";

const STEPS = [
  ["upload", "Upload"], ["parsing", "Read"], ["chunking", "Split"], ["embedding", "Index"], ["done", "Ready"],
];
const STAGE_TEXT = {
  queued: "Waiting for its turn…", starting: "Starting…", parsing: "Reading the pages…",
  chunking: "Splitting into passages…", embedding: "Indexing the passages…", storing: "Saving…",
  done: "Ready to ask about.",
};

// Uploads survive navigation between views while the page is open.
const uploads = [];
let listEl = null;
let uploadsEl = null;

// What the server accepts, from its format registry (GET /api/formats), asked once per page load.
let formatsOnce = null;

function acceptedFormats() {
  formatsOnce ??= api("/api/formats").catch(() => { formatsOnce = null; return null; });
  return formatsOnce;
}

function orList(words) {
  return words.length > 1 ? `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}` : words.join("");
}

export async function renderDocuments(main, params = new URLSearchParams()) {
  const known = await acceptedFormats();
  // Without the list the picker offers every file: the server still tells each one by its content.
  const input = h("input", { type: "file", id: "file-input", class: "visually-hidden", multiple: true,
                             ...(known ? { accept: known.accept } : {}), "aria-describedby": "drop-hint" });
  input.addEventListener("change", () => { startUploads([...input.files]); input.value = ""; });
  const kinds = known ? `${orList(known.formats.map((f) => f.label))}; several at once.` : "Several at once.";
  const zone = h("label", { class: "dropzone", for: "file-input", id: "dropzone" },
    h("span", { class: "dropzone-title" }, "Drop documents here, or ", h("u", {}, "choose files")),
    h("span", { class: "hint", id: "drop-hint" }, `${kinds} Each is read, split and indexed.`));
  for (const type of ["dragenter", "dragover"]) {
    zone.addEventListener(type, (e) => { e.preventDefault(); zone.classList.add("dragging"); });
  }
  for (const type of ["dragleave", "drop"]) zone.addEventListener(type, () => zone.classList.remove("dragging"));
  zone.addEventListener("drop", (e) => { e.preventDefault(); startUploads([...e.dataTransfer.files]); });

  uploadsEl = h("ul", { class: "uploads", "aria-label": "Uploads" });
  listEl = h("div", { class: "doc-list", "aria-live": "polite" });
  const where = space.id === null
    ? h("p", { class: "muted" }, "Yours and your workspaces’ documents. What you upload here goes to your personal space.")
    : h("p", { class: "muted" }, `The documents of the workspace “${space.name}”, where you are ${article(space.role)} `
        + `${space.role}.`, canWrite() ? " What you upload here goes to it." : "");
  const upload = canWrite() ? [input, zone] : [h("p", { class: "warn-box" },
    `As a viewer of “${space.name}” you can search, ask and open its documents; an editor or above uploads them.`)];
  main.append(h("section", { class: "page" },
    h("h1", {}, space.id === null ? "Documents" : `Documents of ${space.name}`),
    where, upload, uploadsEl,
    h("h2", {}, space.id === null ? "Your documents" : "Its documents"), listEl));
  for (const u of uploads) uploadsEl.append(u.el);
  await refreshList();
  const found = params.get("doc") && listEl.querySelector(`tr[data-id="${CSS.escape(params.get("doc"))}"]`);
  if (found) {  // from the sidebar's search: the document's row, marked
    found.classList.add("doc-found");
    found.scrollIntoView({ block: "center" });
  }
}

export async function refreshList() {
  if (!listEl || !listEl.isConnected) return;
  const { documents } = await allDocuments(space.id);
  listEl.replaceChildren(documents.length ? table(documents)
    : h("p", { class: "empty" }, canWrite() ? "No documents yet. Upload a PDF to start asking questions."
      : "No documents in it yet."));
}

export function article(role) {
  return /^[aeiou]/.test(role || "") ? "an" : "a";
}

// Where a document is, and who put it there when that is a workspace.
function whereCell(d) {
  if (d.workspace_id === null || d.workspace_id === undefined) return h("span", {}, "Personal");
  return [h("span", { class: "doc-space" }, d.workspace),
          d.uploaded_by ? h("span", { class: "doc-by muted" }, `uploaded by ${d.uploaded_by}`) : null];
}

function mayChange(d) {
  return rank(roleOver(d.workspace_id)) >= rank("editor");
}

// What the document says it is (company · form · period, read from its cover page), when it says;
// "Company unknown" where its cover named none, with a control to set it (PATCH /api/documents/{id}):
// a search that names a company ranks documents of unknown company below that company's own.
function context(d) {
  const company = d.company || "Company unknown";
  const said = [company, d.form, d.period].filter(Boolean).join(" · ");
  const edit = h("button", { type: "button", class: "btn btn-quiet btn-small doc-company-edit",
                             "aria-label": `${d.company ? "Change company" : "Set company"} of ${d.name}` },
                 d.company ? "Change" : "Set company");
  const line = h("span", { class: "doc-context muted", dataset: { issuer: d.issuer || "" } }, said, " ",
                 mayChange(d) ? edit : null);
  edit.addEventListener("click", () => line.replaceWith(companyForm(d, line)));
  return [line];
}

function companyForm(d, line) {
  const input = h("input", { type: "text", class: "doc-company-input", value: d.company || "", maxlength: 200,
                             required: true, "aria-label": `Company of ${d.name}` });
  const form = h("form", { class: "doc-company-form" }, input,
    h("button", { type: "submit", class: "btn btn-small" }, "Save"),
    h("button", { type: "button", class: "btn btn-quiet btn-small", onclick: () => form.replaceWith(line) },
      "Cancel"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      await api(`/api/documents/${d.id}`, { method: "PATCH", json: { company: input.value } });
      banner(`${d.name}: company set to ${input.value.trim()}.`, "info");
    } catch (err) {
      banner(`Could not set the company of ${d.name}: ${err.detail}`, "error");
    }
    await refreshList();
  });
  setTimeout(() => input.focus(), 0);
  return form;
}

function table(documents) {
  const rows = documents.map((d) => h("tr", { dataset: { id: d.id } },
    h("th", { scope: "row", "data-label": "Name" }, h("span", { class: "doc-name" }, d.name),
      ...context(d)),
    h("td", { "data-label": "Status" }, statusBadge(d)),
    h("td", { "data-label": "Pages", class: "num" }, d.pages ?? "–"),
    h("td", { "data-label": "Passages", class: "num" }, d.chunks ?? "–"),
    h("td", { "data-label": "Size", class: "num" }, bytes(d.size_bytes)),
    h("td", { "data-label": "Space" }, whereCell(d)),
    h("td", { "data-label": "Added" }, when(d.created_at)),
    h("td", { class: "actions" }, h("div", {},
      h("a", { class: "btn btn-small", href: `/api/documents/${d.id}/file`, download: d.name,
               "aria-label": `Download ${d.name}` }, "Download"),
      mayChange(d) ? h("button", { type: "button", class: "btn btn-small btn-danger", "aria-label": `Delete ${d.name}`,
                                   onclick: () => remove(d) }, "Delete") : null))));
  return h("table", { class: "docs" },
    h("caption", { class: "visually-hidden" }, "Your documents"),
    h("thead", {}, h("tr", {}, ...["Name", "Status", "Pages", "Passages", "Size", "Space", "Added"].map(
      (t) => h("th", { scope: "col" }, t)), h("th", { scope: "col" }, h("span", { class: "visually-hidden" },
      "Actions")))),
    h("tbody", {}, rows));
}

function statusBadge(d) {
  const label = { ready: "Ready", processing: "Indexing", queued: "Queued", failed: "Failed" }[d.status] || d.status;
  return h("span", { class: `badge badge-${d.status}`, title: d.error || "" }, label,
           d.error ? h("span", { class: "visually-hidden" }, `: ${d.error}`) : null);
}

export function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

async function remove(d) {
  // where focus goes once the row is gone: the next row's delete button, else the previous one's, else the upload
  const row = document.querySelector(`table.docs tr[data-id="${d.id}"]`);
  const neighbour = (row?.nextElementSibling || row?.previousElementSibling)?.dataset.id;
  const ok = await confirmDialog({
    title: `Delete ${d.name}?`,
    text: "Its passages are removed from search, and answers that cited it lose those citations. "
      + "This cannot be undone.",
  });
  if (!ok) return;
  try {
    await api(`/api/documents/${d.id}`, { method: "DELETE" });
    banner(`${d.name} was deleted.`, "info");
  } catch (err) {
    banner(err.status === 404 ? `${d.name} was already deleted.` : `Could not delete ${d.name}: ${err.detail}`,
           "error");
  }
  await refreshList();
  const next = neighbour && document.querySelector(`table.docs tr[data-id="${neighbour}"] .btn-danger`);
  (next || document.getElementById("file-input") || document.querySelector("main h1"))?.focus();
}

function startUploads(files) {
  for (const file of files) {
    const u = makeCard(file);
    u.path = inSpace("/api/documents");  // the space chosen when it was dropped, even if switched meanwhile
    uploads.unshift(u);
    uploadsEl?.prepend(u.el);
    run(u);
  }
}

function makeCard(file) {
  const steps = STEPS.map(([key, label]) => h("li", { dataset: { step: key } }, h("span", { class: "dot" }), label));
  const bar = h("progress", { max: 100, value: 0, "aria-label": `Progress of ${file.name}` });
  const status = h("p", { class: "upload-status", role: "status" }, "Uploading…");
  const close = h("button", { type: "button", class: "btn btn-quiet btn-small", hidden: true,
                              "aria-label": `Dismiss ${file.name}` }, "Dismiss");
  const el = h("li", { class: "upload", dataset: { name: file.name } },
    h("div", { class: "upload-head" }, h("strong", {}, file.name), h("span", { class: "muted" }, bytes(file.size)), close),
    h("ol", { class: "stepper", "aria-label": `Steps for ${file.name}` }, steps), bar, status);
  const u = { file, el, steps, bar, status, state: "upload" };
  close.addEventListener("click", () => { el.remove(); uploads.splice(uploads.indexOf(u), 1); });
  u.close = close;
  return u;
}

function setStep(u, key, percent, text, state = "active") {
  const order = STEPS.map(([k]) => k);
  const at = order.indexOf(key === "storing" ? "embedding" : key);
  u.steps.forEach((li, i) => {
    li.className = i < at || (state === "done" && i <= at) ? "done" : i === at ? state : "";
    if (i === at && state !== "done") li.setAttribute("aria-current", "step"); else li.removeAttribute("aria-current");
  });
  if (percent != null) u.bar.value = percent;
  u.status.textContent = text;
  u.el.dataset.state = state === "done" && key === "done" ? "done" : state === "failed" ? "failed" : "working";
}

function fail(u, text) {
  const order = STEPS.map(([k]) => k);
  const current = u.steps.findIndex((li) => li.className === "active");
  setStep(u, order[Math.max(current, 0)], null, text, "failed");
  u.close.hidden = false;
}

export function refusal(err) {
  switch (err.status) {
    case 413: return `Too large: ${err.detail}. Split the PDF or compress it, then upload it again.`;
    case 403: return `Not allowed: ${err.detail}.`;
    case 415: return `Not a document Thotqen can read: ${err.detail}.`;
    case 422: return `This file cannot be used: ${err.detail}.`;
    case 429: return `Too many requests: ${err.detail}. Try again ${waitText(err.retryAfter)}.`;
    case 503: return `Storage is unavailable: ${err.detail}.`;
    case 0: return "The upload failed: the server could not be reached. Check your connection and try again.";
    default: return `The upload failed (${err.status}): ${err.detail}.`;
  }
}

// Bodies go up one at a time: the server receives only a few per user at once (UPLOADS_PER_USER) and
// answers more with 429, so a picked batch queues here instead of failing; processing still runs in parallel.
let sending = Promise.resolve();
const BUSY_RETRIES = 5;
const BUSY_WAIT_MAX_S = 30; // a longer Retry-After is the hourly limit: shown, not waited for

function send(u) {
  const turn = sending.then(() => sendWithRetries(u));
  sending = turn.catch(() => {});
  return turn;
}

async function sendWithRetries(u) {
  for (let attempt = 0; ; attempt++) {
    setStep(u, "upload", 0, "Uploading…");
    try {
      return await uploadFile(u.file, (f) => setStep(u, "upload", Math.round(f * 8),
                                                     `Uploading… ${Math.round(f * 100)}%`), u.path);
    } catch (err) {
      const wait = Math.max(err.retryAfter ?? 1, 1);
      if (err.status !== 429 || attempt >= BUSY_RETRIES || wait > BUSY_WAIT_MAX_S) throw err;
      setStep(u, "upload", 0, `Waiting: other uploads of yours are being received. Retrying ${waitText(wait)}.`);
      await new Promise((r) => setTimeout(r, wait * 1000));
    }
  }
}

async function run(u) {
  setStep(u, "upload", 0, "Waiting to upload…");
  let sub;
  try {
    sub = await send(u);
  } catch (err) {
    fail(u, refusal(err));
    return;
  }
  if (sub.reused) {
    setStep(u, "done", 100, "Already uploaded: this file is in your documents.", "done");
    u.close.hidden = false;
    refreshList();
    return;
  }
  follow(u, sub.job_id, 0);
}

function follow(u, jobId, attempt) {
  const source = new EventSource(`/api/jobs/${jobId}/events`);
  let finished = false;
  source.addEventListener("progress", (e) => {
    const { stage, percent } = JSON.parse(e.data);
    if (stage === "done") return;
    setStep(u, ["queued", "starting"].includes(stage) ? "parsing" : stage, percent,
            `${STAGE_TEXT[stage] || stage} ${Math.round(percent)}%`);
  });
  source.addEventListener("done", (e) => {
    finished = true;
    source.close();
    const d = JSON.parse(e.data);
    setStep(u, "done", 100, `Ready: ${plural(d.pages, "page")}, ${plural(d.chunks, "passage")}.`, "done");
    u.close.hidden = false;
    refreshList();
  });
  source.addEventListener("idle", () => {
    // no progress for a while (queued behind others): the server ended the stream; listen again
    finished = true;
    source.close();
    setTimeout(() => follow(u, jobId, 0), 1000);
  });
  source.addEventListener("failed", (e) => {
    finished = true;
    source.close();
    fail(u, `Failed: ${JSON.parse(e.data).error}.`);
    refreshList();
  });
  source.onerror = async () => {
    if (finished) return;
    source.close();
    // the access cookie may have expired mid-job: refresh and listen again; the job runs on regardless
    if (attempt < 3) {
      await refreshSession();
      setTimeout(() => follow(u, jobId, attempt + 1), 500 * (attempt + 1));
    } else {
      fail(u, "Lost contact with the server; the document keeps indexing. Reload the page to see its status.");
    }
  };
  u.source = source;
  refreshList();
}

// One message of a conversation: the answer as formatted text (web/js/markdown.js) whose [n]
// markers link to the cited page and preview their source, the sources merged by document and
// page, the evidence lines and the calculation an answer rests on, and the answer's actions:
// copy, thumbs up or down with a note, answer again.
import { api } from "./api.js";
import { banner, h } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import { openCitation, prefetchCitation } from "./viewer.js";

const MARK = /\[(\d+(?:\s*,\s*\d+)*)\]/g;
export const docs = { byId: new Map() };

// ---- source previews: one tooltip, shown on hover, focus or a first tap --------------------------

const tip = h("div", { class: "cite-tip", role: "tooltip", id: "cite-tip", hidden: true });
let tipFor = null;
document.body.append(tip);
document.addEventListener("keydown", (e) => { if (e.key === "Escape") hideTip(); });
document.addEventListener("pointerdown", (e) => { if (tipFor && !tipFor.contains(e.target) && !tip.contains(e.target)) hideTip(); });
window.addEventListener("scroll", () => hideTip(), { passive: true, capture: true });

export function evidenceOf(c) {
  const lines = (c.evidence || []).filter((e) => e && e.text)
    .map((e) => (e.context ? `${e.text} (${e.context})` : e.text));
  return lines.length ? lines : c.text ? [snippet(c.text)] : [];
}

function snippet(text) {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length > 220 ? `${t.slice(0, 217)}…` : t;
}

function whereOf(c) {
  const doc = c.document_id ? docs.byId.get(c.document_id) : null;
  if (c.document_id) return { name: doc ? doc.name : c.name || "a deleted document", page: c.page_label || `page ${c.page}`, doc };
  return { name: c.name || c.url || "a web page", page: "", doc: null };
}

function showTip(anchor, c) {
  const { name, page } = whereOf(c);
  const lines = evidenceOf(c);
  tip.replaceChildren(...[h("p", { class: "tip-where" }, h("strong", {}, name), page ? `, ${page}` : ""),
    lines.length ? h("ul", { class: "tip-evidence" }, lines.map((l) => h("li", {}, l))) : null,
    matchMedia("(hover: none)").matches && c.document_id && docs.byId.get(c.document_id)
      ? h("button", { type: "button", class: "btn btn-small", onclick: () => { hideTip(); openCitation(c, docs.byId.get(c.document_id)); } },
          "Open the page") : null].filter(Boolean));
  tip.hidden = false;
  tipFor = anchor;
  anchor.setAttribute("aria-describedby", "cite-tip");
  const r = anchor.getBoundingClientRect();
  const w = Math.min(340, window.innerWidth - 16);
  tip.style.width = `${w}px`;
  tip.style.left = `${Math.max(8, Math.min(r.left, window.innerWidth - w - 8))}px`;
  const below = r.bottom + 6;
  tip.style.top = `${below}px`;
  const height = tip.offsetHeight;
  if (below + height > window.innerHeight - 8 && r.top - height - 6 > 0) tip.style.top = `${r.top - height - 6}px`;
}

function hideTip() {
  if (!tipFor) return;
  tipFor.removeAttribute("aria-describedby");
  tip.hidden = true;
  tipFor = null;
}

function citationLink(c, label) {
  if (c.document_id) {
    const doc = docs.byId.get(c.document_id);
    if (!doc) {
      return h("span", { class: "cite cite-gone", title: "The cited document was deleted" }, label,
               h("span", { class: "visually-hidden" }, " (source deleted)"));
    }
    const href = `/api/documents/${c.document_id}/pages/${c.page}.png`;
    let touched = false;
    return h("a", { class: "cite", href, dataset: { n: c.n },
                    "aria-label": `Source ${c.n}: ${doc.name}, page ${c.page}`,
                    onpointerenter: (e) => { prefetchCitation(c, doc); if (e.pointerType !== "touch") showTip(e.currentTarget, c); },
                    onpointerleave: (e) => { if (e.pointerType !== "touch" && !e.currentTarget.matches(":focus")) hideTip(); },
                    onpointerdown: (e) => { touched = e.pointerType === "touch"; },
                    // a tap focuses the link too: the click that follows decides (preview first)
                    onfocus: (e) => { prefetchCitation(c, doc); if (!touched) showTip(e.currentTarget, c); },
                    onblur: () => { touched = false; setTimeout(() => { if (!tip.contains(document.activeElement)) hideTip(); }, 0); },
                    onclick: (e) => {
                      e.preventDefault();
                      // a first tap on a touch screen previews the source; the preview opens the page
                      if (touched && tipFor !== e.currentTarget) { showTip(e.currentTarget, c); return; }
                      hideTip();
                      openCitation(c, doc);
                    } }, label);
  }
  if (c.url) return h("a", { class: "cite", href: c.url, target: "_blank", rel: "noopener noreferrer" }, label);
  return h("span", { class: "cite" }, label);
}

// ---- the answer -----------------------------------------------------------------------------------

function withMarkers(byN) {
  return (str) => {
    const out = [];
    let last = 0;
    for (const m of str.matchAll(MARK)) {
      out.push(str.slice(last, m.index));
      const ns = m[1].split(",").map((x) => Number(x.trim()));
      ns.forEach((n, i) => {
        const c = byN.get(n);
        out.push(c ? citationLink(c, `[${n}]`) : `[${n}]`);
        if (i < ns.length - 1) out.push(" ");
      });
      last = m.index + m[0].length;
    }
    out.push(str.slice(last));
    return out.filter((x) => x !== "");
  };
}

export function answerBody(text, citations) {
  const byN = new Map(citations.map((c) => [c.n, c]));
  const body = h("div", { class: "answer-text" });
  body.append(renderMarkdown(text, withMarkers(byN)));
  return body;
}

// The sources the answer cites, one line per document and page (or web page): [1][3] name, page 4.
export function mergedSources(citations, cited) {
  const shown = cited && cited.length ? citations.filter((c) => cited.includes(c.n)) : citations;
  const groups = new Map();
  for (const c of shown) {
    const key = c.document_id ? `${c.document_id}:${c.page}` : c.url || `n${c.n}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(c);
  }
  return [...groups.values()];
}

function sourcesList(citations, cited) {
  const groups = mergedSources(citations, cited);
  if (!groups.length) return null;
  return h("div", { class: "sources" }, h("h3", {}, "Sources"), h("ul", {}, groups.map((group) => {
    const c = group[0];
    const { name, page, doc } = whereOf(c);
    return h("li", {}, h("span", { class: "source-ns" }, group.map((g) => `[${g.n}]`).join("")), " ",
             citationLink(c, page ? `${name}, ${page}` : name),
             c.ocr ? h("span", { class: "muted", title: "The page is an image; its text was recognised (OCR)" },
                       " — recognised text") : null,
             c.document_id && !doc ? h("span", { class: "muted" }, " — deleted") : null);
  })));
}

// What the answer rests on: the evidence lines of the sources it cites, and a calculation's working.
function groundsOf(citations, cited, verification) {
  const used = cited && cited.length ? citations.filter((c) => cited.includes(c.n)) : citations;
  const withEvidence = used.filter((c) => (c.evidence || []).some((e) => e && e.text));
  const calc = verification && verification.calculation;
  if (!withEvidence.length && !(calc && calc.working)) return null;
  return h("div", { class: "grounds" },
    withEvidence.length ? [h("h3", {}, "Evidence"), h("ul", { class: "evidence" }, withEvidence.map((c) =>
      h("li", {}, citationLink(c, `[${c.n}]`), " ", evidenceOf(c).join(" · "))))] : null,
    calc && calc.working ? [h("h3", {}, "Calculation"),
      h("p", { class: "working" }, withMarkers(new Map(citations.map((c) => [c.n, c])))(String(calc.working)))] : null);
}

export function copyText(text, citations, cited) {
  const lines = mergedSources(citations, cited).map((group) => {
    const { name, page } = whereOf(group[0]);
    return `${group.map((g) => `[${g.n}]`).join("")} ${page ? `${name}, ${page}` : name}`;
  });
  return lines.length ? `${text}\n\nSources:\n${lines.join("\n")}\n` : `${text}\n`;
}

async function copy(text, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const area = h("textarea", { class: "visually-hidden", "aria-hidden": "true" }, text);
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  button.textContent = "Copied";
  setTimeout(() => { button.textContent = "Copy"; }, 2000);
}

// ---- verdicts ---------------------------------------------------------------------------------------

function feedbackControls(chatId, m) {
  let current = m.feedback || null;
  const up = h("button", { type: "button", class: "btn btn-small btn-icon", "aria-label": "Good answer" }, "Good");
  const down = h("button", { type: "button", class: "btn btn-small btn-icon", "aria-label": "Bad answer" }, "Bad");
  const note = h("textarea", { rows: 2, maxLength: 2000, id: `note-${m.id}`,
                               placeholder: "What was right or wrong? (optional)" });
  const said = h("p", { class: "muted small feedback-said", role: "status" });
  const form = h("form", { class: "feedback-form", hidden: true },
    h("label", { for: note.id }, "A note on this answer"), note,
    h("div", { class: "row-end" },
      h("button", { type: "button", class: "btn btn-small", onclick: () => { form.hidden = true; } }, "Close"),
      h("button", { type: "submit", class: "btn btn-small btn-primary" }, "Save the note")));
  const show = () => {
    up.setAttribute("aria-pressed", String(current?.rating === "up"));
    down.setAttribute("aria-pressed", String(current?.rating === "down"));
    said.textContent = current ? `You rated this answer ${current.rating === "up" ? "good" : "bad"}${current.note ? `: “${current.note}”` : "."}` : "";
  };
  const url = `/api/chats/${chatId}/messages/${m.id}/feedback`;
  const put = async (rating, text) => {
    current = await api(url, { method: "PUT", json: { rating, note: text } });
    show();
  };
  const toggle = async (rating) => {
    try {
      if (current?.rating === rating) {
        await api(url, { method: "DELETE" });
        current = null;
        form.hidden = true;
        show();
        return;
      }
      await put(rating, current?.note || "");
      form.hidden = false; // a note is welcome, never required
      if (rating === "down") note.focus();
    } catch (err) {
      banner(`The verdict was not saved: ${err.detail}`, "error");
    }
  };
  up.addEventListener("click", () => toggle("up"));
  down.addEventListener("click", () => toggle("down"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      await put(current?.rating || "down", note.value.trim());
      form.hidden = true;
      (current.rating === "up" ? up : down).focus();
    } catch (err) {
      banner(`The note was not saved: ${err.detail}`, "error");
    }
  });
  note.value = current?.note || "";
  show();
  return [up, down, said, form];
}

// ---- a message ----------------------------------------------------------------------------------------

// `actions`: {chatId, latest (may answer again), regenerate(m), readOnly (a chat shared with the reader:
// no verdicts)} for a saved answer; none while streaming.
export function renderMessage(m, actions = null) {
  if (m.role === "user") return h("li", { class: "msg msg-user", dataset: { id: m.id ?? "" } }, h("p", {}, m.content));
  const meta = m.meta || {};
  const citations = m.citations || [];
  if (m.status === "blocked") {
    return h("li", { class: "msg msg-blocked" }, h("p", { class: "msg-label" }, "Question blocked"),
      h("p", {}, m.content), meta.block_reason ? h("p", { class: "muted" }, `Reason: ${meta.block_reason}`) : null);
  }
  if (m.status === "error") {
    return h("li", { class: "msg msg-error" }, h("p", { class: "msg-label" }, "No answer"),
      h("p", {}, m.content || "The answer could not be produced."),
      h("p", { class: "muted" }, "Ask again in a moment; if it keeps failing, the model provider may be down."),
      actions?.latest ? h("div", { class: "msg-actions" }, regenerateButton(m, actions)) : null);
  }
  const stopped = m.status === "stopped";
  const unanswered = !stopped && !citations.length && !(meta.cited || []).length;
  const verification = meta.verification || null;
  const li = h("li", { class: `msg msg-assistant${unanswered ? " msg-nodata" : ""}${stopped ? " msg-stopped" : ""}`,
                       dataset: { id: m.id ?? "" } },
    meta.superseded ? h("p", { class: "msg-label muted msg-superseded-label" }, "Earlier answer") : null,
    unanswered ? h("p", { class: "msg-label" }, "Not in your documents") : null,
    m.content ? answerBody(m.content, citations) : null,
    stopped ? h("p", { class: "msg-label muted" }, "Stopped") : null,
    stopped && !m.content ? h("p", { class: "muted small" },
      "Stopped before the answer was checked against your documents, so none of it is shown.") : null,
    groundsOf(citations, meta.cited, verification),
    sourcesList(citations, meta.cited),
    meta.cached ? h("p", { class: "muted small" }, "Answered from a recent identical question.") : null);
  if (actions && m.id) {
    const copyButton = h("button", { type: "button", class: "btn btn-small" }, "Copy");
    copyButton.addEventListener("click", () => copy(copyText(m.content, citations, meta.cited), copyButton));
    li.append(h("div", { class: "msg-actions", role: "group", "aria-label": "This answer" }, copyButton,
      m.status === "ok" && !actions.readOnly ? feedbackControls(actions.chatId, m) : null,
      actions.latest ? regenerateButton(m, actions) : null));
  }
  return li;
}

function regenerateButton(m, actions) {
  return h("button", { type: "button", class: "btn btn-small regen", onclick: () => actions.regenerate(m) }, "Answer again");
}

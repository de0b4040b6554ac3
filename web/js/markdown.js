// Answers as formatted text: marked's lexer (web/vendor/marked, MIT) reads the markdown into
// tokens and this module builds DOM elements from them with text nodes. No HTML string is ever
// parsed: markup in an answer (the model may echo a document's) shows as text, links keep only
// http(s) and mailto addresses, and images are not loaded (their markdown shows as text).
import { lexer } from "../vendor/marked/marked.esm.js";
import { h } from "./dom.js";

const SAFE_LINK = /^(https?:|mailto:)/i;

// `text(str)` turns a plain-text run into nodes (the chat turns [n] markers into citation links).
export function renderMarkdown(source, text = (str) => [str]) {
  const frag = document.createDocumentFragment();
  let tokens;
  try {
    tokens = lexer(source, { gfm: true, breaks: false });
  } catch {
    frag.append(...text(source)); // the lexer never should, but an answer always shows
    return frag;
  }
  for (const t of tokens) frag.append(...block(t, text));
  return frag;
}

function blocks(tokens, text) {
  return (tokens || []).flatMap((t) => block(t, text));
}

function block(t, text) {
  switch (t.type) {
    case "space": case "def": return [];
    case "paragraph": return [h("p", {}, inline(t.tokens, text))];
    case "heading": return [h(`h${Math.min(6, Math.max(4, t.depth + 3))}`, { class: "md-heading" }, inline(t.tokens, text))];
    case "code": return [h("pre", {}, h("code", {}, t.text))];
    case "blockquote": return [h("blockquote", {}, blocks(t.tokens, text))];
    case "hr": return [h("hr")];
    case "list": {
      const start = t.ordered && t.start !== "" && t.start !== 1 ? t.start : null;
      return [h(t.ordered ? "ol" : "ul", { start }, t.items.map((item) => h("li", {},
        item.task ? h("input", { type: "checkbox", checked: item.checked, disabled: true, "aria-label": "done" }) : null,
        item.loose ? blocks(item.tokens, text) : item.tokens.flatMap((x) => (x.type === "text"
          ? inline(x.tokens || [x], text) : block(x, text))))))];
    }
    case "table": {
      const cell = (c, tag) => h(tag, { class: c.align ? `align-${c.align}` : null,
                                        scope: tag === "th" ? "col" : null }, inline(c.tokens, text));
      return [h("div", { class: "table-wrap" }, h("table", { class: "md-table" },
        h("thead", {}, h("tr", {}, t.header.map((c) => cell(c, "th")))),
        h("tbody", {}, t.rows.map((row) => h("tr", {}, row.map((c) => cell(c, "td")))))))];
    }
    case "text": return [h("p", {}, t.tokens ? inline(t.tokens, text) : text(t.text))];
    default: return [h("p", {}, text(t.raw ?? t.text ?? ""))]; // html and anything unknown: as text
  }
}

// Neighbouring runs of plain text are joined before `text` sees them, so a marker the lexer split
// ("[1" and "]") is still one marker.
function inline(tokens, text) {
  const out = [];
  let run = "";
  const flush = () => { if (run) out.push(...text(run)); run = ""; };
  for (const t of tokens || []) {
    if (t.type === "text" && !t.tokens) { run += t.text; continue; }
    if (t.type === "escape") { run += t.text; continue; }
    flush();
    out.push(...inlineNode(t, text));
  }
  flush();
  return out;
}

function inlineNode(t, text) {
  switch (t.type) {
    case "text": return inline(t.tokens, text);
    case "strong": return [h("strong", {}, inline(t.tokens, text))];
    case "em": return [h("em", {}, inline(t.tokens, text))];
    case "del": return [h("del", {}, inline(t.tokens, text))];
    case "codespan": return [h("code", {}, t.text)];
    case "br": return [h("br")];
    case "link":
      if (!SAFE_LINK.test(t.href.trim())) return text(t.raw);
      return [h("a", { href: t.href, target: "_blank", rel: "noopener noreferrer nofollow" }, inline(t.tokens, text))];
    default: return text(t.raw ?? t.text ?? ""); // html, images and anything unknown: as text
  }
}

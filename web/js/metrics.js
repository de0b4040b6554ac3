// Admin metrics (/api/admin/metrics) as charts: questions and outcomes, latency percentiles, tokens,
// answers per provider, sources and cache hits, and each workspace's figures. Plain SVG: no chart library to vendor.
import { api } from "./api.js";
import { bytes, h, s, when } from "./dom.js";

const WINDOWS = [[1, "Last hour"], [24, "Last 24 hours"], [24 * 7, "Last 7 days"], [24 * 30, "Last 30 days"]];

export async function renderMetrics(main) {
  const select = h("select", { id: "window" }, WINDOWS.map(([hrs, label]) => h("option", { value: hrs }, label)));
  select.value = "24";
  const body = h("div", { class: "metrics", "aria-live": "polite" });
  main.append(h("section", { class: "page" },
    h("div", { class: "page-head" }, h("h1", {}, "Metrics"),
      h("div", { class: "field-inline" }, h("label", { for: "window" }, "Window"), select)),
    body));
  const load = async () => {
    body.setAttribute("aria-busy", "true");
    const data = await api(`/api/admin/metrics?hours=${select.value}`);
    const wide = body.clientWidth >= 700;  // two charts a row (see .charts in app.css)
    chartWidth = Math.max(260, Math.floor(wide ? (body.clientWidth - 12) / 2 : body.clientWidth) - 34);
    body.replaceChildren(...view(data));
    body.removeAttribute("aria-busy");
  };
  select.addEventListener("change", load);
  await load();
}

function tile(label, value, note) {
  return h("div", { class: "tile" }, h("span", { class: "tile-label" }, label),
           h("span", { class: "tile-value" }, value), note ? h("span", { class: "tile-note" }, note) : null);
}

function pct(x) {
  return x == null ? "–" : `${(x * 100).toFixed(1)}%`;
}

function ms(x) {
  return x == null ? "–" : x >= 1000 ? `${(x / 1000).toFixed(1)} s` : `${Math.round(x)} ms`;
}

// A horizontal bar chart: rows of [label, value, formatted].
let chartWidth = 520; // drawn at the width it is shown at, so its text stays the page's size

function bars(title, rows, color = "var(--accent)") {
  const max = Math.max(1, ...rows.map((r) => r[1] || 0));
  const rowH = 30;
  const labelW = Math.min(120, Math.round(chartWidth * 0.3));
  const width = chartWidth;
  const svg = s("svg", { viewBox: `0 0 ${width} ${rows.length * rowH + 6}`, role: "img",
                         "aria-label": `${title}: ${rows.map((r) => `${r[0]} ${r[2]}`).join(", ") || "no data"}` });
  rows.forEach(([label, value, shown], i) => {
    const y = i * rowH + 4;
    const w = Math.max(value ? 2 : 0, ((value || 0) / max) * (width - labelW - 70));
    svg.append(
      s("text", { x: labelW - 8, y: y + 17, "text-anchor": "end", class: "chart-label" }, label),
      s("rect", { x: labelW, y: y + 3, width: w, height: rowH - 10, rx: 3, fill: color }),
      s("text", { x: labelW + w + 6, y: y + 17, class: "chart-value" }, shown));
  });
  return h("figure", { class: "chart" }, h("figcaption", {}, title),
           rows.length ? svg : h("p", { class: "muted" }, "No data in this window."));
}

function view(m) {
  const q = m.query_log;
  const out = [
    h("div", { class: "tiles" },
      tile("Questions", q.questions, `${q.users} user${q.users === 1 ? "" : "s"}`),
      tile("Success rate", pct(q.success_rate), `${q.ok} answered`),
      tile("Median latency", ms(q.latency_ms.p50), `p95 ${ms(q.latency_ms.p95)}`),
      tile("Tokens", q.tokens.total.toLocaleString(), `${q.tokens.input.toLocaleString()} in · ${q.tokens.output.toLocaleString()} out`),
      tile("Cache hits", q.cache_hits, q.questions ? pct(q.cache_hits / q.questions) : "")),
    h("div", { class: "charts" },
      bars("Outcomes", [["answered", q.ok, String(q.ok)], ["blocked", q.blocked, String(q.blocked)],
                        ["errors", q.errors, String(q.errors)], ["in flight", q.in_flight, String(q.in_flight)]]),
      bars("Latency percentiles", ["p50", "p90", "p95", "p99"].map((k) => [k, q.latency_ms[k] || 0, ms(q.latency_ms[k])]),
           "var(--accent-2)"),
      bars("Tokens", [["input", q.tokens.input, q.tokens.input.toLocaleString()],
                      ["output", q.tokens.output, q.tokens.output.toLocaleString()]], "var(--accent-3)"),
      bars("Answers per provider", Object.entries(q.answers_by_provider).map(([k, v]) => [k, v, String(v)])),
      bars("Questions per surface", Object.entries(q.by_source).map(([k, v]) => [k, v, String(v)]), "var(--accent-2)")),
  ];
  const f = m.feedback;
  if (f) {
    out.push(h("h2", {}, "What users said of the answers"),
      h("div", { class: "tiles" }, tile("Good answers", f.up, "thumbs up"), tile("Bad answers", f.down, "thumbs down"),
        tile("Approval", f.up + f.down ? pct(f.up / (f.up + f.down)) : "–", `${f.up + f.down} verdicts`)),
      f.notes.length ? h("ul", { class: "feedback-notes" }, f.notes.map((n) => h("li", {},
        h("strong", {}, n.rating === "up" ? "Good: " : "Bad: "), n.note, h("span", { class: "muted small" }, ` · ${when(n.at)}`))))
        : h("p", { class: "muted" }, "No notes in this window. Export every verdict with `thotqen feedback export`."));
  }
  if (m.workspaces) out.push(...workspaceTable(m.workspaces));
  if (m.langsmith) {
    const l = m.langsmith;
    out.push(h("h2", {}, "LangSmith"), l.error ? h("p", { class: "warn-box" }, l.error)
      : h("div", { class: "tiles" }, tile("Runs", l.runs, l.project), tile("Errors", l.errors),
                                   tile("p50", ms(l.latency_ms.p50)), tile("Tokens", l.tokens)));
  }
  return out;
}

// Each workspace's members by role, documents, bytes and questions in the window, the busiest first.
function workspaceTable(w) {
  const shown = w.workspaces.length < w.total ? ` (the busiest ${w.workspaces.length} of ${w.total})` : "";
  if (!w.total) return [h("h2", {}, "Workspaces"), h("p", { class: "muted" }, "No workspace on this server yet.")];
  const roles = (r) => ["owner", "admin", "editor", "viewer"].filter((k) => r[k]).map((k) => `${r[k]} ${k}`).join(", ");
  return [h("h2", { id: "workspaces-title" }, `Workspaces${shown}`),
    h("div", { class: "table-wrap" }, h("table", { class: "keys members-table workspace-figures",
                                                   "aria-labelledby": "workspaces-title" },
      h("thead", {}, h("tr", {}, ["Workspace", "Members", "Documents", "Stored", "Questions"].map((t) =>
        h("th", { scope: "col" }, t)))),
      h("tbody", {}, w.workspaces.map((x) => h("tr", { dataset: { workspace: String(x.id) } },
        h("th", { scope: "row" }, x.name),
        h("td", { "data-label": "Members" }, `${x.members} (${roles(x.roles)})`),
        h("td", { "data-label": "Documents" }, String(x.documents)),
        h("td", { "data-label": "Stored" }, bytes(x.bytes)),
        h("td", { "data-label": "Questions" }, String(x.questions)))))))];
}

// The cited page: the PDF page rendered by the server as an image, the cited passage highlighted,
// with the page's neighbours one click away and the original file to download.
import { request } from "./api.js";

const dialog = document.getElementById("viewer");
const img = document.getElementById("viewer-img");
const title = document.getElementById("viewer-title");
const where = document.getElementById("viewer-where");
const status = document.getElementById("viewer-status");
const download = document.getElementById("viewer-download");
const quote = document.getElementById("viewer-quote");
const quoteBox = document.getElementById("viewer-quote-box");
const prev = document.getElementById("viewer-prev");
const next = document.getElementById("viewer-next");
const zoom = document.getElementById("viewer-zoom");
const frame = document.getElementById("viewer-page");

let current = null; // { citation, doc, page }
let objectUrl = null;
let loadToken = 0;
let box = null; // the highlight: [top, left, bottom, right] as fractions of the page

function setZoom(on) {
  frame.classList.toggle("zoomed", on);
  zoom.setAttribute("aria-pressed", String(on));
  zoom.textContent = on ? "Fit the page" : "Zoom in";
  showHighlight();
}

// Scroll the page so the highlighted passage is in view (the page is taller than the dialog).
function showHighlight() {
  if (!box || img.hidden) return;
  const [top, left] = box;
  frame.scrollTop = Math.max(0, top * img.clientHeight - 40);
  frame.scrollLeft = Math.max(0, left * img.clientWidth - 20);
}

zoom.addEventListener("click", () => setZoom(!frame.classList.contains("zoomed")));

dialog.querySelector("[data-close]").addEventListener("click", () => dialog.close());
dialog.addEventListener("click", (e) => { if (e.target === dialog) dialog.close(); }); // backdrop
prev.addEventListener("click", () => show(current.page - 1));
next.addEventListener("click", () => show(current.page + 1));
dialog.addEventListener("keydown", (e) => {
  if (e.key === "ArrowLeft" && !prev.disabled) show(current.page - 1);
  if (e.key === "ArrowRight" && !next.disabled) show(current.page + 1);
});

// One of a few widths, so the browser's and the server's caches are shared between clicks.
function imageWidth() {
  const want = Math.min(window.innerWidth, 900) * (window.devicePixelRatio || 1);
  return want <= 700 ? 600 : want <= 1100 ? 1000 : 1400;
}

// Page images fetched or being fetched, by URL: a click while a prefetch is under way waits for
// the same request instead of asking the server to render the page a second time.
const images = new Map();

function imageUrl(doc, page, text) {
  const params = new URLSearchParams({ width: String(imageWidth()) });
  if (text) params.set("highlight", text);
  return `/api/documents/${doc.id}/pages/${page}.png?${params}`;
}

function load(url) {
  if (!images.has(url)) {
    const pending = request(url).then(async (res) => ({
      blob: await res.blob(),
      lines: Number(res.headers.get("X-Highlighted-Lines") || 0),
      where: res.headers.get("X-Highlight-Box"),
    }));
    pending.catch(() => images.delete(url)); // a failure is not remembered
    images.set(url, pending);
    while (images.size > 24) images.delete(images.keys().next().value);
  }
  return images.get(url);
}

// What to highlight on the cited page: the evidence lines the answer rests on when the citation
// names them (the exact row or sentence), else the whole passage it quotes. The server finds the
// words on the page (api/routes/pages.py), so each line is marked where it stands.
function highlightOf(citation) {
  const lines = (citation.evidence || []).map((e) => e && e.text).filter(Boolean);
  return lines.length ? lines.join("\n") : citation.text || "";
}

// Render the cited page ahead of the click (an answer just written, a pointer over a marker), so
// the click finds it ready: rendering a page is most of a first click's wait (evals/results/page_latency.md).
// Prefetches run one at a time, so they hold at most one of the user's page renders at once
// (PAGE_RENDERS_PER_USER) and a click always finds one free instead of a 429.
const PREFETCHES_WAITING_AT_MOST = 4; // an answer's cited pages and a few markers pointed at; more are dropped
let prefetching = Promise.resolve();
let prefetchesWaiting = 0;

export function prefetchCitation(citation, doc) {
  if (window.__thotqen.noPrefetch) return; // evals/page_latency.py measures the click without it too
  if (!doc || !citation.page || prefetchesWaiting >= PREFETCHES_WAITING_AT_MOST) return;
  const url = imageUrl(doc, citation.page, highlightOf(citation));
  if (images.has(url)) return;
  prefetchesWaiting += 1;
  prefetching = prefetching.then(() => load(url)).catch(() => {}).finally(() => { prefetchesWaiting -= 1; });
}

export function openCitation(citation, doc) {
  current = { citation, doc, page: citation.page };
  title.textContent = `${doc.name}`;
  download.href = `/api/documents/${doc.id}/file`;
  download.setAttribute("download", doc.name);
  quote.textContent = citation.text || "";
  quoteBox.hidden = !citation.text;
  if (!dialog.open) dialog.showModal();
  setZoom(window.innerWidth < 720); // a phone starts zoomed in: the page's text is readable at once
  show(citation.page, performance.now());
}

async function show(page, clickedAt = performance.now()) {
  const { citation, doc } = current;
  const pages = doc.pages || page;
  if (page < 1 || page > pages) return;
  current.page = page;
  const cited = page === citation.page;
  where.textContent = `Page ${page} of ${pages}${cited ? " (cited)" : ""}`;
  prev.disabled = page <= 1;
  next.disabled = page >= pages;
  status.textContent = "Loading the page…";
  status.className = "viewer-status";
  const token = ++loadToken;
  try {
    const { blob, lines, where } = await load(imageUrl(doc, page, cited ? highlightOf(citation) : ""));
    if (token !== loadToken) return;
    if (objectUrl) URL.revokeObjectURL(objectUrl);
    objectUrl = URL.createObjectURL(blob);
    img.onload = () => {
      if (token !== loadToken) return;
      if (cited) window.__thotqen.pageImages.push(performance.now() - clickedAt);
      img.hidden = false;
      box = cited && where ? where.split(",").map(Number) : null;
      showHighlight();
      const evidence = (citation.evidence || []).some((e) => e && e.text);
      status.textContent = !cited ? "" : lines ? (evidence ? "The evidence is highlighted." : "The cited passage is highlighted.")
        : "The cited passage could not be located on the page image; it is quoted below.";
      dialog.dataset.loaded = `${doc.id}:${page}`;
    };
    img.alt = `Page ${page} of ${doc.name}${cited && lines ? ", with the cited passage highlighted" : ""}`;
    img.src = objectUrl;
  } catch (err) {
    if (token !== loadToken) return;
    img.hidden = true;
    status.className = "viewer-status error-box";
    quoteBox.open = true; // the passage as text is then the way to read the source
    status.textContent = err.status === 404 ? `The page cannot be shown: ${err.detail}.`
      : `The page could not be shown: ${err.detail}`;
  }
}

dialog.addEventListener("close", () => {
  loadToken++;
  img.hidden = true;
  img.removeAttribute("src");
  delete dialog.dataset.loaded;
  if (objectUrl) { URL.revokeObjectURL(objectUrl); objectUrl = null; }
});

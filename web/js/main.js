// The app shell: who is signed in, the hash routes, the header. Views live in their own modules.
import { api, csrfToken, request, scheduleRefresh, stopRefresh, refreshSession } from "./api.js";
import { banner, focusMain } from "./dom.js";
import { renderSignIn } from "./auth.js";
import { renderDocuments } from "./documents.js";
import { renderChats } from "./chats.js";
import { renderCollections } from "./collections.js";
import { renderMetrics } from "./metrics.js";
import { renderSettings } from "./settings.js";
import { forget, loadSpaces, onSwitch } from "./space.js";
import { renderJoin, renderWorkspaces } from "./workspaces.js";

// First-token and page-image timings, read by the browser tests and evals/page_latency.py.
window.__thotqen = { tokenDelays: [], pageImages: [] };

export const session = { user: null };
const main = document.getElementById("main");
let lastView = null;

function route() {
  const [path, query = ""] = (location.hash.replace(/^#/, "") || "/").split("?");
  const parts = path.split("/").filter(Boolean);
  return { name: parts[0] || "", id: parts[1] ? decodeURIComponent(parts[1]) : null,
           params: new URLSearchParams(query) };
}

export function go(hash) {
  if (location.hash === hash) render(); else location.hash = hash;
}

function showHeader() {
  const signedIn = Boolean(session.user);
  document.getElementById("nav").hidden = !signedIn;
  document.getElementById("account").hidden = !signedIn;
  if (!signedIn) document.getElementById("space").hidden = true;
  document.getElementById("nav-metrics").hidden = !(session.user && session.user.admin);
  document.getElementById("who").textContent = signedIn ? session.user.username : "";
  const current = route().name;
  for (const link of document.querySelectorAll("[data-nav]")) {
    if (link.dataset.nav === current) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

export function signedIn(body) {
  session.user = body.user;
  scheduleRefresh(body.expires_in);
  banner("");
}

// A page asked for before signing in that should open after it (an invitation link), once.
const AFTER = "thotqen.after";
export function afterSignIn() {
  const hash = sessionStorage.getItem(AFTER);
  sessionStorage.removeItem(AFTER);
  return hash && hash.startsWith("#/join/") ? hash : "#/chats";
}

async function render() {
  const r = route();
  if (!session.user && !["signin", "signup"].includes(r.name)) {
    if (r.name === "join") {
      sessionStorage.setItem(AFTER, location.hash);
      banner("Sign in or create an account to join the workspace.", "info", true);
    }
    location.hash = "#/signin";
    return;
  }
  if (session.user && ["signin", "signup", ""].includes(r.name)) {
    location.hash = "#/chats";
    return;
  }
  showHeader();
  const view = `${r.name}/${r.id || ""}`;
  const moved = lastView !== null && view !== lastView; // not on load: the skip link comes first
  lastView = view;
  // Each render draws into a box of its own: a slower render of a page already left (its requests
  // still out) draws into a box no longer shown, never over the page now open. `display: contents`
  // (.view in app.css): the box adds nothing to the layout.
  const box = Object.assign(document.createElement("div"), { className: "view" });
  main.replaceChildren(box);
  try {
    if (session.user) {  // asked at each view: a membership ended elsewhere shows at once
      const { lost } = await loadSpaces();
      if (lost) banner("You are no longer a member of that workspace: showing all your spaces.", "warn");
    }
    if (r.name === "signin" || r.name === "signup") await renderSignIn(box, r.name, r.params);
    else if (r.name === "documents") await renderDocuments(box, r.params);
    else if (r.name === "collections") await renderCollections(box);
    else if (r.name === "chats") await renderChats(box, r.id, r.params);
    else if (r.name === "metrics" && session.user.admin) await renderMetrics(box);
    else if (r.name === "settings") await renderSettings(box);
    else if (r.name === "workspaces") await renderWorkspaces(box, r.id, r.params);
    else if (r.name === "join" && r.id) await renderJoin(box, r.id);
    else notFound(box);
  } catch (err) {
    if (err.status === 401) return; // session-ended handles it
    const p = document.createElement("p");
    p.className = "error-box";
    p.setAttribute("role", "alert");
    p.textContent = `This page could not be loaded: ${err.message}. Reload the page to try again.`;
    box.append(p);
  }
  if (moved) focusMain();
}

function notFound(box) {
  const h1 = Object.assign(document.createElement("h1"), { textContent: "Page not found" });
  const p = document.createElement("p");
  const home = Object.assign(document.createElement("a"), { href: "#/chats", textContent: "Go to your chats" });
  p.append("There is nothing at this address. ", home);
  box.append(h1, p);
}

window.addEventListener("hashchange", render);
onSwitch(() => render());

// the Developers menu closes on a choice, on Escape and on a click elsewhere
const devMenu = document.getElementById("dev-menu");
devMenu.addEventListener("click", (e) => { if (e.target.closest("a")) devMenu.open = false; });
devMenu.addEventListener("keydown", (e) => {
  if (e.key === "Escape" && devMenu.open) { devMenu.open = false; devMenu.querySelector("summary").focus(); }
});
document.addEventListener("click", (e) => { if (!devMenu.contains(e.target)) devMenu.open = false; });

window.addEventListener("session-ended", () => {
  if (!session.user) return;
  session.user = null;
  forget();
  stopRefresh();
  banner("Your session has ended. Sign in again to continue.", "warn", true);
  location.hash = "#/signin";
  render();
});

document.getElementById("sign-out").addEventListener("click", async () => {
  try {
    await request("/api/session", { method: "DELETE" });
  } catch { /* the cookies are cleared either way */ }
  session.user = null;
  forget();
  stopRefresh();
  banner("You are signed out.", "info");
  location.hash = "#/signin";
});

async function start() {
  if (!csrfToken()) { render(); return; } // no session cookie: nothing to ask the server
  try {
    session.user = (await api("/api/session", { retry: false })).user;
    scheduleRefresh(60); // refresh soon: the cookie's access token may be near its end
  } catch {
    if (await refreshSession()) {
      try { session.user = (await api("/api/session", { retry: false })).user; } catch { session.user = null; }
    }
  }
  render();
}

start();

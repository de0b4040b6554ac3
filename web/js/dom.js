// Small DOM helpers: elements are built with properties and text nodes, never from HTML strings, so
// nothing a document or a model wrote can run as markup.

export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on")) el.addEventListener(key.slice(2).toLowerCase(), value);
    else if (key in el && !key.includes("-") && key !== "list") el[key] = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

const SVG = "http://www.w3.org/2000/svg";
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, value);
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function bytes(n) {
  if (n == null) return "";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(0)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export function when(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  const today = new Date();
  const sameDay = d.toDateString() === today.toDateString();
  return sameDay ? d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
    : d.toLocaleDateString([], { day: "numeric", month: "short", year: "numeric" });
}

export function waitText(seconds) {
  if (!seconds) return "later";
  if (seconds < 90) return `in ${Math.ceil(seconds)} seconds`;
  return `in ${Math.ceil(seconds / 60)} minutes`;
}

// A yes/no question in the page's <dialog>; resolves true on "ok".
export function confirmDialog({ title, text, ok = "Delete" }) {
  const dialog = document.getElementById("confirm");
  dialog.querySelector("#confirm-title").textContent = title;
  dialog.querySelector("#confirm-text").textContent = text;
  dialog.querySelector("#confirm-ok").textContent = ok;
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
  });
}

// A short message in the banner under the header (announced to screen readers).
let bannerTimer = null;
export function banner(text, kind = "info", stay = false) {
  const el = document.getElementById("banner");
  el.textContent = text;
  el.className = `banner banner-${kind}`;
  el.hidden = !text;
  clearTimeout(bannerTimer);
  if (text && !stay) bannerTimer = setTimeout(() => { el.hidden = true; }, 6000);
}

export function focusMain() {
  const main = document.getElementById("main");
  const active = document.activeElement;
  if (active && main.contains(active) && active.matches("input, textarea, select")) return; // the view chose

  const heading = main.querySelector("h1");
  (heading || main).setAttribute("tabindex", "-1");
  (heading || main).focus({ preventScroll: false });
}

// The space the app works in: all the person may read (their personal space and every workspace they
// are in; uploads go to the personal space), or one workspace (GET /api/workspaces). Documents,
// collections, the sidebar's search and new chats follow it through the API's `workspace_id`. The
// choice is remembered in this browser; a workspace the person has left, or been removed from,
// falls back to all spaces.
import { api } from "./api.js";

const KEY = "thotqen.workspace";
const ROLES = ["viewer", "editor", "admin", "owner"];

export const space = { id: null, name: "", role: null, workspaces: [] };

export function rank(role) {
  return ROLES.indexOf(role);
}

// Their workspaces, asked again (a role may have changed, a membership ended); the choice checked.
export async function loadSpaces() {
  const { workspaces } = await api("/api/workspaces");
  space.workspaces = workspaces;
  const wanted = Number(localStorage.getItem(KEY)) || null;
  const found = workspaces.find((w) => w.id === wanted);
  const lost = wanted !== null && !found;
  choose(found || null);
  return { lost };
}

export function choose(workspace) {
  space.id = workspace ? workspace.id : null;
  space.name = workspace ? workspace.name : "";
  space.role = workspace ? workspace.role : null;
  if (workspace) localStorage.setItem(KEY, String(workspace.id)); else localStorage.removeItem(KEY);
  renderSwitcher();
}

export function forget() {
  Object.assign(space, { id: null, name: "", role: null, workspaces: [] });
  renderSwitcher();
}

// `path` with the chosen workspace as its `workspace_id` (unchanged for all spaces).
export function inSpace(path) {
  if (space.id === null) return path;
  return `${path}${path.includes("?") ? "&" : "?"}workspace_id=${space.id}`;
}

// May the person upload and change documents and collections where they work now?
export function canWrite() {
  return space.id === null || rank(space.role) >= rank("editor");
}

// The role the person has where a document or collection is (`workspace_id` null: their own).
export function roleOver(workspaceId) {
  if (workspaceId === null || workspaceId === undefined) return "owner";
  return space.workspaces.find((w) => w.id === workspaceId)?.role || "viewer";
}

export function spaceLabel() {
  return space.id === null ? "all your spaces" : `the workspace “${space.name}”`;
}

// The header's switcher: a labelled select; changing it re-renders the view (main.js listens).
// Shown once the person is in a workspace.
function renderSwitcher() {
  const select = document.getElementById("space-switch");
  if (!select) return;
  const options = [new Option("All my spaces", "")];
  for (const w of space.workspaces) options.push(new Option(`${w.name} (${w.role})`, String(w.id)));
  select.replaceChildren(...options);
  select.value = space.id === null ? "" : String(space.id);
  // nothing to switch between without a workspace: the header stays as it was
  document.getElementById("space").hidden = !space.workspaces.length;
}

export function onSwitch(callback) {
  document.getElementById("space-switch").addEventListener("change", (e) => {
    const id = Number(e.target.value) || null;
    choose(space.workspaces.find((w) => w.id === id) || null);
    callback();
  });
}

// Teams: the person's workspaces (make one), and one workspace's page: its members and their roles
// (add by username or a one-time invitation link, change a role, remove, leave), deleting it
// (owners), and its audit log (admins and owners); and the page an invitation link opens. Who may do what is the server's (storage/workspaces.py); the page offers only what
// the person's role allows, and shows the server's reason when it refuses.
import { api } from "./api.js";
import { banner, bytes, confirmDialog, h, when } from "./dom.js";
import { go, session } from "./main.js";
import { article } from "./documents.js";
import { choose, rank, space } from "./space.js";

const ROLES = ["viewer", "editor", "admin", "owner"];
const ROLE_TEXT = { viewer: "search, ask, open cited pages",
                    editor: "search, ask, upload and delete documents, manage collections",
                    admin: "all an editor does, and manage members up to admin",
                    owner: "everything, deleting the workspace too" };

export async function renderWorkspaces(main, id, params) {
  if (id) { await renderWorkspace(main, Number(id), params); return; }
  const name = h("input", { id: "workspace-name", maxLength: 100, required: true, placeholder: "e.g. Finance" });
  const error = h("p", { class: "error-box", role: "alert", hidden: true });
  const create = h("form", { class: "collection-new" },
    h("label", { for: "workspace-name" }, "Name of a new workspace"),
    h("div", { class: "row" }, name, h("button", { type: "submit", class: "btn btn-primary" }, "Create workspace")),
    error);
  create.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const made = await api("/api/workspaces", { method: "POST", json: { name: name.value.trim() } });
      banner(`The workspace “${made.name}” was created. Add its members here.`, "info");
      go(`#/workspaces/${made.id}`);
    } catch (err) {
      error.textContent = `The workspace could not be created: ${err.detail}`;
      error.hidden = false;
      name.focus();
    }
  });
  const list = space.workspaces.length ? h("div", { class: "table-wrap" }, h("table", { class: "keys workspaces" },
    h("caption", { class: "visually-hidden" }, "Your workspaces"),
    h("thead", {}, h("tr", {}, ["Workspace", "Your role", "Members", "Documents"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, space.workspaces.map((w) => h("tr", { dataset: { id: w.id } },
      h("th", { scope: "row" }, h("a", { href: `#/workspaces/${w.id}` }, w.name)),
      h("td", {}, w.role), h("td", { class: "num" }, w.members), h("td", { class: "num" }, w.documents))))))
    : h("p", { class: "empty" }, "You are in no workspace yet. Make one, or ask a workspace's admin to add you by your "
                                 + "username.");
  main.append(h("section", { class: "page" }, h("h1", {}, "Teams"),
    h("p", { class: "muted" }, "A workspace holds documents and collections a team shares. Your chats stay yours; a "
                               + "chat started in a workspace answers from its documents only."),
    create, h("h2", {}, "Your workspaces"), list));
}

// the invitation link just made: shown once, on the page made again after it
let made = null;

async function renderWorkspace(main, id, params) {
  const w = space.workspaces.find((x) => x.id === id);
  if (!w) {  // not a member (any more), or no such workspace: the server answers both alike
    main.append(h("section", { class: "page" }, h("h1", {}, "Workspace not found"),
      h("p", {}, "It was deleted, you are no longer a member, or the link is wrong. ",
        h("a", { href: "#/workspaces" }, "Back to your teams"))));
    return;
  }
  const manages = rank(w.role) >= rank("admin");
  const [{ members }, audit, links, figures] = await Promise.all([api(`/api/workspaces/${id}/members`),
    manages ? api(`/api/workspaces/${id}/audit?limit=50`) : null,
    manages ? api(`/api/workspaces/${id}/invites`) : null,
    manages ? api(`/api/workspaces/${id}/metrics?hours=${24 * 7}`) : null]);
  const me = session.user.username;
  const working = space.id === id;
  main.append(h("section", { class: "page" },
    h("a", { href: "#/workspaces", class: "back-link" }, "‹ Teams"),
    h("div", { class: "page-head" }, h("h1", {}, w.name),
      working ? h("span", { class: "badge badge-ready" }, "Working in it")
        : h("button", { type: "button", class: "btn btn-primary", onclick: () => { choose(w); go("#/documents"); } },
          "Work in this workspace")),
    h("p", { class: "muted" }, `You are ${article(w.role)} ${w.role}: ${ROLE_TEXT[w.role]}. `,
      `${w.members} member${w.members === 1 ? "" : "s"}, ${w.documents} document${w.documents === 1 ? "" : "s"}.`),
    figures ? h("p", { class: "muted", id: "workspace-figures" },
      `Its documents keep ${bytes(figures.bytes)}; ${figures.questions} question${figures.questions === 1 ? " was" : "s were"} `
      + "asked in it in the last 7 days (admins and owners see this).") : null,
    h("h2", { id: "members-title" }, "Members"),
    membersTable(id, w, members, me, manages),
    manages ? addForm(id, w) : null,
    manages ? invitesSection(id, w, links.invites, made) : null,
    manages ? auditLog(audit.entries) : null,
    h("h2", {}, w.role === "owner" ? "Hand over, leave or delete" : "Leave"),
    w.role === "owner" ? handOver(w, members, me) : null,
    h("div", { class: "row" },
      h("button", { type: "button", class: "btn", onclick: () => leave(w) }, "Leave workspace"),
      w.role === "owner" ? h("button", { type: "button", class: "btn btn-danger", onclick: () => removeWorkspace(w) },
        "Delete workspace") : null),
    h("p", { class: "hint" }, "A workspace keeps at least one owner: its last owner cannot leave; hand it over "
                              + "first.")));
  made = null;
  const focus = params.get("focus");
  if (focus) main.querySelector(`#${CSS.escape(focus)}`)?.focus();
}

function roleOptions(upTo, selected) {
  return ROLES.filter((r) => rank(r) <= rank(upTo)).map((r) => h("option", { value: r, selected: r === selected }, r));
}

function membersTable(id, w, members, me, manages) {
  return h("div", { class: "table-wrap" }, h("table", { class: "keys members-table", "aria-labelledby": "members-title" },
    h("thead", {}, h("tr", {}, ["Member", "Role", "Added", ""].map((t, i) => h("th", { scope: "col" },
      i === 3 ? h("span", { class: "visually-hidden" }, "Actions") : t)))),
    h("tbody", {}, members.map((m) => {
      const mine = m.username === me;
      const mayChange = manages && !mine && rank(m.role) <= rank(w.role);
      let role = m.role;
      if (mayChange) {
        const select = h("select", { "aria-label": `Role of ${m.username}` }, roleOptions(w.role, m.role));
        role = h("form", { class: "row role-form" }, select,
          h("button", { type: "submit", class: "btn btn-small" }, "Save", h("span", { class: "visually-hidden" },
            ` the role of ${m.username}`)));
        role.addEventListener("submit", (e) => { e.preventDefault(); setRole(id, m, select.value); });
      }
      return h("tr", { dataset: { member: m.username } },
        h("th", { scope: "row" }, m.username, mine ? h("span", { class: "muted" }, " (you)") : null),
        h("td", { "data-label": "Role" }, role), h("td", { "data-label": "Added" }, when(m.added_at)),
        h("td", {}, mayChange ? h("button", { type: "button", class: "btn btn-small btn-danger",
                                                onclick: () => removeMember(id, w, m) },
          "Remove", h("span", { class: "visually-hidden" }, ` ${m.username}`)) : null));
    }))));
}

// An owner hands the workspace to another member in one step: they become an owner, you an admin.
function handOver(w, members, me) {
  const others = members.filter((m) => m.username !== me);
  if (!others.length) return null;
  const pick = h("select", { id: "hand-to" }, others.map((m) => h("option", { value: m.username }, `${m.username} (${m.role})`)));
  const form = h("form", { class: "member-add-fields hand-over" },
    h("div", {}, h("label", { for: "hand-to" }, "Hand over to"), pick),
    h("button", { type: "submit", class: "btn" }, "Make them owner, me admin"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const ok = await confirmDialog({ title: `Hand “${w.name}” over to ${pick.value}?`, ok: "Hand over",
                                     text: `${pick.value} becomes an owner and you an admin: you can no longer delete `
                                           + "the workspace or change owners." });
    if (!ok) return;
    try {
      await api(`/api/workspaces/${w.id}/transfer`, { method: "POST", json: { username: pick.value } });
      banner(`${pick.value} is now an owner of “${w.name}”; you are an admin.`, "info");
    } catch (err) {
      banner(`The workspace could not be handed over: ${err.detail}`, "error");
    }
    go(`#/workspaces/${w.id}?t=${Date.now()}`);
  });
  return form;
}

function addForm(id, w) {
  const username = h("input", { id: "member-username", maxLength: 64, required: true, autocomplete: "off",
                                spellcheck: false });
  const role = h("select", { id: "member-role" }, roleOptions(w.role, "viewer"));
  const error = h("p", { class: "error-box", role: "alert", hidden: true });
  const form = h("form", { class: "member-add", "aria-labelledby": "member-add-title" },
    h("h2", { id: "member-add-title" }, "Add a member"),
    h("p", { class: "hint" }, "By their Thotqen username; they see the workspace at once."),
    h("div", { class: "member-add-fields" },
      h("div", {}, h("label", { for: "member-username" }, "Username"), username),
      h("div", {}, h("label", { for: "member-role" }, "Role"), role),
      h("button", { type: "submit", class: "btn btn-primary" }, "Add member")),
    error);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const added = await api(`/api/workspaces/${id}/members`, { method: "POST",
                                                                 json: { username: username.value.trim(), role: role.value } });
      banner(`${added.username} was added as ${added.role}.`, "info");
      go(`#/workspaces/${id}?focus=member-username&t=${Date.now()}`);
    } catch (err) {
      error.textContent = `They could not be added: ${err.detail}`;
      error.hidden = false;
      username.focus();
    }
  });
  return form;
}

async function setRole(id, m, role) {
  if (role === m.role) return;
  try {
    await api(`/api/workspaces/${id}/members/${encodeURIComponent(m.username)}`, { method: "PATCH", json: { role } });
    banner(`${m.username} is now ${article(role)} ${role}.`, "info");
  } catch (err) {
    banner(`The role could not be changed: ${err.detail}`, "error");
  }
  go(`#/workspaces/${id}?t=${Date.now()}`);
}

async function removeMember(id, w, m) {
  const ok = await confirmDialog({ title: `Remove ${m.username} from “${w.name}”?`, ok: "Remove",
                                   text: "They lose access to its documents and collections at once. Their own "
                                         + "documents and chats stay theirs." });
  if (!ok) return;
  try {
    await api(`/api/workspaces/${id}/members/${encodeURIComponent(m.username)}`, { method: "DELETE" });
    banner(`${m.username} was removed.`, "info");
  } catch (err) {
    banner(`${m.username} could not be removed: ${err.detail}`, "error");
  }
  go(`#/workspaces/${id}?t=${Date.now()}`);
}

async function leave(w) {
  const ok = await confirmDialog({ title: `Leave “${w.name}”?`, ok: "Leave",
                                   text: "You lose access to its documents and collections at once; an admin can "
                                         + "add you again." });
  if (!ok) return;
  try {
    await api(`/api/workspaces/${w.id}/leave`, { method: "POST" });
    if (space.id === w.id) choose(null);  // not "no longer a member": they know
    banner(`You left “${w.name}”.`, "info");
    go("#/workspaces");
  } catch (err) {
    banner(`You could not leave: ${err.detail}`, "error");
  }
}

async function removeWorkspace(w) {
  const ok = await confirmDialog({ title: `Delete “${w.name}” and everything in it?`, ok: "Delete workspace",
                                   text: `Its ${w.documents} document${w.documents === 1 ? "" : "s"}, its collections, `
                                         + "the chats over it and its memberships are deleted for everyone. This "
                                         + "cannot be undone." });
  if (!ok) return;
  try {
    await api(`/api/workspaces/${w.id}`, { method: "DELETE" });
    if (space.id === w.id) choose(null);
    banner(`The workspace “${w.name}” was deleted.`, "info");
    go("#/workspaces");
  } catch (err) {
    banner(`The workspace could not be deleted: ${err.detail}`, "error");
  }
}

// ---- the audit log -----------------------------------------------------------------------------

function said(e) {
  const d = e.detail || {};
  switch (e.action) {
    case "workspace_created": return "created the workspace";
    case "member_added": return `added ${e.subject} as ${d.role}`;
    case "role_changed": return `changed ${e.subject}’s role from ${d.from} to ${d.to}`;
    case "member_removed": return `removed ${e.subject} (${d.role})`;
    case "member_left": return `left (${d.role})`;
    case "document_deleted": return `deleted the document ${e.subject}`;
    case "collection_deleted": return `deleted the collection ${e.subject}`;
    case "invite_created": return `made an invitation link for ${d.role}`;
    case "invite_accepted": return `joined as ${d.role} by an invitation link`;
    case "invite_revoked": return "revoked an invitation link";
    default: return e.action;
  }
}

function auditLog(entries) {
  return [h("h2", { id: "audit-title" }, "Audit log"),
    h("p", { class: "hint" }, "Membership changes and deletions, the latest 50 first; admins and owners see it."),
    entries.length ? h("div", { class: "table-wrap" }, h("table", { class: "keys audit", "aria-labelledby": "audit-title" },
      h("thead", {}, h("tr", {}, ["When", "Who", "What"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, entries.map((e) => h("tr", {}, h("td", { "data-label": "When" }, when(e.at)),
        h("td", { "data-label": "Who" }, e.actor), h("td", { "data-label": "What" }, said(e)))))))
      : h("p", { class: "empty" }, "Nothing yet.")];
}

// ---- one-time invitation links -----------------------------------------------------------------

const EXPIRIES = [["24", "In a day"], ["72", "In 3 days"], ["168", "In a week"], ["720", "In 30 days"]];

function invitesSection(id, w, invites, justMade) {
  const role = h("select", { id: "invite-role" }, roleOptions(w.role, "viewer"));
  const expiry = h("select", { id: "invite-expiry" }, EXPIRIES.map(([v, label]) => h("option", { value: v, selected: v === "72" }, label)));
  const error = h("p", { class: "error-box", role: "alert", hidden: true });
  const form = h("form", { class: "member-add", "aria-labelledby": "invite-title" },
    h("h2", { id: "invite-title" }, "Invitation links"),
    h("p", { class: "hint" }, "A link lets one person in, once, while signed in, before it expires. Send it to someone "
                              + "whose username you do not know."),
    h("div", { class: "member-add-fields" },
      h("div", {}, h("label", { for: "invite-role" }, "Joins as"), role),
      h("div", {}, h("label", { for: "invite-expiry" }, "Expires"), expiry),
      h("button", { type: "submit", class: "btn" }, "Create link")),
    error);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      made = await api(`/api/workspaces/${id}/invites`, { method: "POST",
                                                          json: { role: role.value, expires_in_hours: Number(expiry.value) } });
      go(`#/workspaces/${id}?focus=invite-made&t=${Date.now()}`);
    } catch (err) {
      error.textContent = `The link could not be made: ${err.detail}`;
      error.hidden = false;
    }
  });
  return [form, justMade ? shownLink(justMade) : null,
    invites.length ? h("div", { class: "table-wrap" }, h("table", { class: "keys invites", "aria-label": "Open invitation links" },
      h("thead", {}, h("tr", {}, ["Joins as", "Made by", "Expires", ""].map((t, i) => h("th", { scope: "col" },
        i === 3 ? h("span", { class: "visually-hidden" }, "Actions") : t)))),
      h("tbody", {}, invites.map((i) => h("tr", {},
        h("td", { "data-label": "Joins as" }, i.role), h("td", { "data-label": "Made by" }, i.created_by || "—"),
        h("td", { "data-label": "Expires" }, when(i.expires_at)),
        h("td", {}, h("button", { type: "button", class: "btn btn-small btn-danger", onclick: () => revokeLink(id, i) },
          "Revoke", h("span", { class: "visually-hidden" }, ` the ${i.role} link expiring ${when(i.expires_at)}`))))))))
      : h("p", { class: "empty" }, "No open links.")];
}

function shownLink(link) {
  const url = new URL(link.link, location.origin).href;
  const field = h("input", { id: "invite-link", readOnly: true, value: url, spellcheck: false, class: "mono" });
  const copy = h("button", { type: "button", class: "btn btn-small" }, "Copy");
  copy.addEventListener("click", async () => {
    field.select();
    try { await navigator.clipboard.writeText(url); banner("The link was copied.", "info"); } catch {
      banner("Select the link and copy it with your keyboard.", "warn");
    }
  });
  return h("div", { class: "warn-box key-made", id: "invite-made", tabindex: "-1" },
    h("p", {}, h("strong", {}, `A link to join as ${link.role}. `),
      "Copy it now: it is not shown again. It works once, until ", when(link.expires_at), "."),
    h("label", { for: "invite-link", class: "visually-hidden" }, "The invitation link"),
    h("div", { class: "row" }, field, copy));
}

async function revokeLink(id, link) {
  const ok = await confirmDialog({ title: "Revoke this invitation link?", ok: "Revoke",
                                   text: "Nobody can join with it any more." });
  if (!ok) return;
  try {
    await api(`/api/workspaces/${id}/invites/${link.id}`, { method: "DELETE" });
    banner("The link was revoked.", "info");
  } catch (err) {
    banner(`The link could not be revoked: ${err.detail}`, "error");
  }
  go(`#/workspaces/${id}?t=${Date.now()}`);
}

// The page an invitation link opens (#/join/TOKEN, the token never sent to the server in a URL):
// it says what joining would do, and joining is a click, not the opening of the link.
export async function renderJoin(main, token) {
  let offer;
  try {
    offer = await api("/api/workspaces/join/preview", { method: "POST", json: { token } });
  } catch (err) {
    if (![404, 422].includes(err.status)) throw err;
    main.append(h("section", { class: "page" }, h("h1", {}, "This invitation link cannot be used"),
      h("p", {}, "It was used already, revoked or has expired. Ask whoever sent it for a new one. ",
        h("a", { href: "#/chats" }, "Go to your chats"))));
    return;
  }
  const error = h("p", { class: "error-box", role: "alert", hidden: true });
  const button = h("button", { type: "button", class: "btn btn-primary" }, `Join ${offer.workspace}`);
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const joined = await api("/api/workspaces/join", { method: "POST", json: { token } });
      banner(`You joined “${joined.name}” as ${article(joined.role)} ${joined.role}.`, "info");
      go(`#/workspaces/${joined.id}`);
    } catch (err) {
      error.textContent = `You could not join: ${err.detail}`;
      error.hidden = false;
      button.disabled = false;
    }
  });
  main.append(h("section", { class: "page" }, h("h1", {}, `Join “${offer.workspace}”`),
    h("p", {}, `${offer.invited_by} invites you to the workspace “${offer.workspace}” as ${article(offer.role)} `,
      h("strong", {}, offer.role), `: ${ROLE_TEXT[offer.role]}. The link works once, until ${when(offer.expires_at)}.`),
    h("div", { class: "row" }, button, h("a", { class: "btn", href: "#/chats" }, "Not now")), error));
}

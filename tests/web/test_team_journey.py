"""A team in Chromium (issue 43): an owner makes a workspace and adds an editor and a viewer on the
members page; the editor switches to the workspace and uploads a report, which says who uploaded it;
the viewer (on a phone) can neither upload nor delete, asks in the workspace and gets a cited answer;
the owner removes the viewer, whose next view falls back to their own space and whose next search
finds nothing of the workspace. The audit log shows it all. Every screen passes axe."""

from __future__ import annotations

import uuid
from typing import Any

from playwright.sync_api import expect

from tests.web.conftest import sign_in, sign_up
from tests.web.helpers import QUESTION, accessibility_problems, ask, aurora_pdf, csrf, nav, new_chat, pdf_file


def choose_space(page: Any, label: str) -> None:
    page.get_by_label("Space", exact=True).select_option(label=label)


def accessible(page: Any) -> None:
    problems = accessibility_problems(page)
    assert not problems, problems


def test_a_team_invites_uploads_asks_and_removes_a_member(open_page, shot) -> None:
    owner_w, editor_w, viewer_w = open_page(), open_page(), open_page(phone=True)
    owner, editor, viewer = owner_w.page, editor_w.page, viewer_w.page
    owner_name, editor_name, viewer_name = sign_up(owner), sign_up(editor), sign_up(viewer)
    expect(owner.locator("#space")).to_be_hidden()  # in no workspace yet: nothing to switch

    # the owner makes the workspace and adds both by username
    nav(owner, "Teams")
    owner.get_by_role("heading", name="Teams").wait_for()
    expect(owner.get_by_text("You are in no workspace yet.")).to_be_visible()
    owner.get_by_label("Name of a new workspace").fill("Finance")
    owner.get_by_role("button", name="Create workspace").click()
    owner.get_by_role("heading", name="Finance", exact=True).wait_for()
    for name, role in ((editor_name, "editor"), (viewer_name, "viewer")):
        owner.get_by_label("Username").fill(name)
        owner.get_by_label("Role", exact=True).select_option(role)
        owner.get_by_role("button", name="Add member").click()
        expect(owner.get_by_label(f"Role of {name}")).to_have_value(role)
    expect(owner.locator("table.members-table tbody tr")).to_have_count(3)
    # a role changed and changed back (both in the audit log below)
    for role in ("admin", "editor"):
        owner.get_by_label(f"Role of {editor_name}").select_option(role)
        owner.get_by_role("button", name=f"Save the role of {editor_name}").click()
        expect(owner.locator("#banner")).to_contain_text(f"{editor_name} is now an {role}")
        expect(owner.get_by_label(f"Role of {editor_name}")).to_have_value(role)
    expect(owner.locator(f"tr[data-member='{owner_name}']")).to_contain_text("owner")
    expect(owner.get_by_role("button", name=f"Remove {owner_name}")).to_have_count(0)  # not yourself
    # its figures, for admins and owners: nothing stored or asked yet
    expect(owner.locator("#workspace-figures")).to_have_text(
        "Its documents keep 0 B; 0 questions were asked in it in the last 7 days (admins and owners see this).")
    shot(owner, "desktop-34-team-members")
    accessible(owner)

    # the editor works in the workspace: the upload goes there, and says who uploaded it
    nav(editor, "Teams")
    editor.get_by_role("link", name="Finance").click()
    editor.get_by_role("button", name="Work in this workspace").click()
    editor.get_by_role("heading", name="Documents of Finance").wait_for()
    switch = editor.get_by_label("Space", exact=True)
    assert switch.evaluate("(s) => s.selectedOptions[0].text") == "Finance (editor)"
    editor.locator("#file-input").set_input_files([pdf_file("aurora-report.pdf", aurora_pdf())])
    expect(editor.locator(".upload[data-state=done]")).to_have_count(1, timeout=180_000)
    row = editor.locator("table.docs tbody tr")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("Finance")
    expect(row).to_contain_text(f"uploaded by {editor_name}")
    expect(editor.get_by_role("button", name="Delete aurora-report.pdf")).to_be_visible()
    shot(editor, "desktop-35-team-documents")
    accessible(editor)
    # it is the workspace's: the editor's own space has nothing
    choose_space(editor, "All my spaces")
    editor.get_by_role("heading", name="Documents", exact=True).wait_for()
    expect(editor.locator("table.docs tbody tr")).to_contain_text("Finance")

    # the viewer, on a phone: no upload, no delete; asks in the workspace and gets a cited answer
    viewer.reload()
    viewer.get_by_role("heading", name="Chats").wait_for()
    choose_space(viewer, "Finance (viewer)")
    nav(viewer, "Documents")
    viewer.get_by_role("heading", name="Documents of Finance").wait_for()
    expect(viewer.locator("table.docs tbody tr")).to_contain_text(f"uploaded by {editor_name}")
    expect(viewer.locator("#file-input")).to_have_count(0)
    expect(viewer.get_by_text("As a viewer of “Finance”")).to_be_visible()
    expect(viewer.get_by_role("button", name="Delete aurora-report.pdf")).to_have_count(0)
    shot(viewer, "phone-12-team-documents-viewer")
    accessible(viewer)
    nav(viewer, "Collections")  # a viewer makes no collection there either
    viewer.get_by_role("heading", name="Collections of Finance").wait_for()
    expect(viewer.get_by_role("button", name="Create collection")).to_have_count(0)
    nav(viewer, "Chats")
    viewer.get_by_role("button", name="New chat", exact=True).click()
    expect(viewer.get_by_role("dialog", name="New chat")).to_contain_text("All documents of Finance")
    viewer.keyboard.press("Escape")
    new_chat(viewer, "Finance questions")
    expect(viewer.locator(".chat-head .scope")).to_contain_text("the workspace “Finance”")
    answer = ask(viewer, QUESTION)
    expect(answer).to_contain_text("412 million")
    expect(answer.locator(".sources")).to_contain_text("aurora-report.pdf, page")
    shot(viewer, "phone-13-team-answer")
    accessible(viewer)

    # the owner removes the viewer; the audit log says who did what
    owner.reload()
    owner.get_by_role("heading", name="Finance", exact=True).wait_for()
    expect(owner.locator("#workspace-figures")).to_contain_text("1 question was asked in it")  # the viewer's
    expect(owner.locator("#workspace-figures")).not_to_contain_text("keep 0 B")  # the editor's upload
    owner.get_by_role("button", name=f"Remove {viewer_name}").click()
    owner.get_by_role("dialog").get_by_role("button", name="Remove", exact=True).click()
    expect(owner.locator(f"tr[data-member='{viewer_name}']")).to_have_count(0)
    audit = owner.locator("table.audit tbody")
    expect(audit).to_contain_text(f"removed {viewer_name} (viewer)")
    expect(audit).to_contain_text(f"added {editor_name} as editor")
    expect(audit).to_contain_text("created the workspace")
    expect(audit).to_contain_text(f"changed {editor_name}’s role from admin to editor")
    owner.locator("#audit-title").evaluate("(e) => e.scrollIntoView({ block: 'start' })")
    shot(owner, "desktop-36-team-audit")
    accessible(owner)

    # the owner hands the workspace over to the editor in one step
    owner.get_by_label("Hand over to").select_option(editor_name)
    owner.get_by_role("button", name="Make them owner, me admin").click()
    owner.get_by_role("dialog").get_by_role("button", name="Hand over", exact=True).click()
    expect(owner.locator("#banner")).to_contain_text(f"{editor_name} is now an owner")
    expect(owner.locator("p.muted", has_text="You are an admin:")).to_be_visible()  # the role line, not the banner
    expect(owner.locator(f"tr[data-member='{editor_name}']")).to_contain_text("owner")
    expect(owner.get_by_role("button", name="Delete workspace")).to_have_count(0)

    # the viewer's next view falls back to their own space, and the search finds nothing of it
    nav(viewer, "Chats")
    expect(viewer.locator("#banner")).to_contain_text("no longer a member")
    expect(viewer.locator("#space")).to_be_hidden()  # in no workspace now: nothing to switch
    viewer.get_by_label("Search your chats and documents").fill("aurora")
    expect(viewer.locator("#found")).to_contain_text("Chats")  # their own chat's question still matches
    expect(viewer.locator("#found")).not_to_contain_text("aurora-report.pdf")
    found = viewer.request.get("/api/search?q=aurora").json()
    assert found["documents"] == []
    assert viewer.request.get("/api/documents").json()["documents"] == []
    shot(viewer, "phone-14-team-removed-search")
    accessible(viewer)

    # the members page on a phone
    phone = open_page(phone=True)
    sign_in(phone.page, editor_name)  # the owner now
    nav(phone.page, "Teams")
    phone.page.get_by_role("link", name="Finance").click()
    phone.page.get_by_role("heading", name="Members").wait_for()
    shot(phone.page, "phone-15-team-members")
    accessible(phone.page)
    for w in (owner_w, editor_w, viewer_w, phone):
        w.clean()


def test_a_one_time_invitation_link(open_page, shot) -> None:
    owner_w = open_page()
    owner = owner_w.page
    owner_name = sign_up(owner)
    nav(owner, "Teams")
    owner.get_by_label("Name of a new workspace").fill("Research")
    owner.get_by_role("button", name="Create workspace").click()
    owner.get_by_role("heading", name="Invitation links").wait_for()
    expect(owner.get_by_text("No open links.")).to_be_visible()
    owner.get_by_label("Joins as").select_option("editor")
    owner.get_by_label("Expires").select_option("168")
    owner.get_by_role("button", name="Create link").click()
    link = owner.get_by_label("The invitation link")
    expect(link).to_be_visible()
    url = link.input_value()
    assert "/#/join/thqi_" in url
    expect(owner.locator("table.invites tbody tr")).to_have_count(1)
    expect(owner.locator("table.invites tbody tr")).to_contain_text("editor")
    shot(owner, "desktop-37-team-invite-link")
    accessible(owner)

    # someone signed out opens it: they sign up first, then land on the join page and join with a click
    joiner_w = open_page(phone=True)
    joiner = joiner_w.page
    joiner.goto(url)
    joiner.get_by_role("heading", name="Sign in").wait_for()
    expect(joiner.locator("#banner")).to_contain_text("to join the workspace")
    joiner.get_by_role("link", name="Create an account").click()
    joiner.get_by_label("Username").fill(f"joiner-{uuid.uuid4().hex[:8]}")
    joiner.get_by_label("Password").fill("correct horse battery")
    joiner.get_by_role("button", name="Create account").click()
    joiner.get_by_role("heading", name="Join “Research”").wait_for()
    expect(joiner.locator("main")).to_contain_text(f"{owner_name} invites you to the workspace “Research” as an editor")
    shot(joiner, "phone-16-team-join")
    accessible(joiner)
    joiner.get_by_role("button", name="Join Research").click()
    joiner.get_by_role("heading", name="Research", exact=True).wait_for()
    expect(joiner.get_by_text("You are an editor")).to_be_visible()
    # and may leave again
    joiner.get_by_role("button", name="Leave workspace").click()
    joiner.get_by_role("dialog").get_by_role("button", name="Leave", exact=True).click()
    joiner.get_by_role("heading", name="Teams").wait_for()
    expect(joiner.get_by_text("You are in no workspace yet.")).to_be_visible()

    # spent: a second person gets a clear refusal, and the owner's list is empty again
    other_w = open_page()
    other = other_w.page
    sign_up(other)
    other.goto(url)
    other.get_by_role("heading", name="This invitation link cannot be used").wait_for()
    expect(other.get_by_role("button", name="Join Research")).to_have_count(0)
    owner.reload()
    expect(owner.get_by_text("No open links.")).to_be_visible()
    expect(owner.locator("table.audit")).to_contain_text("joined as editor by an invitation link")
    expect(owner.locator("table.audit")).to_contain_text("left (editor)")
    owner_w.clean()
    joiner_w.clean()
    other_w.clean(lambda e: "404" in e)  # the refused join's response is logged by the browser



def test_a_chat_shared_read_only_with_the_workspace(open_page, shot) -> None:
    """The owner of a chat over a workspace shares it; a member (on a phone) finds it under *Shared
    with you* and reads it without a question box; unshared, it is gone for them."""
    owner_w, reader_w = open_page(), open_page(phone=True)
    owner, reader = owner_w.page, reader_w.page
    owner_name, reader_name = sign_up(owner), sign_up(reader)
    headers = {"X-CSRF-Token": csrf(owner)}
    ws = owner.request.post("/api/workspaces", headers=headers, data={"name": "Shared notes"}).json()["id"]
    added = owner.request.post(f"/api/workspaces/{ws}/members", headers=headers,
                               data={"username": reader_name, "role": "viewer"})
    assert added.status == 201, added.text()
    chat = owner.request.post("/api/chats", headers=headers, data={"title": "Budget talk", "workspace_id": ws})
    assert chat.status == 201, chat.text()
    chat_id = chat.json()["id"]
    asked = owner.request.post(f"/api/chats/{chat_id}/messages", headers=headers, data={"question": QUESTION})
    assert asked.status == 200, asked.text()

    owner.evaluate(f"location.hash = '#/chats/{chat_id}'")
    owner.get_by_role("heading", name="Budget talk").wait_for()
    owner.get_by_role("button", name="Share with the workspace").click()
    expect(owner.locator("#banner")).to_contain_text("can read this chat now")
    expect(owner.get_by_role("button", name="Stop sharing")).to_be_visible()

    reader.reload()
    nav(reader, "Chats")
    reader.get_by_role("heading", name="Shared with you").wait_for()
    reader.get_by_role("link", name="Budget talk").click()
    reader.get_by_role("heading", name="Budget talk").wait_for()
    expect(reader.locator(".shared-note")).to_contain_text(f"by {owner_name}")
    expect(reader.locator("#question")).to_have_count(0)
    expect(reader.get_by_role("button", name="Rename")).to_have_count(0)
    expect(reader.locator(".messages li.msg-user")).to_contain_text(QUESTION)
    shot(reader, "phone-17-team-shared-chat")
    accessible(reader)

    owner.get_by_role("button", name="Stop sharing").click()
    expect(owner.get_by_role("button", name="Share with the workspace")).to_be_visible()
    reader.reload()
    reader.get_by_role("heading", name="Chat not found").wait_for()
    owner_w.clean()
    reader_w.clean(allowed=lambda e: "status of 404" in e)  # the unshared chat, asked for once


def test_the_server_admin_sees_each_workspace_on_the_metrics_page(open_page, shot, web_admin) -> None:
    """The Metrics page lists every workspace's members by role, documents, bytes and questions."""
    member_w, admin_w = open_page(), open_page()
    member, admin = member_w.page, admin_w.page
    sign_up(member)
    name = f"Metered {uuid.uuid4().hex[:6]}"
    res = member.request.post("/api/workspaces", headers={"X-CSRF-Token": csrf(member)}, data={"name": name})
    assert res.status == 201, res.text()
    ws = res.json()["id"]
    sign_in(admin, web_admin)
    nav(admin, "Metrics")
    admin.get_by_role("heading", name="Metrics").wait_for()
    row = admin.locator(f"table.workspace-figures tr[data-workspace='{ws}']")
    expect(row.get_by_role("rowheader")).to_have_text(name)
    expect(row.locator("td[data-label=Members]")).to_have_text("1 (1 owner)")
    expect(row.locator("td[data-label=Documents]")).to_have_text("0")
    expect(row.locator("td[data-label=Questions]")).to_have_text("0")
    accessible(admin)
    row.scroll_into_view_if_needed()
    shot(admin, "desktop-38-workspace-metrics")
    # the workspace's owner is no server admin: the page and the figures of every workspace are not theirs
    assert member.request.get("/api/admin/metrics").status == 403
    assert member.request.get(f"/api/workspaces/{ws}/metrics").json()["members"] == 1
    member_w.clean()
    admin_w.clean()

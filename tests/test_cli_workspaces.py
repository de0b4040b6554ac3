"""`thotqen workspace ...` and `--workspace NAME` (issue 43) as real subprocesses: embedded Postgres,
real embedder, a scripted model over HTTP. A team: alice owns it, carol edits, bob views."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from evals import pdfs
from evals.fake_openai import FakeOpenAI, subprocess_env
from graph import prompts
from tests.support.cli_run import report_script, run_cli

QUESTION = "What was Aurora Widgets' total revenue in fiscal 2023?"


@pytest.fixture(scope="module")
def env() -> Iterator[dict[str, str]]:
    with FakeOpenAI(report_script, model="scripted") as provider:
        yield subprocess_env(provider, tempfile.mkdtemp(prefix="thq-cli-", dir="/tmp"))


def cli(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    res = run_cli(env, *args)
    return res.returncode, res.stdout, res.stderr


def test_a_team_from_the_command_line(env: dict[str, str], tmp_path: Path) -> None:
    code, out, err = cli(env, "workspace", "create", "team", "--user", "alice", "--json")
    assert code == 0, err
    made = json.loads(out)["workspace"]
    assert made["name"] == "team" and made["role"] == "owner"
    assert cli(env, "workspace", "create", "team", "--user", "alice")[0] == 2  # one name per member
    for user in ("bob", "carol", "dave"):
        assert cli(env, "documents", "--user", user)[0] == 0  # a command-line user exists once used
    code, out, err = cli(env, "workspace", "invite", "team", "bob", "--role", "viewer", "--user", "alice", "--json")
    assert code == 0, err
    assert {m["username"]: m["role"] for m in json.loads(out)["members"]} == {"alice": "owner", "bob": "viewer"}
    assert cli(env, "workspace", "invite", "team", "carol", "--role", "editor", "--user", "alice")[0] == 0

    # carol ingests into the workspace: the same JSON line as any ingest
    pdf = tmp_path / "aurora.pdf"
    pdf.write_bytes(pdfs.long_report(pdfs.AURORA_TOPICS, pages_per_topic=2))
    code, out, err = cli(env, "ingest", str(pdf), "--workspace", "team", "--user", "carol")
    assert code == 0, err
    line = json.loads(out)
    assert line["status"] == "ready" and set(line) == {"name", "document_id", "pages", "parents", "children",
                                                       "seconds", "status"}
    doc = line["document_id"]
    # a viewer may not: refused before reading the file, nothing kept
    code, out, err = cli(env, "ingest", str(pdf), "--workspace", "team", "--user", "bob")
    assert code == 2 and "viewer" in err and out == ""

    # bob reads it: documents, search and ask, with and without --workspace
    code, out, err = cli(env, "documents", "--user", "bob", "--json")
    [shown] = json.loads(out)["documents"]
    assert shown["id"] == doc and shown["workspace"] == "team" and shown["uploaded_by"] == "carol"
    for extra in ([], ["--workspace", "team"]):
        code, out, err = cli(env, "search", "total revenue", "--user", "bob", "--json", *extra)
        assert code == 0, err
        assert {h["document_id"] for h in json.loads(out)["hits"]} == {doc}
    code, out, err = cli(env, "ask", QUESTION, "--user", "bob", "--workspace", "team", "--json")
    assert code == 0, err
    answer = json.loads(out)
    assert answer["answer"] == "Total revenue was 412 million dollars [1]."
    assert {c["document_id"] for c in answer["citations"]} == {doc}

    # dave is in no workspace: --workspace team names nothing of his, and he reads nothing of it
    code, _out, err = cli(env, "search", "total revenue", "--user", "dave", "--workspace", "team", "--json")
    assert code == 2 and "no workspace named 'team'" in err
    code, out, _err = cli(env, "search", "total revenue", "--user", "dave", "--json", "--document", doc)
    assert json.loads(out)["hits"] == []
    code, out, _err = cli(env, "ask", QUESTION, "--user", "dave", "--json")
    assert json.loads(out)["answer"] == prompts.CANNOT_ANSWER

    # roles: no one lifts anyone above themselves; the last owner stays
    assert cli(env, "workspace", "invite", "team", "dave", "--role", "viewer", "--user", "bob")[0] == 2
    assert cli(env, "workspace", "role", "team", "carol", "admin", "--user", "carol")[0] == 2
    assert cli(env, "workspace", "leave", "team", "--user", "alice")[0] == 2
    code, out, err = cli(env, "workspace", "role", "team", "carol", "admin", "--user", "alice", "--json")
    assert code == 0 and {m["username"]: m["role"] for m in json.loads(out)["members"]}["carol"] == "admin"
    code, _out, err = cli(env, "workspace", "invite", "team", "dave", "--role", "owner", "--user", "carol")
    assert code == 2 and "admin" in err

    # bob removed: from then on he reads nothing of it
    assert cli(env, "workspace", "remove", "team", "bob", "--user", "carol")[0] == 0
    code, out, _err = cli(env, "search", "total revenue", "--user", "bob", "--json")
    assert json.loads(out)["hits"] == []
    code, out, _err = cli(env, "documents", "--user", "bob", "--json")
    assert json.loads(out)["documents"] == []
    code, out, _err = cli(env, "workspace", "list", "--user", "bob", "--json")
    assert json.loads(out)["workspaces"] == []

    # deleted (owners only, confirmed): its documents go with it
    assert cli(env, "workspace", "delete", "team", "--user", "carol", "--yes")[0] == 2
    code, _out, err = cli(env, "workspace", "delete", "team", "--user", "alice")
    assert code == 2 and "--yes" in err
    assert cli(env, "workspace", "delete", "team", "--user", "alice", "--yes")[0] == 0
    code, out, _err = cli(env, "documents", "--user", "carol", "--json")
    assert json.loads(out)["documents"] == []
    code, out, _err = cli(env, "workspace", "list", "--user", "alice", "--json")
    assert json.loads(out)["workspaces"] == []


def test_workspace_names_are_checked(env: dict[str, str]) -> None:
    code, _out, err = cli(env, "workspace", "create", " ", "--user", "erin")
    assert code == 2 and "1 to 100 characters" in err
    code, _out, err = cli(env, "workspace", "members", "nowhere", "--user", "erin")
    assert code == 2 and "no workspace named 'nowhere'" in err
    code, _out, err = cli(env, "workspace", "invite", "nowhere", "x", "--user", "erin")
    assert code == 2 and "--role" in err


def test_the_audit_log_from_the_command_line(env: dict[str, str]) -> None:
    for user in ("bob", "dave"):
        assert cli(env, "documents", "--user", user)[0] == 0  # a command-line user exists once used
    assert cli(env, "workspace", "create", "audited", "--user", "alice")[0] == 0
    code, _out, err = cli(env, "workspace", "invite", "audited", "bob", "--role", "viewer", "--user", "alice")
    assert code == 0, err
    assert cli(env, "workspace", "role", "audited", "bob", "editor", "--user", "alice")[0] == 0
    code, out, err = cli(env, "workspace", "audit", "audited", "--user", "alice", "--json")
    assert code == 0, err
    entries = json.loads(out)["entries"]
    assert [(e["actor"], e["action"], e["subject"], e["detail"]) for e in entries] == [
        ("alice", "role_changed", "bob", {"from": "viewer", "to": "editor"}),
        ("alice", "member_added", "bob", {"role": "viewer"}),
        ("alice", "workspace_created", None, {"name": "audited"})]
    code, out, err = cli(env, "workspace", "audit", "audited", "--user", "alice", "--limit", "1")
    assert code == 0 and out.count("\n") == 1 and "role_changed bob  from=viewer to=editor" in out
    # an editor is not an admin; someone outside finds no workspace of that name
    code, _out, err = cli(env, "workspace", "audit", "audited", "--user", "bob")
    assert code == 2 and "admin" in err
    code, _out, err = cli(env, "workspace", "audit", "audited", "--user", "dave")
    assert code == 2 and "no workspace named 'audited'" in err
    assert cli(env, "workspace", "audit", "audited", "--user", "alice", "--limit", "0")[0] == 2
    # handed over in one step: bob an owner, alice an admin, both in the log
    assert cli(env, "workspace", "transfer", "audited", "alice", "--user", "bob")[0] == 2  # owners only
    code, out, err = cli(env, "workspace", "transfer", "audited", "bob", "--user", "alice", "--json")
    assert code == 0, err
    assert {m["username"]: m["role"] for m in json.loads(out)["members"]} == {"alice": "admin", "bob": "owner"}
    code, out, err = cli(env, "workspace", "audit", "audited", "--user", "bob", "--json", "--limit", "2")
    assert [(e["subject"], e["detail"]["to"]) for e in json.loads(out)["entries"]] == [("alice", "admin"),
                                                                                       ("bob", "owner")]


def test_a_one_time_invitation_link_from_the_command_line(env: dict[str, str]) -> None:
    """`workspace invite NAME --link --role ROLE` makes a link, shown once; `workspace join TOKEN` spends
    it, once; the same refusals as the API's."""
    assert cli(env, "workspace", "create", "linked", "--user", "lena")[0] == 0
    for user in ("mona", "nils", "otto"):
        assert cli(env, "documents", "--user", user)[0] == 0
    code, out, err = cli(env, "workspace", "invite", "linked", "--link", "--role", "editor", "--hours", "2",
                         "--user", "lena", "--json")
    assert code == 0, err
    made = json.loads(out)
    assert made["role"] == "editor" and made["link"] == f"/#/join/{made['token']}" and made["token"].startswith("thqi_")
    code, out, err = cli(env, "workspace", "join", made["token"], "--user", "mona", "--json")
    assert code == 0, err
    assert json.loads(out)["workspace"]["role"] == "editor"
    # once only, for anyone; a made-up token answers the same
    code, out, err = cli(env, "workspace", "join", made["token"], "--user", "nils")
    assert code == 2 and "cannot be used" in err and out == ""
    assert cli(env, "workspace", "join", "thqi_" + "x" * 32, "--user", "nils")[0] == 2
    # the whole link is taken as well as the token; text output names the command to join
    code, out, err = cli(env, "workspace", "invite", "linked", "--link", "--role", "viewer", "--user", "lena")
    assert code == 0 and "/#/join/thqi_" in out and "thotqen workspace join thqi_" in out, err
    link = next(w for w in out.split() if w.startswith("/#/join/"))
    code, out, err = cli(env, "workspace", "join", f"https://thotqen.example{link}", "--user", "nils")
    assert code == 0 and "joined 'linked' as viewer" in out, err
    code, out, err = cli(env, "workspace", "members", "linked", "--user", "lena", "--json")
    assert {m["username"]: m["role"] for m in json.loads(out)["members"]} == {"lena": "owner", "mona": "editor",
                                                                          "nils": "viewer"}
    # refusals: a viewer makes no links, an editor neither; a USER and --link, or neither; bad hours
    code, _out, err = cli(env, "workspace", "invite", "linked", "--link", "--role", "viewer", "--user", "nils")
    assert code == 2 and "admin" in err
    code, _out, err = cli(env, "workspace", "invite", "linked", "otto", "--link", "--role", "viewer", "--user", "lena")
    assert code == 2 and "not both" in err
    code, _out, err = cli(env, "workspace", "invite", "linked", "--role", "viewer", "--user", "lena")
    assert code == 2 and "--link" in err
    assert cli(env, "workspace", "invite", "linked", "--link", "--role", "viewer", "--hours", "721",
               "--user", "lena")[0] == 2
    # a stranger's workspace looks absent
    assert cli(env, "workspace", "invite", "linked", "--link", "--role", "viewer", "--user", "otto")[0] == 2


def test_a_key_bound_to_a_workspace_from_the_command_line(env: dict[str, str]) -> None:
    assert cli(env, "workspace", "create", "keyed", "--user", "pia")[0] == 0
    code, out, err = cli(env, "keys", "create", "bot", "--workspace", "keyed", "--user", "pia", "--json")
    assert code == 0, err
    made = json.loads(out)
    assert made["workspace"] == "keyed" and isinstance(made["workspace_id"], int) and made["key"].startswith("thq_")
    code, out, err = cli(env, "keys", "create", "bot", "--workspace", "nowhere", "--user", "pia")
    assert code == 2 and "no workspace named 'nowhere'" in err and out == ""
    code, out, err = cli(env, "keys", "list", "--user", "pia", "--json")
    assert [k["workspace"] for k in json.loads(out)["keys"]] == ["keyed"]


def test_two_of_each_role_from_the_command_line(env: dict[str, str], tmp_path: Path) -> None:
    """Several users per role: both owners, admins, editors and viewers list the workspace's document
    with --workspace; both editors may ingest, neither viewer may; an admin cannot name an owner, a
    second owner can; someone outside finds no workspace of that name. (Each command is a process:
    this test keeps to the commands that say something per role.)"""
    crew = {role: [f"{role}-{n}" for n in (1, 2)] for role in ("owner", "admin", "editor", "viewer")}
    for users in crew.values():
        for user in users:
            assert cli(env, "documents", "--user", user)[0] == 0  # a command-line user exists once used
    assert cli(env, "documents", "--user", "outsider")[0] == 0
    first = crew["owner"][0]
    assert cli(env, "workspace", "create", "crew", "--user", first)[0] == 0
    for role, users in crew.items():
        for user in users:
            if user != first:
                code, _out, err = cli(env, "workspace", "invite", "crew", user, "--role", role, "--user", first)
                assert code == 0, err
    note = tmp_path / "crew-notes.md"
    note.write_text("# Crew notes\n\nThe crew meets on Thursdays to review the Aurora Widgets report.\n")
    docs = []
    for editor in crew["editor"]:
        note.write_text(note.read_text() + f"\nAdded by {editor}.\n")
        code, out, err = cli(env, "ingest", str(note), "--workspace", "crew", "--user", editor)
        assert code == 0, err
        docs.append(json.loads(out)["document_id"])
    for viewer in crew["viewer"]:
        code, out, err = cli(env, "ingest", str(note), "--workspace", "crew", "--user", viewer)
        assert code == 2 and "viewer" in err and out == ""
    for users in crew.values():
        for user in users:
            code, out, err = cli(env, "documents", "--workspace", "crew", "--user", user, "--json")
            assert code == 0, (user, err)
            listed = json.loads(out)["documents"]
            assert sorted(d["id"] for d in listed) == sorted(docs), user
            assert {d["uploaded_by"] for d in listed} == set(crew["editor"])
    code, _out, err = cli(env, "workspace", "role", "crew", "viewer-1", "owner", "--user", crew["admin"][1])
    assert code == 2 and "admin" in err
    code, out, err = cli(env, "workspace", "role", "crew", "admin-1", "owner", "--user", crew["owner"][1], "--json")
    assert code == 0 and {m["username"]: m["role"] for m in json.loads(out)["members"]}["admin-1"] == "owner", err
    code, _out, err = cli(env, "documents", "--workspace", "crew", "--user", "outsider")
    assert code == 2 and "no workspace named 'crew'" in err

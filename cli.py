"""`thotqen` command line: ingest, search, ask, documents, reindex, doctor, serve, mcp, worker, beat,
maintenance, migrate.

Machine-readable output goes to stdout (JSON with --json / one JSON line per file for ingest);
progress bars and logs go to stderr.
"""

from __future__ import annotations

import argparse
import json
import logging
import shlex
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from providers import logs
from runtime import Runtime, build_runtime
from settings import Settings
from storage.users import NotACliUser, NoWebAccount
from storage.workspaces import WorkspaceError

if TYPE_CHECKING:
    from graph.state import InputState
    from providers.protocols import DocumentEmbedder
    from storage.db import Database

log = logging.getLogger("thotqen")


def _json_default(value: Any) -> Any:
    if isinstance(value, uuid.UUID):
        return str(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    raise TypeError(f"cannot serialise {type(value).__name__}")


def _print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, default=_json_default, ensure_ascii=False) + "\n")
    sys.stdout.flush()


EXIT_MODEL_MISMATCH = 3


class _Lock(Protocol):
    """The shared model lock embedding_index.hold took: held until closed."""

    def close(self) -> None: ...


def _embedder(rt: Runtime, *, hold: bool = False) -> tuple[DocumentEmbedder, _Lock | None]:
    """The configured embedder, once the index is known to hold its vectors (or none). With `hold`,
    a connection keeps the shared model lock so no reindex swaps vectors under this process."""
    from storage import embedding_index

    embedder, db = rt.embedder, rt.database
    with db.connection() as conn:
        embedding_index.check_model(conn, embedder.identity, embedder.dimension)
    return embedder, (embedding_index.hold(db.uri) if hold else None)


def _user_id(db: Database, args: argparse.Namespace) -> int:
    """The command's user: a command-line user (created on first use, never a web account's name),
    or with --web-account the existing web account of that name (storage/users.py)."""
    from storage.users import get_or_create_user

    with db.connection() as conn:
        return get_or_create_user(conn, args.user, web_account=args.web_account)


def _count(least: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be at least {least}")
        return value

    return parse


_positive, _non_negative = _count(1), _count(0)


def _link_hours(text: str) -> int:
    from storage.invites import MAX_HOURS

    value = _positive(text)
    if value > MAX_HOURS:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_HOURS}")
    return value


def _days(text: str) -> int:
    from api.text import MAX

    value = _positive(text)
    if value > MAX["key_days"]:
        raise argparse.ArgumentTypeError(f"must be at most {MAX['key_days']}")
    return value


def _user_arguments(p: argparse.ArgumentParser, default_user: str) -> None:
    p.add_argument("--user", default=default_user, help=f"the command-line user (default {default_user!r}); "
                   "never a web account unless --web-account is given")
    p.add_argument("--web-account", action="store_true",
                   help="act as the existing web account named by --user (its documents, its questions)")


def _workspace_argument(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--workspace", metavar="NAME", default=None,
                   help=f"{what} (one of yours by name: thotqen workspace list)")


class UnknownWorkspace(LookupError):
    """--workspace or a workspace command named none of the user's workspaces."""


def _workspace_id(db: Database, user_id: int, name: str | None) -> int | None:
    """The id of the user's workspace called `name` (None for None); UnknownWorkspace otherwise."""
    if name is None:
        return None
    from storage import workspaces

    with db.connection() as conn:
        found = workspaces.find_by_name(conn, user_id=user_id, name=name)
    if found is None:
        raise UnknownWorkspace(f"you are in no workspace named {name!r} (see: thotqen workspace list)")
    return int(found["id"])


def _owners(db: Database, user_id: int, workspace_id: int | None) -> list[int]:
    """The owners a read covers now: the user's own and their workspaces', or the one workspace."""
    from storage import workspaces

    with db.connection() as conn:
        return workspaces.spaces(conn, user_id, workspace_id)


# ---------------------------------------------------------------- ingest


def cmd_ingest(args: argparse.Namespace, rt: Runtime) -> int:
    from tqdm import tqdm

    from ingestion.errors import IngestError
    from ingestion.pipeline import make_prefetcher, run_job, submit_document
    from storage import documents, jobs, workspaces

    settings, db = rt.settings, rt.database
    user_id = _user_id(db, args)
    workspace_id = _workspace_id(db, user_id, args.workspace)
    owner_id = user_id if workspace_id is None else workspace_id  # where the documents go
    with db.connection() as conn:
        if workspace_id is not None:  # refused before any file is read (and again as each is stored)
            workspaces.need(conn, user_id, workspace_id, workspaces.WRITE)
        jobs.recover_interrupted(conn, max_attempts=settings.jobs.max_attempts)
    embedder = lock = None
    prefetcher = None  # parses the next file while this one embeds
    failures = 0
    for n, file_arg in enumerate(args.files):
        path = Path(file_arg)
        started = time.perf_counter()
        line: dict[str, Any] = {"name": path.name, "document_id": None, "pages": 0, "parents": 0,
                                "children": 0, "seconds": 0.0, "status": "failed"}
        try:
            if not path.is_file():
                raise IngestError(f"no such file: {file_arg}")
            submission = submit_document(db, settings, owner_id=owner_id, name=path.name, data=path.read_bytes(),
                                         uploaded_by=user_id)
            line["document_id"] = str(submission.document_id)
            if submission.reused:
                with db.connection() as conn:
                    doc = documents.get_document(conn, owner_id=owner_id, document_id=submission.document_id)
                if doc is None:
                    raise IngestError("the identical document it reuses was deleted meanwhile; ingest it again")
                line.update(pages=doc["pages"], parents=doc["parents"], children=doc["children"],
                            status="reused")
            else:
                if embedder is None:
                    embedder, lock = _embedder(rt, hold=True)
                prefetcher = prefetcher or make_prefetcher(settings)
                prepared = prefetcher.take(path, submission.content_hash)
                following = Path(args.files[n + 1]) if n + 1 < len(args.files) else None
                if following is not None and following.is_file():
                    prefetcher.start(following)
                with tqdm(total=100, desc=path.name[:28], unit="%", file=sys.stderr, leave=False,
                          bar_format="{desc}: {percentage:3.0f}%|{bar}| {postfix}") as bar:

                    def progress(stage: str, percent: float, bar: tqdm = bar) -> None:
                        bar.n = percent
                        bar.set_postfix_str(stage, refresh=True)

                    assert submission.job_id is not None  # a new or redone document has its job
                    outcome = run_job(db, settings, embedder, submission.job_id, progress, prepared)
                line.update(pages=outcome.pages, parents=outcome.parents, children=outcome.children,
                            status=outcome.status)
                if outcome.error:
                    line["error"] = outcome.error
        except IngestError as exc:
            line["error"] = str(exc)
        except OSError as exc:
            line["error"] = f"cannot read the file: {exc.strerror or exc}"
        line["seconds"] = round(time.perf_counter() - started, 2)
        if line["status"] == "failed":
            failures += 1
            log.error("%s: %s", path.name, line.get("error"))
        _print_json(line)
    if prefetcher is not None:
        prefetcher.close()
    if lock is not None:
        lock.close()
    return 1 if failures else 0


# ---------------------------------------------------------------- search


def _scope(db: Database, owner_id: int | list[int], args: argparse.Namespace) -> list[str] | None:
    """The documents --document or --collection names ([] for all), or None after saying why not:
    a collection is read now, so a document added to it since is searched too."""
    if not args.collection:
        return list(args.document or [])
    if args.document:
        print("error: give --document or --collection, not both", file=sys.stderr)
        return None
    from storage import collections

    with db.connection() as conn:
        found = collections.find_by_name(conn, owner_id=owner_id, name=args.collection)
        members = collections.member_ids(conn, owner_id=owner_id, collection_id=found["id"]) if found else []
    if found is None:
        print(f"error: no collection named {args.collection!r} (see: thotqen collection list)", file=sys.stderr)
        return None
    if not members:
        print(f"error: the collection {args.collection!r} has no documents; add some with: thotqen collection add "
              f"{shlex.quote(args.collection)} ID ...", file=sys.stderr)
        return None
    return members


def _filter_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--company", default="", help="only documents whose cover names this company (part of its name)")
    p.add_argument("--form", default="", help="only documents of this form: 10-K, 10-Q, 8-K, earnings release")
    p.add_argument("--period", default="", help="only documents of this period: FY2022, fiscal 2022, Q2 2023, 2023")


def cmd_search(args: argparse.Namespace, rt: Runtime) -> int:
    from storage.document_filter import DocumentFilter
    from storage.search import SearchParams, search

    settings, db = rt.settings, rt.database
    user_id = _user_id(db, args)
    owners = _owners(db, user_id, _workspace_id(db, user_id, args.workspace))
    scope = _scope(db, owners, args)
    if scope is None:
        return 2
    embedding = None
    if args.mode != "sparse":
        embedding = _embedder(rt)[0].embed_query(args.query)
    params = SearchParams.from_tunables(settings, k=args.k, mode=args.mode)
    with db.connection() as conn:
        hits = search(conn, owner_id=owners, query_text=args.query, query_embedding=embedding, params=params,
                      document_ids=scope or None, where=DocumentFilter(args.company, args.form, args.period))
    if args.json:
        _print_json({"hits": [
            {"document_id": str(h.document_id), "name": h.document_name, "page": h.page, "page_label": h.page_label,
             "ocr": h.ocr, "text": h.parent_text,
             "score": h.score, "dense_rank": h.dense_rank, "sparse_rank": h.sparse_rank,
             "heading_rank": h.heading_rank}
            for h in hits
        ]})
    else:
        if not hits:
            print("no matches")
        for n, h in enumerate(hits, 1):
            snippet = " ".join(h.child_text.split())[:200]
            where = h.page_label + (" (OCR)" if h.ocr else "")
            print(f"[{n}] {h.document_name}, {where}  score={h.score:.4f}  dense={h.dense_rank} "
                  f"sparse={h.sparse_rank} heading={h.heading_rank}\n    {snippet}")
    return 0


# ---------------------------------------------------------------- ask


def _say_which_local_model(settings: Settings) -> None:
    """On stderr: whether this question uses a kept-alive local model or loads its own."""
    from providers.llm.links import build_specs

    if not any(spec.local for spec in build_specs(settings)[0]):  # LOCAL_LLM=false leaves it out
        return
    from providers.local_model import ModelUnavailable, kept_alive_server

    try:
        kept = kept_alive_server(settings)
    except ModelUnavailable:
        return  # the chain reports it when (and if) it reaches the local link
    if kept is not None:
        print(f"using the local model kept alive by `thotqen model-server` (pid {kept.pid})", file=sys.stderr)
    else:
        print("the local model loads for this question alone; `thotqen model-server` in another terminal keeps "
              "it loaded (and its prompt cache warm) between questions", file=sys.stderr)


def cmd_ask(args: argparse.Namespace, rt: Runtime) -> int:
    from graph.stream import run_config, run_graph

    settings, db = rt.settings, rt.database
    _embedder(rt)  # the graph embeds the question with the same, checked model
    owner_id = _user_id(db, args)
    workspace_id = _workspace_id(db, owner_id, args.workspace)
    scope = _scope(db, _owners(db, owner_id, workspace_id), args)
    if scope is None:
        return 2
    _say_which_local_model(settings)
    inputs: InputState = {"question": args.question}
    if scope:
        inputs["document_ids"] = scope
    if company := args.company.strip():
        inputs["company"] = company
    if form := args.form.strip():
        inputs["form"] = form
    if period := args.period.strip():
        inputs["period"] = period
    config = run_config(owner_id=owner_id, user=args.user, run_name="thotqen ask", workspace_id=workspace_id)
    streamed: list[str] = []
    outcome = None
    for kind, data in run_graph(inputs, config, rt):
        if kind == "done":
            outcome = data
        elif args.json:
            continue
        elif kind == "token":
            sys.stdout.write(data)
            sys.stdout.flush()
            streamed.append(data)
        elif kind == "reset":
            sys.stdout.write(f"\n[{data} failed mid-answer; another provider starts over]\n")
            streamed.clear()
    assert outcome is not None
    if args.json:
        _print_json(outcome.summary())
        return 0
    if streamed:
        print()
        # what streamed is the model's raw text; citation numbers it may not use are removed after
        if outcome.answer.strip() != "".join(streamed).strip():
            print(f"\nAnswer (checked):\n{outcome.answer}")
    else:
        print(outcome.answer)
    if outcome.citations:
        print("\nSources:")
        for c in outcome.citations:
            label = (c.get("page_label") or f"page {c['page']}") + (" (OCR)" if c.get("ocr") else "")
            where = c["url"] or f"{c['name']}, {label}"
            mark = "*" if c["n"] in outcome.cited else " "
            print(f"{mark}[{c['n']}] {where}")
            for line in c.get("evidence") or []:
                where = f"  ({line['context']})" if line.get("context") else ""
                print(f"      “{line['text']}”{where}")
    if outcome.verification and outcome.verification.get("figures"):
        checked = outcome.verification["figures"]
        kept = [f for f in checked if f.get("action") != "dropped"]
        print(f"\nFigures checked: {len(kept)} kept of {len(checked)}"
              + ("" if outcome.verification.get("verified") else " (some replaced or dropped)"))
    return 0


# ---------------------------------------------------------------- feedback


def cmd_feedback_export(args: argparse.Namespace, rt: Runtime) -> int:
    """Users' verdicts on answers as JSONL (one case a line: question, answer, citations, rating,
    note), so real questions and what people said of their answers become evaluation cases."""
    from storage import feedback
    from storage.users import find_user

    with rt.database.connection() as conn:
        owner_id = None
        if args.user:
            owner_id = find_user(conn, args.user)
            if owner_id is None:
                print(f"error: no user named {args.user!r}", file=sys.stderr)
                return 2
        out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout  # noqa: SIM115
        try:
            count = 0
            for row in feedback.export(conn, owner_id=owner_id):
                if args.rating and row["rating"] != args.rating:
                    continue
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
                count += 1
        finally:
            if out is not sys.stdout:
                out.close()
    print(f"{count} verdict(s) exported", file=sys.stderr)
    return 0


# ---------------------------------------------------------------- collections


def cmd_collection(args: argparse.Namespace, rt: Runtime) -> int:
    """`thotqen collection create|add|remove|list|delete`: named groups of your documents, which
    `ask --collection` and `search --collection` (and a chat over one) search as they are then."""
    from api.text import MAX
    from storage import collections
    from storage.chats import owned_document_ids

    db = rt.database
    owner_id = _user_id(db, args)
    name = (args.name or "").strip()
    if args.name is not None and not 1 <= len(name) <= MAX["collection_name"]:
        print(f"error: a collection's name has 1 to {MAX['collection_name']} characters", file=sys.stderr)
        return 2
    with db.connection() as conn, conn.transaction():
        if args.collection_command == "list" and not name:
            page = collections.list_collections(conn, owner_id=owner_id, limit=MAX["collections"])
            if args.json:
                _print_json({"collections": page})
            for c in [] if args.json else page:
                print(f"{c['id']}  {c['document_count']:>4} documents  {c['name']}")
            if not page and not args.json:
                print("no collections; make one with: thotqen collection create NAME [--document ID ...]")
            return 0
        documents = list(getattr(args, "ids", None) or [])
        owned = owned_document_ids(conn, owner_id=owner_id, document_ids=documents)
        if len(set(owned)) != len(set(documents)):
            missing = sorted(set(documents) - {str(d) for d in owned})
            print(f"error: no such document: {', '.join(missing)}", file=sys.stderr)
            return 2
        found: dict[str, Any] | None
        if args.collection_command == "create":
            if collections.count_collections(conn, owner_id=owner_id) >= MAX["collections"]:
                print(f"error: you have {MAX['collections']} collections, the most one user may have", file=sys.stderr)
                return 2
            try:
                found = collections.create_collection(conn, owner_id=owner_id, name=name)
            except collections.NameTaken:
                print(f"error: you already have a collection named {name!r}", file=sys.stderr)
                return 2
        else:
            found = collections.find_by_name(conn, owner_id=owner_id, name=name)
            if found is None:
                print(f"error: no collection named {name!r} (see: thotqen collection list)", file=sys.stderr)
                return 2
        if args.collection_command == "delete":
            collections.delete_collection(conn, owner_id=owner_id, collection_id=found["id"], actor_id=owner_id)
            print(f"deleted the collection {name!r} (its documents stay)")
            return 0
        if args.collection_command == "remove":
            for d in owned:
                collections.remove_document(conn, owner_id=owner_id, collection_id=found["id"], document_id=d)
        elif owned:
            collections.add_documents(conn, owner_id=owner_id, collection_id=found["id"], document_ids=owned)
        members = collections.members(conn, owner_id=owner_id, collection_id=found["id"])
    if args.json:
        _print_json({"collection": {"id": found["id"], "name": found["name"]}, "documents": members})
        return 0
    print(f"{found['name']}: {len(members)} document(s)")
    for m in members:
        print(f"{m['id']}  {m['status']:<10} {m['name']}")
    return 0


# ---------------------------------------------------------------- workspaces


def cmd_workspace(args: argparse.Namespace, rt: Runtime) -> int:
    """`thotqen workspace create|list|members|invite|join|role|remove|transfer|leave|delete|audit`: the same rules as
    the API's (storage/workspaces.py); a refusal is exit code 2 with the reason."""
    from storage import workspaces

    db, command = rt.database, args.workspace_command
    user_id = _user_id(db, args)
    out: dict[str, Any]
    if command == "create":
        try:
            name = workspaces.check_name(args.name)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        with db.connection() as conn:
            made = workspaces.create(conn, user_id=user_id, name=name)
        out = {"workspace": _workspace_out(made)}
        text = f"created the workspace {made['name']!r} (id {made['id']}); you are its owner"
    elif command == "list":
        with db.connection() as conn:
            mine = [_workspace_out(w) for w in workspaces.list_mine(conn, user_id=user_id)]
        out = {"workspaces": mine}
        text = "\n".join(f"{w['id']:>6}  {w['role']:<7} {w['members']:>3} members {w['documents']:>5} documents  "
                         f"{w['name']}" for w in mine) or "no workspaces; make one with: thotqen workspace create NAME"
    elif command == "audit":
        return _workspace_audit(args, db, user_id)
    elif command == "join":
        return _workspace_join(args, db, user_id)
    elif command == "invite" and args.link:
        return _workspace_link(args, db, user_id)
    else:
        workspace_id = _workspace_id(db, user_id, args.name)
        assert workspace_id is not None
        if command == "invite" and not args.member:
            print("error: name the USER to add, or make a one-time link with --link", file=sys.stderr)
            return 2
        with db.connection() as conn:
            if command == "invite":
                workspaces.add_member(conn, user_id=user_id, workspace_id=workspace_id, username=args.member,
                                      role=args.role)
            elif command == "role":
                workspaces.set_role(conn, user_id=user_id, workspace_id=workspace_id, username=args.member,
                                    role=args.role)
            elif command == "remove":
                workspaces.remove_member(conn, user_id=user_id, workspace_id=workspace_id, username=args.member)
            elif command == "transfer":
                workspaces.transfer(conn, user_id=user_id, workspace_id=workspace_id, username=args.member)
            elif command == "leave":
                workspaces.leave(conn, user_id=user_id, workspace_id=workspace_id)
            elif command == "delete":
                if not args.yes:
                    print(f"error: deleting {args.name!r} deletes all its documents and collections for good; "
                          "add --yes to confirm", file=sys.stderr)
                    return 2
                files = workspaces.delete(conn, user_id=user_id, workspace_id=workspace_id)
                for content_hash, fmt in files:
                    rt.files.delete(workspace_id, content_hash, fmt)
            members = ([] if command in ("leave", "delete")
                       else workspaces.members(conn, user_id=user_id, workspace_id=workspace_id))
        out = {"workspace": {"id": workspace_id, "name": args.name},
               "members": [{"username": m["username"], "role": m["role"]} for m in members]}
        done = {"invite": f"added {getattr(args, 'member', '')!r}", "role": f"changed {getattr(args, 'member', '')!r}",
                "remove": f"removed {getattr(args, 'member', '')!r}", "leave": "you left", "delete": "deleted",
                "transfer": f"{getattr(args, 'member', '')!r} is now an owner and you an admin of",
                "members": "members of"}[command]
        text = "\n".join([f"{done} {args.name!r}" if command != "members" else f"members of {args.name!r}:",
                          *(f"  {m['role']:<7} {m['username']}" for m in members)])
    if args.json:
        _print_json(out)
    else:
        print(text)
    return 0


def _workspace_link(args: argparse.Namespace, db: Database, user_id: int) -> int:
    """A one-time invitation link (admins and owners, at most their own role; storage/invites.py):
    the token is shown this once; whoever opens /#/join/TOKEN on the web app, or runs `thotqen
    workspace join TOKEN`, joins at its role."""
    from storage import invites

    if args.member:
        print("error: a link is for whoever opens it: give --link or a USER, not both", file=sys.stderr)
        return 2
    workspace_id = _workspace_id(db, user_id, args.name)
    assert workspace_id is not None
    try:
        with db.connection() as conn:
            token, made = invites.create(conn, user_id=user_id, workspace_id=workspace_id, role=args.role,
                                         hours=args.hours)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    link = f"/#/join/{token}"
    if args.json:
        _print_json({"workspace": {"id": workspace_id, "name": args.name}, "id": made["id"], "role": made["role"],
                     "expires_at": made["expires_at"].isoformat(), "token": token, "link": link})
    else:
        print(f"a one-time link into {args.name!r} as {made['role']}, until {made['expires_at']:%Y-%m-%d %H:%M %Z}"
              f" (shown this once):\n  {link}   (after the server's address)\n"
              f"or on this machine: thotqen workspace join {token} --user USER")
    return 0


def _workspace_join(args: argparse.Namespace, db: Database, user_id: int) -> int:
    """Join a workspace with a one-time link's token (the whole link is taken too), spending it."""
    from storage import invites

    token = args.token.rsplit("/", 1)[-1]
    try:
        with db.connection() as conn:
            joined = invites.accept(conn, user_id=user_id, token=token)
    except invites.NoSuchInvite as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        _print_json({"workspace": _workspace_out(joined)})
    else:
        print(f"joined {joined['name']!r} as {joined['role']}")
    return 0


def _workspace_audit(args: argparse.Namespace, db: Database, user_id: int) -> int:
    """The workspace's audit log, the newest first (admins and owners, as in the API)."""
    from storage import audit, workspaces

    workspace_id = _workspace_id(db, user_id, args.name)
    assert workspace_id is not None
    with db.connection() as conn:
        workspaces.need(conn, user_id, workspace_id, workspaces.MANAGE)
        entries = audit.entries(conn, workspace_id=workspace_id, limit=args.limit)
    if args.json:
        _print_json({"workspace": {"id": workspace_id, "name": args.name},
                     "entries": [{**e, "at": e["at"].isoformat()} for e in entries]})
        return 0
    for e in entries:
        about = f" {e['subject']}" if e["subject"] else ""
        detail = " ".join(f"{k}={v}" for k, v in sorted(e["detail"].items()))
        print(f"{e['at']:%Y-%m-%d %H:%M}  {e['actor']:<16} {e['action']}{about}  {detail}".rstrip())
    return 0


def _workspace_out(w: dict[str, Any]) -> dict[str, Any]:
    return {k: w[k] for k in ("id", "name", "role", "members", "documents")}


# ---------------------------------------------------------------- documents


def cmd_documents(args: argparse.Namespace, rt: Runtime) -> int:
    from storage.documents import PLACE_COLUMNS, list_documents

    db = rt.database
    user_id = _user_id(db, args)
    owners = _owners(db, user_id, _workspace_id(db, user_id, args.workspace))
    with db.connection() as conn:
        docs = list_documents(conn, owner_id=owners, limit=args.limit, offset=args.offset)
    for d in docs:  # a personal document is shown as before workspaces; a workspace's says whose
        if d["workspace"] is None:
            for key in PLACE_COLUMNS:
                del d[key]
    if args.json:
        _print_json({"documents": docs})
    else:
        if not docs:
            print("no documents; add some with: thotqen ingest FILE ...")
        for d in docs:
            extra = f"  error: {d['error']}" if d["error"] else ""
            ocr = f" ({d['ocr_pages']} OCR)" if d["ocr_pages"] else ""
            said = " · ".join(str(d[k]) for k in ("company", "form", "period") if d[k])
            if d["status"] == "ready" and not d["company"]:  # set it with: thotqen document ID --company ...
                said = " · ".join(["unknown", *(str(d[k]) for k in ("form", "period") if d[k])])
            where = f"  (workspace {d['workspace']}, uploaded by {d['uploaded_by']})" if d.get("workspace") else ""
            print(f"{d['id']}  {d['status']:<10} {d['format']:<8} {d['pages'] or 0:>4} units{ocr} {d['children']:>6} "
                  f"chunks  {d['name']}{f'  [{said}]' if said else ''}{extra}{where}")
    return 0


def cmd_document(args: argparse.Namespace, rt: Runtime) -> int:
    """`thotqen document ID --company ... --form ... --period ...`: say what a document is."""
    from storage.document_filter import owner_values
    from storage.documents import get_document, set_owner_context

    try:
        values = owner_values(args.company, args.form, args.period)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    db = rt.database
    owner_id = _user_id(db, args.user)
    with db.connection() as conn, conn.transaction():
        if not set_owner_context(conn, owner_id=owner_id, document_id=args.id, **values):
            print(f"error: no such document {args.id}", file=sys.stderr)
            return 1
        doc = get_document(conn, owner_id=owner_id, document_id=args.id)
    assert doc is not None
    _print_json({k: doc[k] for k in ("id", "name", "company", "form", "period", "period_end")})
    return 0


# ---------------------------------------------------------------- reindex


def _reindex_context(rt: Runtime) -> int:
    """`thotqen reindex --context`: documents stored before contextual headings get them."""
    from tqdm import tqdm

    from ingestion.recontext import recontext

    embedder, lock = _embedder(rt, hold=True)  # the index's own model, and no swap meanwhile
    bar = tqdm(desc="documents", unit="doc", file=sys.stderr)

    def progress(_owner: str, done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()

    try:
        outcome = recontext(rt.database, embedder, progress)
    finally:
        bar.close()
        if lock is not None:
            lock.close()
    _print_json({"documents": outcome.documents, "changed": outcome.changed, "chunks": outcome.chunks})
    return 0


def _reindex_tables(rt: Runtime) -> int:
    """`thotqen reindex --tables`: documents stored before tables were read get their cells."""
    from tqdm import tqdm

    from ingestion.retable import retable

    bar = tqdm(desc="documents", unit="doc", file=sys.stderr)

    def progress(_owner: str, done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()

    try:
        outcome = retable(rt.database, rt.settings, progress)
    finally:
        bar.close()
    _print_json({"documents": outcome.documents, "cells": outcome.cells, "failed": outcome.failed})
    return 1 if outcome.failed else 0


def cmd_reindex(args: argparse.Namespace, rt: Runtime) -> int:
    """Re-embed every stored chunk with the configured model; resumable (run it again after a stop)."""
    from tqdm import tqdm

    from ingestion.reindex import reindex
    from storage import embedding_index

    db = rt.database
    if args.context:
        return _reindex_context(rt)
    if args.tables:
        return _reindex_tables(rt)
    embedder = rt.embedder
    with db.connection() as conn:
        before = embedding_index.state(conn)
    print(f"re-embedding with {embedder.identity} (the index holds {before.model or 'no recorded model'}, "
          f"{before.documents} documents, {before.chunks} chunks)", file=sys.stderr)
    bars: dict[str, Any] = {}

    def progress(owner: str, docs_done: int, docs_total: int, done: int, total: int) -> None:
        bar = bars.get(owner)
        if bar is None:
            for other in bars.values():
                other.close()
            bar = bars[owner] = tqdm(total=total, desc=f"owner {owner}"[:28], unit="chunk", file=sys.stderr)
        bar.n = done
        bar.set_postfix_str(f"{docs_done}/{docs_total} documents", refresh=True)

    try:
        outcome = reindex(db, embedder, progress)
    except embedding_index.IndexBusy as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_MODEL_MISMATCH
    finally:
        for bar in bars.values():
            bar.close()
    _print_json({"model": outcome.model, "owners": outcome.owners, "documents": outcome.documents,
                 "chunks": outcome.chunks, "index_chunks": outcome.swapped, "already_current": outcome.already})
    return 0


# ---------------------------------------------------------------- doctor


def cmd_doctor(args: argparse.Namespace, rt: Runtime) -> int:
    from doctor import run_checks

    return run_checks(rt)


# ---------------------------------------------------------------- serve


def cmd_serve(args: argparse.Namespace, rt: Runtime) -> int:
    import uvicorn

    shown = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
    if rt.settings.observability.log_format == "text":  # a JSON log holds JSON lines only (uvicorn says where)
        print(f"Thotqen: open http://{shown}:{args.port}/ in a browser (API reference: /docs)", file=sys.stderr,
              flush=True)
    # Several worker processes: one process's Python tops out at one core (evals/results/loadtest.md).
    from settings import uvicorn_options

    if args.workers > 1:
        share_metrics(rt.settings)
    # uvicorn kills a child that has not answered its supervisor's ping within the health-check timeout
    # (5 s by default); children loading their models on busy cores took longer, so each was killed and
    # restarted, over and over, and none ever served
    # every server process logs through one configuration, uvicorn's loggers included (providers/logs.py)
    config = logs.dict_config(rt.settings, default_level="DEBUG" if args.verbose else "WARNING")
    uvicorn.run("server:app", host=args.host, port=args.port, workers=args.workers, log_config=config,
                log_level=(rt.settings.observability.log_level or "INFO").lower(), timeout_worker_healthcheck=120,
                **uvicorn_options(rt.settings))
    return 0


def share_metrics(settings: Settings) -> None:
    """Several server processes add up their Prometheus samples in one directory, which prometheus-client
    reads from the environment when each child loads it: PROMETHEUS_MULTIPROC_DIR, else a fresh
    THOTQEN_HOME/prometheus (emptied here: samples of an earlier run would be counted again)."""
    import os
    import shutil

    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return
    folder = settings.observability.prometheus_multiproc_dir or settings.home / "prometheus"
    if settings.observability.prometheus_multiproc_dir is None:
        shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(folder)


def cmd_model_server(args: argparse.Namespace, rt: Runtime) -> int:
    import signal
    import threading

    from providers.local_model import endpoint_file, serve_kept_alive

    settings = rt.settings
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    if args.minutes:  # a lifetime, so a forgotten server frees its gigabyte of memory
        timer = threading.Timer(args.minutes * 60, stop.set)
        timer.daemon = True
        timer.start()

    def ready(address: str) -> None:
        print(f"local model serving on {address} (recorded in {endpoint_file(settings.home)}); "
              "`thotqen ask` uses it. Ctrl-C stops it.", file=sys.stderr)

    serve_kept_alive(settings, stop, ready)
    print("local model server stopped", file=sys.stderr)
    return 0


def cmd_mcp(args: argparse.Namespace, rt: Runtime) -> int:
    """The MCP server on stdin/stdout for one user (api/routes/mcp.py; the HTTP server has it at /mcp)."""
    import anyio

    from api.routes.mcp import run_stdio
    from identity.security import User

    # search and ask embed with the index's own, checked model; a long-lived process holds the model
    # lock, like the server, so no reindex swaps the vectors under it
    _, lock = _embedder(rt, hold=True)
    try:
        anyio.run(run_stdio, rt, User(_user_id(rt.database, args), args.user))
    finally:
        if lock is not None:
            lock.close()
    return 0


# ---------------------------------------------------------------- worker, beat, maintenance, migrate


def cmd_account(args: argparse.Namespace, rt: Runtime) -> int:
    """Create a web account (a password sign-in) as the operator: the only way to make an account
    named in THOTQEN_ADMINS, which web signup refuses. The password is read from stdin (one line), or
    asked for on a terminal."""
    import getpass

    from api.text import MAX
    from identity.security import hash_password
    from storage import accounts

    name = args.name.strip()
    if not 3 <= len(name) <= MAX["username"]:
        print(f"error: a username has 3 to {MAX['username']} characters", file=sys.stderr)
        return 2
    password = (getpass.getpass(f"password for {name}: ") if sys.stdin.isatty()
                else sys.stdin.readline().rstrip("\r\n"))
    if not 8 <= len(password) <= MAX["password"]:
        print(f"error: a password has 8 to {MAX['password']} characters", file=sys.stderr)
        return 2
    with rt.database.connection() as conn:
        user_id = accounts.create_password_user(conn, username=name, password_hash=hash_password(password))
    if user_id is None:
        print(f"error: the name {name!r} is taken", file=sys.stderr)
        return 2
    admin = " (an admin: THOTQEN_ADMINS names it)" if name in rt.settings.admins else ""
    print(f"created the web account {name!r}{admin}")
    return 0


def cmd_keys(args: argparse.Namespace, rt: Runtime) -> int:
    """`thotqen keys create|list|revoke --user NAME`: an existing user's API keys (api/routes/keys.py), for an
    operator provisioning a machine. The key is printed once, by `create`."""
    from api.routes.keys import create_key
    from api.scopes import SCOPES, out
    from api.text import MAX
    from storage import api_keys, workspaces
    from storage.users import find_user

    with rt.database.connection() as conn, conn.transaction():
        user_id = find_user(conn, args.user)
        if user_id is None:
            print(f"error: no user named {args.user!r} (web accounts: thotqen account NAME)", file=sys.stderr)
            return 2
        if args.keys_command == "create":
            name = args.name.strip()
            wanted = [s.strip() for s in args.scopes.split(",") if s.strip()]
            if not 1 <= len(name) <= MAX["key_name"]:
                print(f"error: a key's name has 1 to {MAX['key_name']} characters", file=sys.stderr)
                return 2
            if not wanted or set(wanted) - set(SCOPES):
                print(f"error: --scopes takes a comma-separated list of {', '.join(SCOPES)}", file=sys.stderr)
                return 2
            # bound to a workspace the user is a member of (exit 2 otherwise, like the API's 404)
            workspace_id = None
            if args.workspace:
                found_ws = workspaces.find_by_name(conn, user_id=user_id, name=args.workspace)
                if found_ws is None:
                    raise UnknownWorkspace(f"{args.user!r} is in no workspace named {args.workspace!r}")
                workspace_id = int(found_ws["id"])
            try:
                made = create_key(conn, user_id, name, wanted, args.expires_in_days, workspace_id)
            except ValueError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
            if args.json:
                _print_json(made)
            else:
                print(f"{made['key']}\n(shown once: {made['name']!r}, {made['prefix']}..., "
                      f"scopes {','.join(made['scopes'])}, expires {made['expires_at'] or 'never'}"
                      + (f", the workspace {made['workspace']!r} only" if made["workspace"] else "") + ")")
            return 0
        if args.keys_command == "revoke":
            if not api_keys.delete(conn, user_id=user_id, key_id=args.id):
                print(f"error: {args.user!r} has no API key {args.id!r} (see: thotqen keys list)", file=sys.stderr)
                return 2
            if args.json:
                _print_json({"revoked": args.id})
            else:
                print(f"revoked {args.id}")
            return 0
        found = [out(k) for k in api_keys.list_keys(conn, user_id=user_id)]
    if args.json:
        _print_json({"keys": found})
    for k in [] if args.json else found:
        print(f"{k['id']}  {k['prefix']}...  {','.join(k['scopes']):<15} last used {k['last_used_at'] or 'never'}"
              f"  expires {k['expires_at'] or 'never'}  {k['name']}")
    if not found and not args.json:
        print(f"no API keys; make one with: thotqen keys create --user {args.user} NAME")
    return 0


def cmd_migrate(args: argparse.Namespace, rt: Runtime) -> int:
    """Apply the migrations and exit (compose's one-shot `migrate` service runs this before the rest)."""
    import psycopg

    from storage.db import connect_kwargs, migrate, resolve_uri

    settings = rt.settings
    uri, _mode = resolve_uri(settings)
    with psycopg.connect(uri, **connect_kwargs(settings, uri)) as conn:
        applied = migrate(conn)
    print(f"applied: {', '.join(applied)}" if applied else "schema is current")
    return 0


def cmd_worker(args: argparse.Namespace, rt: Runtime) -> int:
    from jobqueue.app import run_worker

    if not rt.settings.celery.broker_url:
        print("error: `thotqen worker` needs CELERY_BROKER_URL (amqp://user:pass@host:5672// for RabbitMQ, "
              "redis://host:6379/0 for Redis); without it `thotqen serve` ingests in process", file=sys.stderr)
        return 2
    run_worker(rt, concurrency=args.concurrency, beat=args.beat, loglevel=args.loglevel)
    return 0


def cmd_beat(args: argparse.Namespace, rt: Runtime) -> int:
    from jobqueue.app import run_beat

    if not rt.settings.celery.broker_url:
        print("error: `thotqen beat` needs CELERY_BROKER_URL; without a broker `thotqen serve` runs the "
              "periodic upkeep itself", file=sys.stderr)
        return 2
    run_beat(rt.settings, loglevel=args.loglevel)
    return 0


def cmd_maintenance(args: argparse.Namespace, rt: Runtime) -> int:
    from jobqueue.maintenance import purge, sweep_jobs

    settings, db = rt.settings, rt.database
    publish = None
    if settings.celery.broker_url:
        from jobqueue.app import publish as send

        app = rt.celery_app

        def publish(job_id: uuid.UUID) -> None:
            send(app, job_id, timeout_s=settings.celery.publish_timeout_s, db=db)

    out = {"deleted": purge(db, settings), "jobs": sweep_jobs(db, settings, publish=publish)}
    if args.json:
        _print_json(out)
    else:
        print(f"deleted: {', '.join(f'{n} {t}' for t, n in out['deleted'].items())}; jobs: "
              f"{', '.join(f'{n} {k}' for k, n in out['jobs'].items())}")
    return 0


def _document_id(value: str) -> str:
    """argparse type for --document: a bad id is a usage error (exit code 2) before any work."""
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a document id (a UUID)") from None


def build_parser(settings: Settings) -> argparse.ArgumentParser:
    from api.text import MAX

    default_user = settings.users.default_user
    parser = argparse.ArgumentParser(prog="thotqen", description="Corrective-RAG over your documents.")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("ingest", help="ingest files: PDF, DOCX, PPTX, XLSX, HTML, Markdown, text "
                                      "(one JSON line per file on stdout)")
    p.add_argument("files", nargs="+", metavar="FILE")
    _user_arguments(p, default_user)
    _workspace_argument(p, "into this workspace (editor or above); default: your own space")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("search", help="hybrid search over your documents")
    p.add_argument("query", metavar="QUERY")
    _user_arguments(p, default_user)
    p.add_argument("--document", action="append", metavar="ID", type=_document_id,
                   help="limit to this document (repeatable)")
    p.add_argument("--collection", metavar="NAME", help="limit to this collection's documents")
    p.add_argument("--k", type=int, default=settings.search_k, choices=range(1, MAX["search_k"] + 1),
                   metavar="N")
    p.add_argument("--mode", choices=["hybrid", "dense", "sparse"], default="hybrid")
    _filter_arguments(p)
    p.add_argument("--json", action="store_true")
    _workspace_argument(p, "only this workspace's documents; default: everything you may read")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("ask", help="ask a question; the answer cites document pages")
    p.add_argument("question", metavar="QUESTION")
    _user_arguments(p, default_user)
    p.add_argument("--document", action="append", metavar="ID", type=_document_id,
                   help="limit to this document (repeatable)")
    p.add_argument("--collection", metavar="NAME", help="limit to this collection's documents (as they are now)")
    _filter_arguments(p)
    p.add_argument("--json", action="store_true")
    _workspace_argument(p, "only this workspace's documents; default: everything you may read")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("collection", help="named groups of your documents, for ask/search --collection")
    csub = p.add_subparsers(dest="collection_command", required=True)
    for command, text in (("create", "make a collection (optionally with documents)"),
                          ("add", "add documents to a collection"), ("remove", "take documents out of a collection"),
                          ("list", "your collections, or one collection's documents"),
                          ("delete", "delete a collection (its documents stay)")):
        c = csub.add_parser(command, help=text)
        c.add_argument("name", metavar="NAME", nargs="?" if command == "list" else None)
        if command in ("create", "add", "remove"):
            c.add_argument("ids", metavar="ID", nargs="*" if command == "create" else "+", type=_document_id)
        _user_arguments(c, default_user)
        c.add_argument("--json", action="store_true")
        c.set_defaults(func=cmd_collection)

    p = sub.add_parser("documents", help="list your documents")
    _user_arguments(p, default_user)
    p.add_argument("--json", action="store_true")
    # the operator's own list, whole by default; a page of it like GET /api/documents' when asked
    p.add_argument("--limit", type=_positive, default=None, help="at most this many documents (default: all)")
    p.add_argument("--offset", type=_non_negative, default=0, help="documents to skip, the oldest first")
    _workspace_argument(p, "only this workspace's documents; default: everything you may read")
    p.set_defaults(func=cmd_documents)

    p = sub.add_parser("workspace", help="workspaces: documents and collections shared with other users, by role")
    wsub = p.add_subparsers(dest="workspace_command", required=True)
    roles = ["owner", "admin", "editor", "viewer"]
    for command, names, text in (
            ("create", ["name"], "make a workspace; you are its owner"),
            ("list", [], "your workspaces and your role in each"),
            ("members", ["name"], "a workspace's members and their roles"),
            ("invite", ["name", "member"], "add a user to a workspace, or make a one-time link with --link "
                                           "(admins and owners; no role above yours)"),
            ("join", ["token"], "join a workspace with a one-time link's token (from invite --link)"),
            ("role", ["name", "member", "role"], "change a member's role (admins and owners; no role above yours)"),
            ("remove", ["name", "member"], "remove a member (admins and owners); they lose access at once"),
            ("transfer", ["name", "member"], "hand a workspace over (owners): USER becomes an owner, you an admin"),
            ("leave", ["name"], "leave a workspace (its last owner cannot)"),
            ("delete", ["name"], "delete a workspace with all its documents and collections (owners)"),
            ("audit", ["name"], "who changed the membership and who deleted what, the newest first (admins "
                                "and owners)")):
        w = wsub.add_parser(command, help=text)
        for arg in names:
            if arg == "role":
                w.add_argument("role", choices=roles)
            elif command == "invite" and arg == "member":
                w.add_argument(arg, metavar="USER", nargs="?", help="the user to add (not with --link)")
            else:
                w.add_argument(arg, metavar=arg.upper() if arg != "member" else "USER")
        if command == "invite":
            w.add_argument("--role", choices=roles, required=True)
            w.add_argument("--link", action="store_true", help="instead of a USER: a one-time link, shown once")
            w.add_argument("--hours", type=_link_hours, default=72, metavar="N",
                           help="with --link: it expires in N hours, 1 to 720 (default 72)")
        if command == "delete":
            w.add_argument("--yes", action="store_true", help="confirm: everything in it is deleted for good")
        if command == "audit":
            w.add_argument("--limit", type=int, choices=range(1, 1001), default=50, metavar="N",
                           help="entries to show, 1 to 1000 (default 50)")
        _user_arguments(w, default_user)
        w.add_argument("--json", action="store_true")
        w.set_defaults(func=cmd_workspace)

    p = sub.add_parser("document", help="say what one of your documents is (its company, form or period), where "
                                        "it was not read (company unknown) or read wrong; kept on reindex --context")
    p.add_argument("id", type=_document_id)
    p.add_argument("--user", default=default_user)
    p.add_argument("--company")
    p.add_argument("--form", help="10-K, 10-Q, 8-K, earnings release")
    p.add_argument("--period", help="FY2022, Q2 FY2024 or a date (2022-07-01)")
    p.set_defaults(func=cmd_document)

    p = sub.add_parser("reindex", help="re-embed every document with the configured embedding model "
                                       "(resumable; needed after changing the model)")
    p.add_argument("--context", action="store_true",
                   help="instead: read each document's company, form and period again from its stored text and put "
                        "them at the front of its chunks' headings (for documents ingested before that existed)")
    p.add_argument("--tables", action="store_true",
                   help="instead: parse each stored file again and store its tables' cells (for documents ingested "
                        "before tables were read, or under older table rules); resumable")
    p.set_defaults(func=cmd_reindex)

    p = sub.add_parser("doctor", help="check the database, schema and models; print fixes")
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser("serve", help="run the HTTP server")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--workers", type=int, default=1, help="server processes (each answers on its own core)")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("model-server", help="keep the local model loaded for `thotqen ask` (Ctrl-C stops it)")
    p.add_argument("--minutes", type=float, default=0,
                   help="stop after this many minutes (default: run until stopped)")
    p.set_defaults(func=cmd_model_server)

    p = sub.add_parser("mcp", help="serve MCP (Model Context Protocol) on stdin/stdout for an agent: search, ask "
                                   "and your documents (the HTTP server has it at /mcp)")
    _user_arguments(p, default_user)
    p.set_defaults(func=cmd_mcp)

    p = sub.add_parser("worker", help="run ingestion jobs from the Celery broker (CELERY_BROKER_URL)")
    p.add_argument("--concurrency", type=int, default=1, help="jobs at once in this process (embedding is "
                   "CPU-bound: scale with more processes or machines instead)")
    p.add_argument("--beat", action="store_true", help="also schedule the periodic upkeep (run one beat in all)")
    p.add_argument("--loglevel", default="INFO")
    p.set_defaults(func=cmd_worker)

    p = sub.add_parser("beat", help="schedule the periodic upkeep on the broker (exactly one per deployment)")
    p.add_argument("--loglevel", default="INFO")
    p.set_defaults(func=cmd_beat)

    p = sub.add_parser("account", help="create a web account (password from stdin): how an admin named in "
                       "THOTQEN_ADMINS gets one, since web signup refuses those names")
    p.add_argument("name", help="the username")
    p.set_defaults(func=cmd_account)

    p = sub.add_parser("keys", help="API keys of a user (Authorization: Bearer <key> on /api, /v1, /mcp, /rag)")
    ksub = p.add_subparsers(dest="keys_command", required=True)
    k = ksub.add_parser("create", help="make a key; printed once")
    k.add_argument("name", metavar="NAME", help="what the key is for")
    k.add_argument("--scopes", default="read,ask,ingest", help="comma-separated: read, ask, ingest (default: all)")
    k.add_argument("--expires-in-days", type=_days, default=None, metavar="DAYS",
                   help=f"1 to {MAX['key_days']} (default: until revoked)")
    k.add_argument("--workspace", metavar="NAME", help="bind the key to this workspace of the user's: it reads "
                                                       "and writes there only (docs/teams.md)")
    k = ksub.add_parser("list", help="a user's keys (prefixes, never the keys)")
    k = ksub.add_parser("revoke", help="revoke a key: the next request with it answers 401")
    k.add_argument("id", metavar="ID")
    for k in ksub.choices.values():
        k.add_argument("--user", required=True, help="the account (web or command-line) the keys belong to")
        k.add_argument("--json", action="store_true")
        k.set_defaults(func=cmd_keys)

    p = sub.add_parser("migrate", help="apply the database migrations and exit")
    p.set_defaults(func=cmd_migrate)

    p = sub.add_parser("feedback", help="users' thumbs up/down on answers")
    fsub = p.add_subparsers(dest="feedback_command", required=True)
    f = fsub.add_parser("export", help="export the verdicts as JSONL, one evaluation case a line")
    f.add_argument("--user", default=None, help="only this user's verdicts (default: everyone's)")
    f.add_argument("--rating", choices=["up", "down"], default=None, help="only these verdicts")
    f.add_argument("--output", "-o", default=None, metavar="FILE", help="write here instead of stdout")
    f.set_defaults(func=cmd_feedback_export)

    p = sub.add_parser("maintenance", help="run retention and abandoned-job recovery once (for cron)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_maintenance)
    return parser


def main(argv: list[str] | None = None) -> int:
    from providers.runtime import configure_process

    configure_process()  # before any command loads torch or llama.cpp
    try:
        settings = Settings()
    except ValueError as exc:  # pydantic's ValidationError: a setting in the environment is malformed
        print(f"error: the settings are not valid:\n{exc}", file=sys.stderr)
        return 2
    args = build_parser(settings).parse_args(argv)
    # LOG_FORMAT and LOG_LEVEL (providers/logs.py); `-v` is DEBUG when LOG_LEVEL is unset
    logs.configure(settings, default_level="DEBUG" if args.verbose else "WARNING")
    try:
        rt = build_runtime(settings)
        try:
            code: int = args.func(args, rt)
            return code
        finally:
            rt.close()
    except KeyboardInterrupt:
        return 130
    except (NotACliUser, NoWebAccount) as exc:  # a usage error: the name is someone else's, or nobody's
        print(f"error: {exc.args[0] if isinstance(exc, NoWebAccount) else exc}", file=sys.stderr)
        return 2
    except (WorkspaceError, UnknownWorkspace) as exc:  # refused: not a member, a role too low, the last owner
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # the last line of defence: a clear message, not a traceback
        log.debug("command failed", exc_info=True)
        print(f"error: {exc}", file=sys.stderr)
        if type(exc).__name__ == "ModelMismatch":  # storage.embedding_index: the fix is in the message
            return EXIT_MODEL_MISMATCH
        print("run `thotqen doctor` to check the setup", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

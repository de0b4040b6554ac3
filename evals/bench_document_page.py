"""A documents page's database time, the old five or six round trips against the one (issue 41).

    python evals/bench_document_page.py [--pages 400] [--burners 0] [--name bench_document_page]

On a fresh embedded database: a person with 20 documents of their own and 20 in a workspace. Each
round asks for the first page (up to 200, as DOCUMENT_PAGE_MAX) of everything they read and of the
workspace alone, each both ways in turn, so a change in the machine's load falls on both alike:

- before: `reading()` (the workspace's role, then member_spaces) and then list_documents under
  scoped(): BEGIN, ENTER, the page, COMMIT, each its own round trip;
- after: storage/documents.py readable_documents, two statements in one pipeline (tenancy.member_read).

Both run on a pooled connection as the route does; the time is from taking the connection to
giving it back. `--burners N` starts N processes that spin on the CPU meanwhile, so each round trip
waits for a core as under the burst (evals/results/burst_issue41_4.md). Writes evals/results/NAME.{json,md}.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evals.common import write_result  # noqa: E402
from evals.scoring import percentile  # noqa: E402


def spin() -> None:
    while True:
        pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=400, help="rounds (each: four pages)")
    parser.add_argument("--burners", type=int, default=0, help="CPU-spinning processes meanwhile")
    parser.add_argument("--name", default="bench_document_page")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="thq-bdp-", dir="/tmp") as home:
        os.environ["THOTQEN_HOME"] = home
        os.environ.pop("DATABASE_URL", None)
        from api.access import reading
        from identity.security import User
        from settings import Settings
        from storage import documents, workspaces
        from storage.db import open_database
        from storage.users import get_or_create_user

        db = open_database(Settings())
        with db.connection() as conn:
            person = get_or_create_user(conn, "bench-person")
            team = int(workspaces.create(conn, user_id=person, name="bench team")["id"])
            for owner in (person, team):
                for i in range(20):
                    documents.create_document(conn, owner_id=owner, name=f"{owner}-{i}.pdf",
                                              content_hash=f"{owner}:{i}", size_bytes=10, uploaded_by=person)
        user = User(id=person, username="bench-person")
        cap = Settings().paging.document_page_max

        def before(workspace_id: int | None) -> int:
            with db.connection() as conn:
                owners = reading(conn, user, workspace_id)
                return len(documents.list_documents(conn, owner_id=owners, limit=cap + 1, offset=0))

        def after(workspace_id: int | None) -> int:
            with db.connection() as conn:
                _owners, rows = documents.readable_documents(conn, user_id=person, workspace_id=workspace_id,
                                                             limit=cap + 1, offset=0)
                return len(rows)

        ways = {"before": before, "after": after}
        times: dict[str, list[float]] = {f"{way} {space}": [] for way in ways for space in ("all", "workspace")}
        for way, fn in ways.items():  # warm: past psycopg's prepare threshold on the pool's connection
            for _ in range(10):
                assert fn(None) == 40 and fn(team) == 20, way
        burners = [multiprocessing.Process(target=spin, daemon=True) for _ in range(args.burners)]
        for b in burners:
            b.start()
        load: list[Any] = [os.getloadavg()]
        try:
            for n in range(args.pages):
                order = list(ways.items()) if n % 2 == 0 else list(reversed(ways.items()))
                for way, fn in order:
                    for space, ws in (("all", None), ("workspace", team)):
                        started = time.perf_counter()
                        fn(ws)
                        times[f"{way} {space}"].append((time.perf_counter() - started) * 1000)
        finally:
            load.append(os.getloadavg())
            for b in burners:
                b.terminate()
                b.join()
            db.close()

    stats = {k: {"p50_ms": percentile(v, 50), "p95_ms": percentile(v, 95),
                 "p99_ms": percentile(v, 99), "mean_ms": round(sum(v) / len(v), 2), "n": len(v)}
             for k, v in times.items()}
    rows = "\n".join(f"| {k} | {s['p50_ms']} ms | {s['p95_ms']} ms | {s['p99_ms']} ms | {s['mean_ms']} ms |"
                     for k, s in stats.items())
    markdown = (
        f"{args.pages} rounds, {args.burners} CPU-spinning processes beside it, embedded Postgres on this"
        " machine's cores (shared with other sessions). A page: 40 documents (everything the person"
        " reads) or 20 (the workspace), from taking a pooled connection to giving it back.\n\n"
        "| page | p50 | p95 | p99 | mean |\n|---|---|---|---|---|\n" + rows + "\n\n"
        "before: reading() then list_documents under scoped() (5 round trips; 6 with the workspace);"
        " after: readable_documents (1 round trip, 2 statements).\n\n"
        f"Load average (1, 5, 15 min) before: {list(load[0])}, after: {list(load[1])}.\n"
    )
    write_result(args.name, {"pages": args.pages, "burners": args.burners, "stats": stats,
                             "load": [list(x) for x in load]}, markdown)
    print(markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

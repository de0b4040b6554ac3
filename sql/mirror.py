"""Copy sql/ into supabase/migrations/ under the Supabase CLI's names, for `supabase db push`.

    python -m sql.mirror          # rewrite supabase/migrations from sql/
    python -m sql.mirror --check  # exit 1 when they differ (tests/test_supabase.py checks this too)

Versions. The CLI orders migrations by a 14-digit version, applies each version once (it records
versions in supabase_migrations.schema_migrations and never looks at a file's text again), refuses to
push when the database has a version the folder lacks, and skips a version below the database's
newest unless told `--include-all`. So a version, once in the folder, stays there for good, no two
files share one, and a new file takes the next version after every one the folder has: `db push`
on a database that applied any earlier folder applies exactly the new files, in order.

Versioned migrations: `sql/NNN_name.sql` becomes `VERSION_NNN_name.sql`, the same text. Those mirrored
before issue 42 keep their versions and names, `20260101000NNN_name.sql` (NNN as the version's last
digits); that scheme gave `027_b_collections.sql` and `027_chat_feedback.sql` one version, which a
fresh database cannot apply twice (duplicate key) and a database that had one of them skipped for
the other. A version two files claim is emptied to a comment (VERSION_STUB, named
`VERSION_superseded.sql`) and each of its files becomes a migration of its own, numbered after every
version the folder has: a database that applied one of them runs it again (both are idempotent) and
gets the other.

Repeatable files: the CLI knows only versioned migrations, so a regenerated file under a fixed version
would never reach a database that had it: the old function would stay, the very thing sql/functions/
exists to prevent. Hence every sql/functions/*.sql, in name order, followed by sql/099_row_security.sql
again (a function that was dropped and created anew is granted to `anon` and `authenticated` by
default, and a table a new migration created gets locked), is emitted as one migration,
`VERSION_functions.sql`, always the newest version: when that text changes, or a versioned migration
is added after it, it is written again under the next version and the previous file is emptied to a
comment (STUB). A fresh database runs the empty ones as no-ops, each function has one body in the
folder, and the versions already pushed all stay.

The folder is the record of what was mirrored; sql/released.json's `supabase` lists the versions
released (`python -m sql.release`), which must stay, with every newer one after them
(tests/test_supabase.py, and this script refuses to write otherwise).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from collections.abc import Iterable, Mapping

import sql
from sql import ROW_SECURITY

SUPABASE_DIR = sql.MIGRATIONS_DIR.parent / "supabase" / "migrations"
PREFIX = "20260101000"  # the versions mirrored before issue 42: PREFIX + NNN
FIRST = int(f"{PREFIX}001")  # an empty folder starts here
VERSION = re.compile(r"(\d{14})_.+\.sql")
VERSIONED = re.compile(r"\d{14}_(\d{3}_.+\.sql)")  # VERSION_NNN_name.sql
LEGACY = re.compile(rf"{PREFIX}(\d{{3}})_(.+\.sql)")  # 20260101000NNN_name.sql
FUNCTIONS = re.compile(r"(\d{14})_functions\.sql")
STUB = ("-- Superseded by a later *_functions.sql migration (sql/mirror.py): the functions' current bodies\n"
        "-- live in the newest one only. Kept, empty, so a database that applied this version still finds it.\n")
VERSION_STUB = ("-- More than one file of sql/ was mirrored under this version (issue 42): each is a migration of its\n"
                "-- own now, numbered after it (sql/mirror.py). Kept, empty, so a database that applied this version\n"
                "-- still finds it.\n")


def version(name: str) -> int:
    match = VERSION.fullmatch(name)
    if match is None:
        raise ValueError(f"{name}: not a Supabase migration name (14-digit version, underscore, name)")
    return int(match.group(1))


def source(name: str) -> str | None:
    """The sql/ file a mirrored versioned migration copies (`NNN_name.sql`), or None."""
    if FUNCTIONS.fullmatch(name):
        return None
    if match := LEGACY.fullmatch(name):
        return f"{match.group(1)}_{match.group(2)}"
    if match := VERSIONED.fullmatch(name):
        return match.group(1)
    return None


def problems(names: Iterable[str], released: Iterable[str] = ()) -> list[str]:
    """What `supabase db push` would trip on: a version two files share, a released version missing,
    a version that sorts before a released one (pushed only with --include-all)."""
    found = Counter(version(name) for name in names)
    out = [f"version {v} is used by {n} files" for v, n in sorted(found.items()) if n > 1]
    shipped = sorted(int(v) for v in released)
    out += [f"released version {v} is missing" for v in shipped if v not in found]
    if shipped:
        out += [f"version {v} sorts before the released {shipped[-1]}: `db push` would need --include-all"
                for v in sorted(found) if v < shipped[-1] and v not in shipped]
    return out


def functions_migration() -> str:
    parts = ["-- Generated by `python -m sql.mirror` from sql/functions/ and sql/099_row_security.sql: edit those.\n"]
    for path in sql.repeatable_files():
        parts.append(f"\n-- sql/{sql.migration_name(path)}\n{path.read_text()}")
    security = sql.MIGRATIONS_DIR / ROW_SECURITY
    parts.append(f"\n-- sql/{ROW_SECURITY}, again: functions created above are granted to the API roles by default\n"
                 f"{security.read_text()}")
    return "".join(parts)


def expected(existing: Mapping[str, str] | None = None, versioned: Mapping[str, str] | None = None) -> dict[str, str]:
    """What supabase/migrations should hold, given what it holds (`existing`, default: the folder) and
    sql/'s versioned migrations (`versioned`, name -> text; default: the files)."""
    existing = actual() if existing is None else existing
    if versioned is None:
        versioned = {sql.migration_name(p): p.read_text() for p in sql.versioned_files()}
    want: dict[str, str] = {}
    claims: dict[int, list[str]] = {}
    for name in existing:
        if existing[name] == VERSION_STUB:
            want[name] = VERSION_STUB
        elif source(name) is not None:
            claims.setdefault(version(name), []).append(name)
    placed: set[str] = set()
    for number, names in claims.items():
        wanted = source(names[0])
        if len(names) == 1 and wanted is not None and wanted in versioned:
            want[names[0]] = versioned[wanted]
            placed.add(wanted)
        else:  # a version two files share (or whose file left sql/): kept, empty
            want[f"{number}_superseded.sql"] = VERSION_STUB
    following = max(map(version, existing), default=FIRST - 1) + 1
    added = [name for name in sorted(versioned) if name not in placed]
    for name in added:
        want[f"{following}_{name}"] = versioned[name]
        following += 1
    body = functions_migration()
    generations = sorted((name for name in existing if FUNCTIONS.fullmatch(name)), key=version)
    if generations and not added and existing[generations[-1]] == body:
        *older, current = generations
    else:
        older, current = generations, f"{following}_functions.sql"
    want.update(dict.fromkeys(older, STUB))
    want[current] = body
    return dict(sorted(want.items(), key=lambda item: version(item[0])))


def actual() -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(SUPABASE_DIR.glob("*.sql"))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    have = actual()
    want = expected(have)
    if trouble := problems(want, sql.manifest()["supabase"]):
        print(f"supabase/migrations would break `supabase db push`: {'; '.join(trouble)}", file=sys.stderr)
        return 1
    if args.check:
        if want != have:
            print("supabase/migrations differs from sql/: run `python -m sql.mirror`", file=sys.stderr)
            return 1
        return 0
    SUPABASE_DIR.mkdir(parents=True, exist_ok=True)
    for stale in set(have) - set(want):
        (SUPABASE_DIR / stale).unlink()
    for name, text in want.items():
        (SUPABASE_DIR / name).write_text(text)
    print(f"wrote {len(want)} migrations to {SUPABASE_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

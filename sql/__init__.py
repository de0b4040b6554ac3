"""The database's SQL, applied by storage.db.migrate. Two kinds of file:

- **Versioned migrations**, `sql/NNN_name.sql`: schema and data changes, applied once each, in name
  order, and immutable once released. sql/released.json records each released file's sha256
  (`released`); tests/test_migrations.py fails when a released file changes or a versioned file is
  missing from it, and the migrator refuses to start when a file it applied has changed since (an
  edited old migration must never bring old code back). A change is a new NNN file, added to the
  manifest by `python -m sql.release`. `superseded` lists the earlier checksums of files whose
  function bodies moved to sql/functions/ (issue 23): a database that recorded one is adopted as is.
- **Repeatable files**, `sql/functions/NAME.sql`: the one body of the function NAME (a trigger
  function with its trigger), applied after the versioned migrations, in name order, whenever its
  checksum differs from the one recorded. Change a function here, never in an NNN file. A file whose
  function's arguments or result changed drops every earlier signature first (`create or replace`
  cannot change them; see functions/hybrid_search.sql). Functions hold code, not data: a change that
  must rewrite rows (say, recompute every tsvector) also needs a versioned migration.

After applying anything, the migrator runs 099_row_security.sql again, so a table or a (re)created
function is locked for Supabase's API roles too. A function a later migration drops (004's
child_terms_sync, dropped by 011) stays in the migration that created it: it has no current body.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TypedDict

MIGRATIONS_DIR = Path(__file__).parent
FUNCTIONS_DIR = MIGRATIONS_DIR / "functions"
MANIFEST = MIGRATIONS_DIR / "released.json"
ROW_SECURITY = "099_row_security.sql"  # run again after anything else is applied (see the file)


def versioned_files() -> list[Path]:
    return sorted(MIGRATIONS_DIR.glob("[0-9][0-9][0-9]_*.sql"))


def repeatable_files() -> list[Path]:
    return sorted(FUNCTIONS_DIR.glob("*.sql"))


def migration_name(path: Path) -> str:
    """The name schema_migrations records: `NNN_name.sql`, or `functions/NAME.sql` for a repeatable."""
    return path.relative_to(MIGRATIONS_DIR).as_posix()


def checksum(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Manifest(TypedDict):
    """sql/released.json: `released` (name -> sha256), `superseded` (name -> earlier sha256s) and
    `supabase` (the versions of supabase/migrations released, which never go away: sql/mirror.py)."""

    released: dict[str, str]
    superseded: dict[str, list[str]]
    supabase: list[str]


def manifest() -> Manifest:
    data: Manifest = json.loads(MANIFEST.read_text())
    return data

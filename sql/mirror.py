"""Copy sql/ into supabase/migrations/ under the Supabase CLI's names, for `supabase db push`.

    python -m sql.mirror          # rewrite supabase/migrations from sql/
    python -m sql.mirror --check  # exit 1 when they differ (tests/test_supabase.py checks this too)

`NNN_name.sql` becomes `20260101000NNN_name.sql` (the CLI orders migrations by a 14-digit prefix).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sql import MIGRATIONS_DIR

SUPABASE_DIR = MIGRATIONS_DIR.parent / "supabase" / "migrations"
PREFIX = "20260101000"


def supabase_name(path: Path) -> str:
    number, _, rest = path.name.partition("_")
    return f"{PREFIX}{int(number):03d}_{rest}"


def expected() -> dict[str, str]:
    return {supabase_name(p): p.read_text() for p in sorted(MIGRATIONS_DIR.glob("[0-9]*.sql"))}


def actual() -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(SUPABASE_DIR.glob("*.sql"))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    want = expected()
    if args.check:
        if want != actual():
            print("supabase/migrations differs from sql/: run `python -m sql.mirror`", file=sys.stderr)
            return 1
        return 0
    SUPABASE_DIR.mkdir(parents=True, exist_ok=True)
    for stale in set(actual()) - set(want):
        (SUPABASE_DIR / stale).unlink()
    for name, text in want.items():
        (SUPABASE_DIR / name).write_text(text)
    print(f"wrote {len(want)} migrations to {SUPABASE_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

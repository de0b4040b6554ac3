"""Record the versioned migrations not yet in sql/released.json as released (their sha256 now), and the
versions of supabase/migrations (sql/mirror.py) not yet in it.

    python -m sql.release          # add every sql/NNN_*.sql and Supabase version missing from the manifest
    python -m sql.release --check  # exit 1 when one is missing or a released one changed

Run it when a new migration is ready to ship: from then on the file is immutable
(tests/test_migrations.py). It never rewrites an entry that is there: a released file that changed
is an error to fix in the file (put the change in a new migration), not in the manifest.
"""

from __future__ import annotations

import argparse
import json
import sys

from sql import MANIFEST, checksum, manifest, migration_name, mirror, versioned_files


def problems() -> tuple[list[str], list[str]]:
    """(versioned files missing from the manifest, released files whose checksum changed)."""
    released = manifest()["released"]
    missing, changed = [], []
    for path in versioned_files():
        name = migration_name(path)
        if name not in released:
            missing.append(name)
        elif released[name] != checksum(path):
            changed.append(name)
    return missing, changed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    missing, changed = problems()
    if changed:
        print(f"released migrations changed: {', '.join(changed)}: restore them and put the change in a new"
              " migration (or in sql/functions/)", file=sys.stderr)
        return 1
    if args.check:
        if missing:
            print(f"not in sql/released.json: {', '.join(missing)} (run `python -m sql.release`)", file=sys.stderr)
        return 1 if missing else 0
    data = manifest()
    for name in missing:
        data["released"][name] = checksum(MANIFEST.parent / name)
    data["released"] = dict(sorted(data["released"].items()))
    supabase = {str(mirror.version(name)) for name in mirror.expected()} - set(data["supabase"])
    data["supabase"] = sorted({*data["supabase"], *supabase})
    MANIFEST.write_text(json.dumps(data, indent=2) + "\n")
    print(f"released: {', '.join(missing)}" if missing else "every migration is released")
    if supabase:
        print(f"released Supabase versions: {', '.join(sorted(supabase))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""SQL migrations, applied in file-name order by storage.migrate."""

from pathlib import Path

MIGRATIONS_DIR = Path(__file__).parent

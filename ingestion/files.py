"""Where raw files live: local disk under THOTQEN_HOME (default) or Supabase Storage.

Ingestion reads the file from its local path (ingestion.pipeline.stored_file_path), and
`submit_document` writes it there. With Supabase the bucket is the durable copy: the upload goes to the
bucket, the worker downloads a missing local copy before ingesting, and removes it afterwards.

Rendered page images are kept on local disk beside the files (`files/<owner>/pages/<hash>/`), so
behind nginx (ACCEL_REDIRECT_PREFIX) both are sent by nginx from this one directory tree.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

from ingestion.formats import registry
from ingestion.pipeline import stored_file_path
from settings import Settings

log = logging.getLogger(__name__)

# A signed download URL is handed to the browser at once and followed at once; a minute covers a slow
# redirect without leaving a link that stays usable for long.
SIGNED_URL_TTL_S = 60


class LocalFiles:
    kind = "local"

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    @property
    def root(self) -> Path:
        """The directory every stored file and render lies under (what nginx's internal location serves)."""
        return self.settings.home / "files"

    def path(self, owner_id: int, content_hash: str, fmt: str = "pdf") -> Path:
        return stored_file_path(self.settings, owner_id, content_hash, fmt)

    def render_path(self, owner_id: int, content_hash: str, name: str) -> Path:
        """Where a rendered page image of the file is kept (`name`: page, width and highlight key)."""
        return self.root / str(owner_id) / "pages" / content_hash / f"{name}.png"

    def relative(self, path: Path) -> str:
        """`path` as nginx's internal location names it: relative to root, with forward slashes."""
        return path.relative_to(self.root).as_posix()

    def signed_url(self, owner_id: int, content_hash: str, fmt: str, filename: str) -> str | None:
        """A short-lived URL the client downloads the file from directly; None: the store has none."""
        return None

    def saved(self, owner_id: int, content_hash: str, fmt: str = "pdf") -> None:
        """Called after submit_document wrote the local copy."""

    def ensure_local(self, owner_id: int, content_hash: str, fmt: str = "pdf") -> None:
        """Make the local copy exist before ingestion reads it."""

    def ingested(self, owner_id: int, content_hash: str, fmt: str = "pdf") -> None:
        """Called after a job ended (ready or failed)."""

    def delete(self, owner_id: int, content_hash: str, fmt: str = "pdf") -> None:
        self.path(owner_id, content_hash, fmt).unlink(missing_ok=True)
        shutil.rmtree(self.render_path(owner_id, content_hash, "x").parent, ignore_errors=True)


class SupabaseFiles(LocalFiles):
    kind = "supabase"

    def __init__(self, settings: Settings, client: Any = None) -> None:
        super().__init__(settings)
        if client is None:
            from supabase import create_client

            if not settings.supabase.url or not settings.supabase.service_key:
                raise RuntimeError("Supabase Storage needs SUPABASE_URL and SUPABASE_SERVICE_KEY")
            client = create_client(settings.supabase.url, settings.supabase.service_key.get_secret_value())
        self.bucket = client.storage.from_(settings.supabase.bucket)

    @staticmethod
    def key(owner_id: int, content_hash: str, fmt: str = "pdf") -> str:
        return f"{owner_id}/{content_hash}.{registry.suffix(fmt)}"

    def saved(self, owner_id: int, content_hash: str, fmt: str = "pdf") -> None:
        data = self.path(owner_id, content_hash, fmt).read_bytes()
        self.bucket.upload(self.key(owner_id, content_hash, fmt), data,
                           {"content-type": registry.media_type(fmt), "upsert": "true"})

    def ensure_local(self, owner_id: int, content_hash: str, fmt: str = "pdf") -> None:
        path = self.path(owner_id, content_hash, fmt)
        if path.exists():
            return
        data = self.bucket.download(self.key(owner_id, content_hash, fmt))
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".part")
        tmp.write_bytes(data)
        tmp.replace(path)

    def signed_url(self, owner_id: int, content_hash: str, fmt: str, filename: str) -> str | None:
        """Storage's signed URL for the object, answering it as an attachment under `filename`."""
        signed = self.bucket.create_signed_url(self.key(owner_id, content_hash, fmt), SIGNED_URL_TTL_S,
                                               {"download": filename})
        url: str | None = signed.get("signedURL") or signed.get("signedUrl")
        if not url:
            raise RuntimeError("Supabase Storage returned no signed URL")
        return url

    def ingested(self, owner_id: int, content_hash: str, fmt: str = "pdf") -> None:
        # the bucket holds the durable copy; the local one was only for parsing
        self.path(owner_id, content_hash, fmt).unlink(missing_ok=True)

    def delete(self, owner_id: int, content_hash: str, fmt: str = "pdf") -> None:
        super().delete(owner_id, content_hash, fmt)
        self.bucket.remove([self.key(owner_id, content_hash, fmt)])


def make_file_store(settings: Settings) -> LocalFiles:
    if settings.supabase.storage:
        return SupabaseFiles(settings)
    return LocalFiles(settings)

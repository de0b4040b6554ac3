"""Errors a user can act on; their messages are shown as they are."""


class IngestError(Exception):
    """A file that cannot be ingested, with a message that says why."""


class UnsupportedFormat(IngestError):
    """Content that is none of the accepted formats (the server answers 415)."""


class QuotaExceeded(IngestError):
    """The uploader's documents already hold what STORAGE_MB_PER_USER or DOCUMENTS_PER_USER allow
    (the server answers 413, before the body is kept)."""


class DiskFull(IngestError):
    """The file store's disk (or quota) is full: nothing of the upload was kept (the server answers 507)."""

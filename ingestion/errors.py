"""Errors a user can act on; their messages are shown as they are."""


class IngestError(Exception):
    """A file that cannot be ingested, with a message that says why."""


class UnsupportedFormat(IngestError):
    """Content that is none of the accepted formats (the server answers 415)."""

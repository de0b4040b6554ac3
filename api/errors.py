"""Validation errors as a client sees them: which field and why, never the input itself.

FastAPI's own handler echoes each offending value back (`input`) and the context of the check
(`ctx`, which may hold an exception); a hostile value is as large and as nested as the body cap
allows, may hold text UTF-8 cannot encode, and an exception's text may name server paths. Only
short scalar inputs are kept, so a client still sees what it sent wrong in the common case.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from api.text import printable

MAX_ERRORS = 20  # errors listed per response; the rest are counted
MAX_LOC = 12  # path elements kept per error
MAX_TEXT = 200  # characters of a message, a path element or an echoed scalar


def _short(value: object) -> str:
    text = str(value)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "…"


def _one(error: dict[str, Any]) -> dict[str, Any]:
    loc = [part if isinstance(part, int) else _short(part) for part in list(error.get("loc", ()))[:MAX_LOC]]
    out: dict[str, Any] = {"type": _short(error.get("type", "value_error")), "loc": loc,
                           "msg": _short(error.get("msg", "invalid value"))}
    value = error.get("input")
    if isinstance(value, bool | int | float) or (isinstance(value, str) and len(value) <= MAX_TEXT):
        out["input"] = value
    result: dict[str, Any] = printable(out)
    return result


def validation_errors(errors: Sequence[Any]) -> list[dict[str, Any]]:
    """FastAPI's list of errors ({type, loc, msg}, short scalar inputs), bounded in count and size."""
    shown = [_one(e) if isinstance(e, dict) else {"type": "value_error", "loc": ["body"], "msg": _short(e)}
             for e in list(errors)[:MAX_ERRORS]]
    if len(errors) > MAX_ERRORS:
        shown.append({"type": "too_many_errors", "loc": ["body"],
                      "msg": f"{len(errors) - MAX_ERRORS} more errors not listed"})
    return shown

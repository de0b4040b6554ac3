"""Calculations in code: a closed set of operations over numbered facts, rounded as the question asks.

The model (or `choose_op`'s rules) names an operation and the facts it uses, as a small JSON
request ({"op": "ratio", "operands": [1, 2], "round": 2}); Python does the arithmetic, so no figure
in an answer is the model's own arithmetic. The working is shown with each operand's citation
marker: "1,234 / 2,000 = 0.62 [1][2]". Operands are read in base units (graph/figures.py), so
a numerator from a table in thousands and a denominator from one in millions divide correctly.

Operand order is the request's: ratio, percentage and margin are a / b; growth is b / a - 1
(a the earlier); difference is a - b; turnover is a / average(b, c); per_share is a / b (b the
shares); days is 365 * a / b. Rounding: the question's ("rounded to two decimal places") wins
over the request's, which wins over DEFAULT_DECIMALS.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from graph.figures import Asked, Figure, Kind, asked_unit, decimals_at, format_figure, format_number, round_half_up
from lexicon import OPERATION_PHRASINGS, YEAR_DIGITS

Op = Literal["ratio", "percentage", "margin", "growth", "difference", "sum", "average", "cagr", "turnover",
             "per_share", "days"]
OPS: tuple[str, ...] = get_args(Op)
# (fewest, most) operands; None: no upper bound.
ARITY: dict[str, tuple[int, int | None]] = {
    "ratio": (2, 2), "percentage": (2, 2), "margin": (2, 2), "growth": (2, 2), "difference": (2, 2),
    "sum": (2, None), "average": (2, None), "cagr": (2, 2), "turnover": (3, 3), "per_share": (2, 2), "days": (2, 2),
}
# Rounding when neither the question nor the request names one, as analysts quote these figures:
# ratios to hundredths (a coverage or turnover of 0.62), percentages to a tenth of a percent (growth
# of 12.5%, a margin of 41.2%), per-share amounts to the cent, days to a tenth. Money and counts
# (sum, difference, average) keep the operands' own precision at the scale they are shown in (one
# place more for an average): a result never shows digits its inputs do not have.
DEFAULT_DECIMALS: dict[str, int] = {"ratio": 2, "percent": 1, "per_share": 2, "days": 1}
DAYS_IN_YEAR = 365
# Operations over amounts: a percentage row as an operand is a different line item than the one asked
# ("revenue growth" from two margin rows).
_OF_AMOUNTS = ("ratio", "percentage", "margin", "growth", "cagr", "turnover", "per_share", "days")


@dataclass(frozen=True)
class Fact:
    """A cited figure the model can name by number: a table cell or a figure in an excerpt."""

    n: int  # its number as the model sees it ("fact 1")
    figure: Figure  # its value, read under its table's scale
    label: str = ""  # the row label with its section path
    source: int = 0  # the excerpt [n] it comes from: its citation marker (0: none)
    period: str = ""  # its column's period ("FY2023"): CAGR reads its years from here
    statement: str = ""  # the primary statement its table is ("income", "balance", "cash"; storage/statements.py)

    @property
    def year(self) -> int | None:
        """The year its period names ("Q2 FY2023" -> 2023), None when it names none."""
        m = YEAR_DIGITS.search(self.period)
        return int(m.group(0)) if m else None


class CalcError(ValueError):
    """A request that cannot be computed; the message is the reason, fit to show the model or log."""


class Request(BaseModel):
    """What a model (or a rule) writes to ask for a calculation."""

    op: Op
    operands: list[int] = Field(min_length=1, description="fact numbers, in the operation's order")
    round: int | None = Field(default=None, ge=0, le=6, description="decimal places of the result")
    years: float | None = Field(default=None, gt=0, description="CAGR's number of years")

    @field_validator("op", mode="before")
    @classmethod
    def _known(cls, value: object) -> object:
        op = re.sub(r"[\s-]+", "_", str(value).strip().lower())
        if op not in OPS:
            raise ValueError(f"unknown operation {value!r}; one of {', '.join(OPS)}")
        return op

    @model_validator(mode="after")
    def _arity(self) -> Request:
        fewest, most = ARITY[self.op]
        count = len(self.operands)
        if count < fewest or (most is not None and count > most):
            wanted = f"{fewest}" if fewest == most else f"at least {fewest}"
            raise ValueError(f"{self.op} takes {wanted} operands, got {count}")
        return self


@dataclass(frozen=True)
class Result:
    """A computed figure, as shown, with its working."""

    op: str
    value: float  # rounded as shown, in base units of `kind`
    exact: float
    kind: Kind
    decimals: int
    text: str  # "0.62", "61.7%", "$766 million", "45.2 days"
    working: str  # "1,234 / 2,000 = 0.62 [1][2]"
    operands: tuple[int, ...]  # fact numbers
    markers: tuple[int, ...]  # the excerpts cited, in operand order
    points: bool = False  # a difference of percentages, in percentage points
    scale: float = 1.0  # the unit money and counts are shown in
    unit: str = ""  # "days"

    @property
    def figure(self) -> Figure:
        """The result as shown, for comparing with the answer's figures."""
        return Figure(number=self.value / self.scale, kind=self.kind, text=self.text, scale=self.scale,
                      decimals=self.decimals, currency=self.kind in ("money", "per_share"), points=self.points)

    @property
    def exact_figure(self) -> Figure:
        """The unrounded result: an answer may round it further ("0.6") and still state it."""
        return Figure(number=self.exact / self.scale, kind=self.kind, text=self.text, scale=self.scale,
                      decimals=12, points=self.points)

    def as_dict(self) -> dict[str, Any]:
        return {"op": self.op, "value": self.value, "kind": self.kind, "text": self.text, "working": self.working,
                "operands": list(self.operands), "markers": list(self.markers), "decimals": self.decimals,
                "exact": self.exact, "points": self.points, "scale": self.scale, "unit": self.unit}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Result:
        """The result `as_dict` wrote (a graph state holds plain dicts)."""
        return cls(op=data["op"], value=float(data["value"]), exact=float(data.get("exact", data["value"])),
                   kind=data["kind"], decimals=int(data["decimals"]), text=str(data["text"]),
                   working=str(data["working"]), operands=tuple(data["operands"]), markers=tuple(data["markers"]),
                   points=bool(data.get("points")), scale=float(data.get("scale", 1.0)), unit=str(data.get("unit", "")))


@dataclass
class _Shown:
    """How the operands are written in the working."""

    scale: float
    bare: bool  # all amounts share `scale`, so they are written without a scale word
    texts: list[str] = field(default_factory=list)


def parse_request(raw: str | Mapping[str, Any]) -> Request:
    """The request in `raw` (a JSON object, alone or inside the model's text); CalcError with a reason."""
    data: object = raw
    if isinstance(raw, str):
        start, end = raw.find("{"), raw.rfind("}")
        if start < 0 or end < start:
            raise CalcError("no JSON object in the request")
        try:
            data = json.loads(raw[start:end + 1])
        except json.JSONDecodeError as e:
            raise CalcError(f"the request is not JSON: {e.msg}") from e
    try:
        return Request.model_validate(data)
    except ValidationError as e:
        reasons = [(".".join(map(str, err["loc"])) + ": " if err["loc"] else "") + err["msg"].removeprefix(
            "Value error, ") for err in e.errors()]
        raise CalcError("; ".join(reasons)) from e


def _shown(facts: list[Fact], asked: Asked) -> _Shown:
    amounts = [f.figure for f in facts if f.figure.kind in ("money", "count")]
    scales = {f.scale for f in amounts}
    scale = asked.scale or (min(scales) if scales else 1.0)
    bare = len(scales) <= 1 or asked.scale is not None
    texts = []
    for f in facts:
        fig = f.figure
        if fig.kind in ("money", "count"):
            text = format_figure(fig.value, "count", scale=scale if bare else fig.scale, scale_word=not bare)
        else:
            text = format_figure(fig.value, fig.kind, decimals=fig.decimals, points=fig.points)
        texts.append(f"({text})" if text.startswith("-") else text)
    return _Shown(scale, bare, texts)


def _years(request: Request, facts: list[Fact]) -> float:
    if request.years:
        return request.years
    found = [f.year for f in facts if f.year is not None]
    if len(found) == 2 and found[0] != found[1]:
        return float(abs(found[1] - found[0]))
    raise CalcError("CAGR needs the number of years: give \"years\" or facts with their periods")


def _divide(a: float, b: float, what: str) -> float:
    if b == 0:
        raise CalcError(f"{what} divides by zero")
    return a / b


def _arithmetic(request: Request, facts: list[Fact], texts: list[str]) -> tuple[float, Kind, str, bool]:
    """(exact value, kind, the expression, in percentage points) of the operation."""
    v = [f.figure.value for f in facts]
    kinds = {f.figure.kind for f in facts}
    op, t = request.op, texts
    if op in ("difference", "sum", "average") and "percent" in kinds and kinds != {"percent"}:
        raise CalcError(f"{op} mixes percentages with amounts")
    if op in _OF_AMOUNTS and "percent" in kinds:
        raise CalcError(f"{op} takes amounts, not percentages")
    amounts = [f.figure for f in facts if f.figure.kind in ("money", "count")]
    if op != "per_share" and any(a.scale != 1.0 for a in amounts) and any(
            a.kind == "count" and a.scale == 1.0 and not a.currency for a in amounts):
        raise CalcError(f"{op} mixes an amount at a known scale with one whose scale the table does not say")
    first: Kind = facts[0].figure.kind
    if op == "ratio":
        return _divide(v[0], v[1], "the ratio"), "ratio", f"{t[0]} / {t[1]}", False
    if op in ("percentage", "margin"):
        return _divide(v[0], v[1], f"the {op}") * 100, "percent", f"{t[0]} / {t[1]}", False
    if op == "growth":
        if v[0] <= 0:
            raise CalcError("growth needs a positive starting value")
        return (v[1] / v[0] - 1) * 100, "percent", f"{t[1]} / {t[0]} − 1", False
    if op == "difference":
        return v[0] - v[1], first, f"{t[0]} − {t[1]}", first == "percent"
    if op == "sum":
        return sum(v), first, " + ".join(t), False
    if op == "average":
        return sum(v) / len(v), first, f"({' + '.join(t)}) / {len(v)}", False
    if op == "cagr":
        n = _years(request, facts)
        if v[0] <= 0 or v[1] <= 0:
            raise CalcError("CAGR needs positive values")
        return ((v[1] / v[0]) ** (1 / n) - 1) * 100, "percent", f"({t[1]} / {t[0]})^(1/{format_number(n)}) − 1", False
    if op == "turnover":
        mean = (v[1] + v[2]) / 2
        return _divide(v[0], mean, "the turnover"), "ratio", f"{t[0]} / (({t[1]} + {t[2]}) / 2)", False
    if op == "per_share":
        return _divide(v[0], v[1], "the per-share amount"), "per_share", f"{t[0]} / {t[1]}", False
    return _divide(DAYS_IN_YEAR * v[0], v[1], "days"), "count", f"{DAYS_IN_YEAR} × {t[0]} / {t[1]}", False


def _default_decimals(request: Request, kind: Kind, facts: list[Fact], scale: float) -> int:
    if request.op == "days":
        return DEFAULT_DECIMALS["days"]
    if kind in DEFAULT_DECIMALS:
        return DEFAULT_DECIMALS[kind]
    own = max((decimals_at(f.figure, scale) for f in facts), default=0)
    return own + (1 if request.op == "average" else 0)


def compute(request: Request, facts: Iterable[Fact], asked: Asked | None = None) -> Result:
    """The request's result over `facts` (by number), shown as `asked` (the question's unit and rounding)."""
    asked = asked or Asked()
    by_n = {f.n: f for f in facts}
    missing = [n for n in request.operands if n not in by_n]
    if missing:
        raise CalcError(f"no fact {', '.join(map(str, missing))}; the facts are {sorted(by_n) or 'none'}")
    used = [by_n[n] for n in request.operands]
    shown = _shown(used, asked)
    exact, kind, expression, points = _arithmetic(request, used, shown.texts)
    if kind == "ratio" and asked.percent and not asked.points:  # "the ratio, as a percentage"
        exact, kind = exact * 100, "percent"
    scale = shown.scale if kind in ("money", "count") and request.op != "days" else 1.0
    if asked.decimals is not None:
        decimals = asked.decimals
    elif request.round is not None:
        decimals = request.round
    else:
        decimals = _default_decimals(request, kind, used, scale)
    value = float(round_half_up(exact / scale, decimals)) * scale
    unit = "days" if request.op == "days" else ""
    if unit:
        text = f"{format_number(value, decimals)} days"
    else:
        text = format_figure(value, kind, scale=scale, decimals=decimals, points=points,
                             currency=kind in ("money", "per_share") or (kind == "count" and asked.currency
                                                                          and request.op != "days"))
    markers = tuple(dict.fromkeys(f.source for f in used if f.source))
    cite = "".join(f"[{m}]" for m in markers)
    working = f"{expression} = {text}" + (f" {cite}" if cite else "")
    return Result(op=request.op, value=value, exact=exact, kind=kind, decimals=decimals, text=text,
                  working=working, operands=tuple(request.operands), markers=markers, points=points,
                  scale=scale, unit=unit)


def calculate(raw: str | Mapping[str, Any], facts: Iterable[Fact], question: str = "") -> Result:
    """Parse a request and compute it, rounded and scaled as `question` asks; CalcError with a reason."""
    return compute(parse_request(raw), facts, asked_unit(question))


# -- choosing the operation from the question's words ------------------------------------------------------------------
# The phrasings are lexicon.py's (OPERATION_PHRASINGS), checked in order; the first that matches wins.
_RULES = OPERATION_PHRASINGS


def choose_op(question: str) -> str | None:
    """The operation the question's wording asks for, or None when it asks for none.

    The question's unit settles the two usual confusions: a change asked "as a percentage" is
    growth, growth asked "in USD millions" is a difference; a margin asked in money is a reported
    figure (gross margin in dollars), not a calculation; a ratio asked as a percentage is one.
    """
    asked = asked_unit(question)
    money = asked.scale is not None and not asked.percent
    for op, pattern in _RULES:
        if not pattern.search(question or ""):
            continue
        if op == "difference" and asked.percent and not asked.points:
            return "growth"
        if op == "growth" and money:
            return "difference"
        if op == "margin" and money:
            return None
        if op == "ratio" and asked.percent and not asked.points:
            return "percentage"
        return op
    return None

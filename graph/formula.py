"""Formulas a question defines, computed by code: more arithmetic than one closed-set operation.

Analysts' questions often spell their metric out: "DPO is defined as: 365 * (average accounts
payable between FY2016 and FY2017) / (FY2017 COGS + change in inventory between FY2016 and
FY2017)", "FCF here is defined as: (cash from operations - capex)", "the FY2017 - FY2019 3 year
average of capex as a % of revenue", "Define unadjusted EBITDA as unadjusted operating income +
depreciation and amortization". `parse` reads such a question into an expression whose leaves are
line items at a year ("average X between FY_a and FY_b", "change in X between ...", "FY2017 X",
or the year being averaged over); a defined name used in another definition or in the metric is
replaced by its definition. `evaluate` matches each leaf to the numbered fact whose row label and
year fit it (graph/operands.py), computes in Python and shows the working with every operand
cited. A leaf without a fact of its year means no calculation: never a nearby year's value.

The result's kind follows the units: amounts over amounts are a ratio (a percentage when the
question asks in percent or for a margin, days when the formula multiplies by 365); amounts plus
or minus amounts are an amount.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence, Set
from dataclasses import dataclass

from graph.calc import DAYS_IN_YEAR, DEFAULT_DECIMALS, CalcError, Fact, Result, choose_op, compute
from graph.facts import label_words
from graph.figures import Asked, Kind, asked_unit, decimals_at, format_figure, format_number, round_half_up
from graph.operands import MARGIN_PARTS, REVENUE, choose, names_a_rate
from graph.operands import phrases as operand_phrases
from lexicon import (
    AS_PERCENT_OF,
    AVERAGE_OF,
    CHANGE_IN,
    DEFINITION,
    FORMULA_TOKEN,
    MARGIN_AFTER,
    PER_SHARE_PHRASE,
    PERCENT_MARGIN,
    PERCENT_OR_MARGIN,
    YEAR_WRITTEN,
    YEARS_AVERAGE,
    YEARS_BETWEEN,
    contrasted,
)
from storage.question_period import asked_period
from storage.statements import named_statements, preference

log = logging.getLogger("thotqen.formula")
# A row answers a phrase when the phrase names at least this share of the row's own words (or all of its own).
MIN_LABEL_SHARE = 0.5
Words = Callable[[str], str]  # a phrase's glossary words (storage/tables.py glossary_words), "" when none


@dataclass(frozen=True)
class Num:
    value: float


@dataclass(frozen=True)
class Item:
    """A line item: its value at a year, its average over two years or its change between them.
    `years` empty: the year the formula is evaluated at."""

    phrase: str
    how: str = "value"  # "value", "average" or "change"
    years: tuple[int, ...] = ()


@dataclass(frozen=True)
class Bin:
    op: str  # + - * /
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Mean:
    """The average over `years` of a formula evaluated at each year ("3 year average of ...")."""

    years: tuple[int, ...]
    body: Expr


Expr = Num | Item | Bin | Mean

_OPS = {"+": "+", "plus": "+", "-": "-", "−": "-", "minus": "-", "*": "*", "×": "*", "times": "*", "/": "/",
        "÷": "/", "divided by": "/", "over": "/"}
# A label's own parenthesised note ("Investments (Note 3)", "Cost of sales (1)"): right after a word and
# holding no operator, it belongs to the line item's name, not to the formula's grouping; it is dropped
# from the phrase (a note's number names no row).
_NOTE = re.compile(r"(?<=[A-Za-z.,])\s*\((?:note\s+)?[\w .,&'’-]{1,30}\)(?=\s|$|[+*/×÷)−-])", re.I)
_METRIC_END = re.compile(r"\s+(?:for|of|at|in)\s+[A-Z].*$|\s*\(.*$|\s+(?:for|according|based)\b.*$", re.S)
_ASKED: frozenset[str] = frozenset({"(the metric asked)"})
_PARENTHESES = re.compile(r"\([^()]*\)")
_REVENUE_WORDS = frozenset({"revenue", "net"})  # label_words reads "sales" as revenue


def _definitions(question: str) -> list[tuple[frozenset[str], str]]:
    """(the defined name's words, its formula's text) in the question's order."""
    out = []
    for m in DEFINITION.finditer(question or ""):
        name = (m.group("name") or m.group("name2") or "").strip()
        name = name.split(",")[-1]
        # "It is defined as": the metric the question asks for, which no other formula uses by name
        key = frozenset(label_words(re.sub(r"^.*\b(?:the|what|is)\s+", "", name, flags=re.I))) or _ASKED
        out.append((key, m.group("body").strip(" :")))
    return out


def _tokens(text: str) -> list[str]:
    text = _NOTE.sub(" ", text)
    return [t.strip() for t in FORMULA_TOKEN.split(text) if t and t.strip()]


class _Parser:
    def __init__(self, text: str, defined: dict[frozenset[str], str], depth: int) -> None:
        self.tokens, self.at, self.defined, self.depth = _tokens(text), 0, defined, depth

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def op(self, ops: tuple[str, ...]) -> str | None:
        token = self.peek()
        word = " ".join(token.lower().split()) if token is not None else ""  # "divided  by": tokens are stripped
        if token is not None and _OPS.get(word) in ops:
            self.at += 1
            return _OPS[word]
        return None

    def expr(self) -> Expr:
        node = self.term()
        while (op := self.op(("+", "-"))) is not None:
            node = Bin(op, node, self.term())
        return node

    def term(self) -> Expr:
        node = self.factor()
        while (op := self.op(("*", "/"))) is not None:
            node = Bin(op, node, self.factor())
        return node

    def factor(self) -> Expr:
        token = self.peek()
        if token is None:
            raise CalcError("the formula ends early")
        self.at += 1
        if token == "(":
            node = self.expr()
            if self.peek() != ")":
                raise CalcError("a parenthesis is not closed")
            self.at += 1
            return node
        if token == ")" or token.lower() in _OPS:
            raise CalcError(f"unexpected {token!r} in the formula")
        if _is_number(token):
            return Num(float(token))
        return leaf(token, self.defined, self.depth)


def _is_number(token: str) -> bool:
    """Digits, with decimals or not ("365", "1.5")."""
    whole, point, decimals = token.partition(".")
    return whole.isdecimal() and (not point or decimals.isdecimal())


def leaf(text: str, defined: dict[frozenset[str], str], depth: int = 0) -> Expr:
    """A leaf's text as a line item at its years, or the formula of a name the question defined."""
    key = frozenset(label_words(YEAR_WRITTEN.sub(" ", YEARS_BETWEEN.sub(" ", text))))
    if key in defined and depth < 3:
        return _parse(defined[key], defined, depth + 1)
    how = "value"
    if AVERAGE_OF.search(text):
        how, text = "average", AVERAGE_OF.sub("", text)
    elif CHANGE_IN.search(text):
        how, text = "change", CHANGE_IN.sub("", text)
    years: tuple[int, ...] = ()
    if m := YEARS_BETWEEN.search(text):
        years = tuple(sorted({int(m.group(1)), int(m.group(2))}))
        text = YEARS_BETWEEN.sub(" ", text)
    elif found := [int(y) for y in YEAR_WRITTEN.findall(text)]:
        years = (found[0],)
        text = YEAR_WRITTEN.sub(" ", text)
    if how != "value" and len(years) != 2:
        raise CalcError(f"{how} of {text.strip()!r} needs two years")
    phrase = " ".join(text.split())
    if not label_words(phrase):
        raise CalcError(f"{phrase!r} names no line item")
    if names_a_rate(phrase) or PER_SHARE_PHRASE.search(phrase):
        # operands are amounts: a rate or a per-share row in a formula is not read (its unit is another)
        raise CalcError(f"{phrase!r} is a rate or a per-share figure, not an amount")
    return Item(phrase, how, years)


def _parse(text: str, defined: dict[frozenset[str], str], depth: int = 0) -> Expr:
    parser = _Parser(text, defined, depth)
    node = parser.expr()
    if parser.peek() is not None:
        raise CalcError(f"unexpected {parser.peek()!r} in the formula")
    return node


def _has_arithmetic(node: Expr) -> bool:
    return not isinstance(node, Item) or node.how != "value"


def _per_year(metric: str, defined: dict[frozenset[str], str]) -> Expr | None:
    """The formula at one year of an averaged metric: "capex as a % of revenue", "net profit margin",
    a name the question defined, or a margin of one ("unadjusted EBITDA % margin")."""
    metric = _METRIC_END.sub("", metric).strip()
    if len(parts := AS_PERCENT_OF.split(metric, maxsplit=1)) == 2:
        return Bin("/", leaf(parts[0], defined), leaf(parts[1], defined))
    for pattern, numerator in MARGIN_PARTS:
        if pattern.search(metric):
            return Bin("/", leaf(numerator, defined), Item(REVENUE))
    if MARGIN_AFTER.search(metric):
        return Bin("/", leaf(MARGIN_AFTER.sub("", metric), defined), Item(REVENUE))
    key = frozenset(label_words(metric))
    return _parse(defined[key], defined) if key in defined else None


@dataclass(frozen=True)
class Formula:
    expr: Expr
    percent: bool  # a margin or a share: shown as a percentage
    default_year: int | None  # the year of a leaf that names none, outside an average


def parse(question: str) -> Formula | None:
    """The formula the question defines or names ("N year average of ..."), None when it has none
    beyond one closed-set operation; CalcError when it has one this grammar cannot read."""
    defined = dict(_definitions(question))
    years = asked_period(question).years
    percent = bool(PERCENT_OR_MARGIN.search(question or ""))
    if m := YEARS_AVERAGE.search(question or ""):
        first, last = sorted((int(m.group(1)), int(m.group(2))))
        body = _per_year(m.group("metric"), defined)
        if body is not None and last - first < 10:
            return Formula(Mean(tuple(range(first, last + 1)), body), percent, None)
    definitions = _definitions(question)
    # One year's margin of a line item the closed set has no name for: "the FY2015 depreciation and
    # amortization (D&A from cash flow statement) % margin" is that line item over revenue. Only the
    # analyst's "% margin" says so: a named margin the closed set lacks ("net interest margin", a bank's
    # income over its earning assets) is no line item over revenue.
    if not definitions and (m := PERCENT_MARGIN.search(question or "")):
        metric = _PARENTHESES.sub(" ", m.group("metric"))
        if not any(pattern.search(metric) for pattern, _ in MARGIN_PARTS):  # those the closed set computes
            body = _per_year(metric, defined)
            if body is not None:
                return Formula(body, True, max(years) if years else None)
    if not definitions:
        return None
    expr = _parse(definitions[0][1], defined)
    if not _has_arithmetic(expr):
        return None
    return Formula(expr, percent and not _days(expr), max(years) if years else None)


def _days(node: Expr) -> bool:
    if isinstance(node, Num):
        return node.value in (DAYS_IN_YEAR, 360)
    if isinstance(node, Bin):
        return _days(node.left) or _days(node.right)
    return isinstance(node, Mean) and _days(node.body)


def items(node: Expr) -> list[Item]:
    if isinstance(node, Item):
        return [node]
    if isinstance(node, Bin):
        return items(node.left) + items(node.right)
    if isinstance(node, Mean):
        return items(node.body)
    return []


def needed_years(formula: Formula) -> list[int]:
    """Every year a leaf is read at."""
    out: set[int] = set()

    def walk(node: Expr, year: int | None) -> None:
        if isinstance(node, Item):
            out.update(node.years or ((year,) if year else ()))
        elif isinstance(node, Bin):
            walk(node.left, year)
            walk(node.right, year)
        elif isinstance(node, Mean):
            for y in node.years:
                walk(node.body, y)

    walk(formula.expr, formula.default_year)
    return sorted(out)


def phrases(formula: Formula) -> list[str]:
    """The line items' phrases, each once: what figure lookup searches for."""
    return list(dict.fromkeys(i.phrase for i in items(formula.expr)))


def _same_word(a: str, b: str) -> bool:
    """One word in two forms ("operations", "operating"): equal, or long and sharing their first 7 letters."""
    return a == b or (len(a) >= 7 and len(b) >= 7 and a[:7] == b[:7])


class _Matcher:
    """Each leaf's fact: the row whose label fits the phrase (or its glossary words) best, of the year asked;
    at one year, two different phrases never take the same row, nor two rows of the same value."""

    def __init__(self, facts: Sequence[Fact], ignore: Set[str], words: Words | None,
                 named: Set[str] = frozenset()) -> None:
        self.facts = [f for f in facts if f.figure.kind in ("money", "count")]
        self.ignore, self.words, self.named = ignore, words, named
        self.taken: dict[tuple[int, int], str] = {}  # (fact, year) -> the phrase it answers

    @staticmethod
    def _fit(fact: Fact, words: set[str], forms: bool) -> float:
        """How well the row's label names the phrase's `words`; 0 unless the phrase asks for at least half
        the label's words or the label holds all the phrase's ("Additional paid-in capital" is no capex),
        and 0 when the label says the opposite ("Accounts payable" for accounts receivable). `forms`:
        a word may match another form of itself ("operations", "operating")."""
        label = label_words(fact.label.split(" › ")[-1]) or label_words(fact.label)
        if contrasted(label, words):
            return 0.0
        shared = sum(any(_same_word(w, x) if forms else w == x for x in label) for w in words)
        if shared and (shared / max(len(label), 1) >= MIN_LABEL_SHARE or shared == len(words)):
            return shared / max(len(label), 1) + shared / max(len(words), 1)
        return 0.0

    def find(self, phrase: str, year: int, label: str | None = None) -> Fact:
        own = label_words(REVENUE if label_words(phrase) <= _REVENUE_WORDS else phrase) - self.ignore
        # a row another phrase took, or one of the same value (one line item printed in two tables), is not free
        others = {(f.figure.value, y) for f in self.facts for (n, y), p in self.taken.items()
                  if n == f.n and p != phrase}
        free = [f for f in self.facts if f.year == year and self.taken.get((f.n, year), phrase) == phrase
                and (f.figure.value, year) not in others]
        scored = [(fit + (1.0 if f.label == label else 0.0) + preference(f.statement, self.named), f)
                  for f in free if (fit := self._fit(f, own, True)) > 0]
        if not scored and self.words and (extra := label_words(self.words(phrase)) - self.ignore):
            # the glossary's filing words, only when the phrase's own words name no row: they are broad
            scored = [(fit + preference(f.statement, self.named), f) for f in free
                      if (fit := self._fit(f, extra, False)) > 0]
        if not scored:
            raise CalcError(f"no fact of {phrase!r} for {year}")
        fact = max(scored, key=lambda t: (round(t[0], 6), abs(t[1].figure.value)))[1]
        self.taken[(fact.n, year)] = phrase
        return fact


@dataclass
class _Value:
    value: float
    dim: int  # 1: an amount, 0: a ratio
    text: str
    atom: bool = True  # needs no parentheses inside a larger expression


def evaluate(formula: Formula, facts: Sequence[Fact], asked: Asked, *, ignore: Set[str] = frozenset(),
             words: Words | None = None, named: Set[str] = frozenset()) -> Result:
    """The formula's result over `facts`, shown as `asked`; CalcError when a leaf has no fact of its year.
    `named`: the primary statements the question says to read (storage/statements.py)."""
    match = _Matcher(facts, ignore, words, named)
    used: list[Fact] = []
    shown_scale = asked.scale or 1.0

    def amount(f: Fact) -> str:
        used.append(f)
        text = format_figure(f.figure.value, "count", scale=shown_scale, scale_word=False)
        return f"({text})" if text.startswith("-") else text

    def item(node: Item, year: int | None) -> _Value:
        if node.how == "value":
            at = node.years[0] if node.years else year
            if at is None:
                raise CalcError(f"{node.phrase!r} names no year")
            f = match.find(node.phrase, at)
            return _Value(f.figure.value, 1, amount(f))
        earlier_year, later_year = node.years
        later = match.find(node.phrase, later_year)
        earlier = match.find(node.phrase, earlier_year, later.label)
        if node.how == "average":
            return _Value((earlier.figure.value + later.figure.value) / 2, 1,
                          f"(({amount(earlier)} + {amount(later)}) / 2)")
        return _Value(later.figure.value - earlier.figure.value, 1, f"({amount(later)} − {amount(earlier)})")

    def walk(node: Expr, year: int | None) -> _Value:
        if isinstance(node, Num):
            return _Value(node.value, 0, format_number(node.value))
        if isinstance(node, Item):
            return item(node, year)
        if isinstance(node, Mean):
            each = [walk(node.body, y) for y in node.years]
            if any(v.dim != each[0].dim for v in each):
                raise CalcError("the averaged years differ in unit")
            scale = 100.0 if formula.percent and each[0].dim == 0 else 1.0
            texts = " + ".join(f"{v.text} × 100" if scale != 1.0 else v.text for v in each)
            return _Value(sum(v.value for v in each) / len(each) * scale, each[0].dim,
                          f"({texts}) / {len(each)}", atom=True)
        left, right = walk(node.left, year), walk(node.right, year)
        lt = left.text if left.atom or node.op in "+-" else f"({left.text})"
        rt = right.text if right.atom or (node.op == "+" or (node.op == "*" and right.dim == 0)) else f"({right.text})"
        if node.op in "+-":
            if left.dim != right.dim:
                raise CalcError("the formula adds an amount to a ratio")
            value = left.value + right.value if node.op == "+" else left.value - right.value
            return _Value(value, left.dim, f"{lt} {'+' if node.op == '+' else '−'} {rt}", atom=False)
        if node.op == "*":
            return _Value(left.value * right.value, left.dim + right.dim, f"{lt} × {rt}", atom=False)
        if right.value == 0:
            raise CalcError("the formula divides by zero")
        return _Value(left.value / right.value, left.dim - right.dim, f"{lt} / {rt}", atom=False)

    walk(formula.expr, formula.default_year)  # which facts: the working is written at their scale
    scales = {f.figure.scale for f in used}
    if len(scales) > 1 and 1.0 in scales:  # a table whose scale was not read: its digits are not base units
        raise CalcError("the formula mixes amounts at a known scale with one whose scale the table does not say")
    shown_scale, used[:] = asked.scale or min(scales), []
    out = walk(formula.expr, formula.default_year)
    if out.dim not in (0, 1):
        raise CalcError("the formula's result is not an amount or a ratio")
    days = _days(formula.expr) and out.dim == 0
    kind: Kind
    exact = out.value
    if out.dim == 1:
        kind = "money" if any(f.figure.currency for f in used) or asked.currency else "count"
    elif days:
        kind = "count"
    elif formula.percent or asked.percent:
        kind = "percent"
        if not isinstance(formula.expr, Mean):
            exact *= 100
    else:
        kind = "ratio"
    scale = shown_scale if out.dim == 1 else 1.0
    if asked.decimals is not None:
        decimals = asked.decimals
    elif days:
        decimals = DEFAULT_DECIMALS["days"]
    elif kind in DEFAULT_DECIMALS:
        decimals = DEFAULT_DECIMALS[kind]
    else:
        decimals = max((decimals_at(f.figure, scale) for f in used), default=0)
    value = float(round_half_up(exact / scale, decimals)) * scale
    if days:
        text = f"{format_number(value, decimals)} days"
    else:
        text = format_figure(value, kind, scale=scale, decimals=decimals, currency=kind == "money")
    expression = out.text if kind != "percent" or isinstance(formula.expr, Mean) else f"{out.text} × 100"
    markers = tuple(dict.fromkeys(f.source for f in used if f.source))
    cite = "".join(f"[{m}]" for m in markers)
    return Result(op="formula", value=value, exact=exact, kind=kind, decimals=decimals, text=text,
                  working=f"{expression} = {text}" + (f" {cite}" if cite else ""),
                  operands=tuple(dict.fromkeys(f.n for f in used)), markers=markers, scale=scale,
                  unit="days" if days else "")


def calculation_for(question: str, facts: Sequence[Fact], *, ignore: Set[str] = frozenset(),
                    words: Words | None = None) -> Result | None:
    """What code computes for `question` over `facts`: the formula it defines, else one closed-set
    operation whose operands it names (graph/operands.py); None when neither can be done. A defined
    formula whose rows are not all there is no calculation: a closed-set operation over some of its
    words would show a right-looking working of another figure."""
    asked = asked_unit(question)
    try:
        formula = parse(question)
    except CalcError as exc:  # a formula this grammar cannot read: no operation over some of its words
        log.info("no formula: %s", exc)
        return None
    if formula is not None:
        try:
            return evaluate(formula, facts, asked, ignore=ignore, words=words, named=named_statements(question))
        except CalcError as exc:
            log.info("no formula: %s", exc)
            if not _one_division(formula.expr):
                return None
    op = choose_op(question)
    if op and (request := choose(question, op, facts, ignore)) is not None:
        try:
            return compute(request, facts, asked)
        except CalcError as exc:
            log.info("no calculation: %s", exc)
    return None


def _one_division(node: Expr) -> bool:
    """A / B of two line items at one year: what the closed set's ratio computes as well."""
    return (isinstance(node, Bin) and node.op == "/" and all(
        isinstance(side, Item) and side.how == "value" for side in (node.left, node.right)))


def lookup_plan(question: str) -> tuple[list[str], list[int]]:
    """The operands' phrases figure lookup searches for and the years it needs beyond the question's:
    the formula's when the question defines one, else the closed-set operation's (graph/operands.py)."""
    try:
        formula = parse(question)
    except CalcError:
        formula = None
    if formula is not None:
        return phrases(formula), needed_years(formula)
    op = choose_op(question)
    return (operand_phrases(question, op) if op else []), []

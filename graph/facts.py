"""Figure lookup: the table cells a question asks for, as numbered facts generation may copy.

A question that asks for a figure ("What is the FY2018 capital expenditure (in USD millions)?",
"What is the quick ratio?") is matched against the cells of the documents grading kept
(storage/tables.py). A cell's label, section path and caption must share the question's words
(and the glossary's analyst-to-filing words); the period the question names decides the column.
Each fact carries its value already written in the unit the question asks ("$1,577 million"),
the row it sits in (its evidence line, with the row's box on the page), and the excerpt it is
cited by. Code copies the digits; the model only chooses which fact answers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence, Set
from dataclasses import dataclass, replace

from graph.calc import Fact, choose_op
from graph.figures import Asked, Figure, Kind, asked_unit, decimals_at, present
from lexicon import FIGURE_ASKED, OUTFLOW_LABEL, STATEMENT_MENTION, contrasted, without_source
from storage.question_period import AskedPeriod, asked_period
from storage.statements import named_statements, preference, statement_of

# How many facts generation sees: enough for a ratio's operands in two periods, few enough for a
# 1.5B model to pick from.
MAX_FACTS = 8
# Only rows scoring this share of the best match are offered: a small model picks among near
# matches, not between the row asked for and a neighbour that shares a word.
CLOSE_TO_BEST = 0.75
_WORD = re.compile(r"[a-z][a-z&'-]+")
# Words that say how to answer, not what: they never pick a row.
_NOT_A_LABEL_WORD = frozenset(
    ["what", "is", "was", "were", "are", "the", "a", "an", "of", "for", "in", "on", "at", "to", "by", "from", "and",
    "or", "as", "its", "it", "their", "this", "that", "which", "how", "much", "many", "fiscal", "year", "years",
    "fy", "quarter", "usd", "million", "millions", "billion", "billions", "thousand", "thousands", "dollars",
    "figure", "amount", "company", "company's", "give", "response", "question", "relying", "details", "shown",
    "statement", "statements", "round", "rounded", "decimal", "places", "place", "answer", "calculate",
    "calculated", "using", "based", "please", "provide", "report", "reported", "reports", "end", "ended", "inc",
    "corp", "corporation", "ltd", "co", "llc", "plc", "total",
    # whose a figure is, not what: "Net income attributable to ACME Co. shareholders" is the net income
    "attributable", "shareholder", "stockholder"])


def asks_for_figure(question: str) -> bool:
    """The question wants a number: an amount, a ratio, a margin, a rate or a count (said in words,
    by a unit or a rounding it asks for, or by a calculation it names)."""
    asked = asked_unit(question)
    return (bool(FIGURE_ASKED.search(question or "")) or asked.scale is not None or asked.decimals is not None
            or choose_op(question) is not None)


# Analysts' abbreviations, written out as statements label their rows.
ABBREVIATIONS: dict[str, str] = {
    "pp&e": "property plant equipment", "ppe": "property plant equipment", "ppne": "property plant equipment net",
    "capex": "capital expenditures",
    "sg&a": "selling general administrative", "r&d": "research development", "eps": "earnings per share",
    "cogs": "cost of goods sold", "d&a": "depreciation amortization", "fcf": "free cash flow",
    "ebit": "operating income", "a/r": "accounts receivable", "a/p": "accounts payable",
}

def with_abbreviations(text: str) -> str:
    """`text` and the written-out form of each analysts' abbreviation in it: what full-text search reads
    ("net PPNE" also searches "property plant equipment net")."""
    found = {w for w in _WORD.findall((text or "").lower()) if w in ABBREVIATIONS}
    return " ".join([text, *(ABBREVIATIONS[w] for w in sorted(found))])


def without_statement_names(text: str) -> str:
    """`text` without the names of statements: the glossary then expands what it asks, not where to look."""
    return STATEMENT_MENTION.sub(" ", text or "")


def _stem(word: str) -> str:
    """Plurals read as their singular ("revenues" is "revenue", "expenditures" "expenditure")."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


# Words statements use for one thing, read as one: "net earnings" is net income, "net sales" revenue,
# "cost of sales" the cost of revenue, "operating profit" operating income.
SAME_MEANING: dict[str, str] = {"earning": "income", "profit": "income", "sale": "revenue"}


def label_words(text: str) -> set[str]:
    """The words of `text` that can name a row ("capital", "expenditure"), lower-cased, singular, each
    of SAME_MEANING's words read as its equivalent."""
    text = STATEMENT_MENTION.sub(" ", (text or "").lower())
    words: set[str] = set()
    for word in (w.strip("'-") for w in _WORD.findall(text)):
        words.update(ABBREVIATIONS[word].split() if word in ABBREVIATIONS else [word])
    stems = {_stem(w) for w in words}
    return {SAME_MEANING.get(w, w) for w in stems} - _NOT_A_LABEL_WORD


@dataclass(frozen=True)
class Cell:
    """A stored cell as the graph uses it (storage.tables.FoundCell has these fields)."""

    id: int
    document_id: str
    document_name: str
    page: int
    label: str
    path: str  # section path and label: "Current assets › Inventories"
    caption: str
    period_label: str
    period_kind: str | None
    fiscal_year: int | None
    quarter: int | None
    months: int | None
    scale: float
    unit: str
    scale_words: str
    value_text: str
    value: float  # in the table's scale, sign applied
    box: list[float] | None
    row_box: list[float] | None
    rank: float


def cell_kind(cell: Cell) -> Kind:
    if cell.unit == "%":
        return "percent"
    if cell.unit.endswith("/share"):
        return "per_share"
    if cell.unit == "ratio":
        return "ratio"
    if cell.unit == "shares":
        return "count"
    return "money" if cell.unit or cell.scale != 1.0 else "count"


def cell_figure(cell: Cell) -> Figure:
    """The cell's number as a Figure read under its table's scale."""
    kind = cell_kind(cell)
    decimals = len(m.group(1)) if (m := re.search(r"\.(\d+)", cell.value_text)) else 0
    return Figure(number=cell.value, kind=kind, text=cell.value_text, scale=cell.scale,
                  scale_text=cell.scale_words, header=cell.scale != 1.0, decimals=decimals,
                  currency=kind in ("money", "per_share") and (cell.unit.startswith("USD") or "$" in cell.value_text))


# Verbs a question asks with ("How much casino revenue did Amazon make"): they end a phrase, naming no row.
_ASKING = frozenset(["did", "do", "does", "have", "has", "had", "be", "been", "make", "made", "makes", "will",
                     "would", "can", "could", "should", "come", "came", "comes", "spend", "spent", "earn", "earned",
                     "generate", "generated", "bring", "brought", "contribute", "contributed", "account",
                     "accounted", "represent", "represented", "operate", "operated", "deliver", "delivered",
                     "produce", "produced", "carry", "hold", "held", "record", "recorded", "see", "saw", "get", "got",
                     "take", "took", "pay", "grow", "grew"])
_PHRASE_BREAK = re.compile(r"[^\w&'’\s-]+|\b\d[\d,.]*\b")


def unsaid_words(question: str, cell: Cell, ignore: Set[str] = frozenset()) -> list[str]:
    """The question's words, as written, that stand in one phrase with words naming the cell's row but
    that its label, section and caption leave unsaid: "casino" of "casino revenue" beside "Unearned
    revenue". A phrase is a run of words that can name a row, ended by punctuation, a number, a word
    that says how to ask, a verb of asking, a possessive or the company's name. An abbreviation or a word in capitals
    ("capex", "EBITDA") is no word a filing need print as written: it is never one of them."""
    row = label_words(f"{cell.path} {cell.caption}")
    out: list[str] = []
    for segment in _PHRASE_BREAK.split(question or ""):
        run: list[tuple[str, set[str]]] = []
        for token in [*segment.split(), ""]:
            lower = token.lower().strip("'’-")
            possessive = lower.endswith(("'s", "’s"))  # whose the figure is ("Block's"), not what
            words = label_words(lower) - ignore if lower and lower not in _ASKING and not possessive else set()
            if words:
                written = not (lower in ABBREVIATIONS or (token.isupper() and len(token) > 1))
                run.append((lower if written else "", words))
                continue
            if any(w & row for _, w in run):
                out += [t for t, w in run if t and not w <= row and t not in out]
            run = []
    return out


def score(cell: Cell, words: set[str], period: AskedPeriod, pages: set[tuple[str, int]],
          named: Set[str] = frozenset()) -> float:
    """How well a cell answers: its label's share of the question's words first, then the period,
    then its table being a primary statement (`named`: the ones the question says to read), its page
    being one grading kept, and the full-text rank (storage.tables.find_cells)."""
    label = label_words(cell.path)
    if not label or contrasted(label, words):
        return 0.0
    shared = len(label & words)
    if not shared:
        return 0.0
    # a label all of whose words the question uses ("net income"), counted over the row's own label when
    # its section path is long ("Adjustments to reconcile net income to ... › Depreciation and amortization")
    own = label_words(cell.label)
    covered = max(shared / len(label), len(own & words) / len(own) if own else 0.0)
    value = 2.0 * covered + shared / max(len(words), 1)
    if period.years:
        value += 1.5 if cell.fiscal_year in period.years else -1.5
    if period.quarter is not None:
        value += 1.0 if cell.quarter == period.quarter else -1.0
    elif cell.period_kind in ("quarter", "ytd"):
        value -= 0.5  # an annual question: the year's column before a quarter's
    value += preference(statement_of(cell.caption), named)
    if (cell.document_id, cell.page) in pages:
        value += 0.5
    return value + 0.1 * cell.rank


def pick(cells: Iterable[Cell], question: str, pages: set[tuple[str, int]], *, ignore: Set[str] = frozenset(),
         phrases: Sequence[str] = (), glossary: str = "", limit: int = MAX_FACTS,
         years: Sequence[int] = ()) -> list[Cell]:
    """The best cells for `question`, one per row and period, best first.

    `ignore`: words that name the company, never a row ("Net earnings attributable to Best Buy"
    is not what "Best Buy's inventories" asks for). `phrases`: a calculation's operands
    (graph/operands.py), each given an equal share of the facts before the question as a whole.
    `glossary`: the filing words the query glossary adds for the question's analyst words. `years`: the
    years a formula reads beyond those the question names ("3 year average" from FY2017 to FY2019)."""
    cells = list(cells)
    period = asked_period(question)
    if years:  # earliest first, as storage.question_period.AskedPeriod keeps them
        period = replace(period, years=tuple(sorted({*period.years, *years})))
    out: list[Cell] = []
    seen: set[tuple[str, str, str, str]] = set()
    share = max(2, limit // max(len(phrases), 1)) if phrases else limit
    named = named_statements(question)
    # the words that say where to look ("..., according to the Debian FAQ?") name no row
    for text, quota in [*((p, share) for p in phrases), (f"{without_source(question)} {glossary}", limit)]:
        words = label_words(text) - ignore
        scored = sorted(((score(c, words, period, pages, named), c) for c in cells), key=lambda t: -t[0])
        best = scored[0][0] if scored else 0.0
        taken = 0
        for value, cell in scored:
            key = (cell.document_id, cell.path.lower(), cell.period_label.lower(), str(cell.fiscal_year))
            if value <= 0 or value < CLOSE_TO_BEST * best or key in seen:
                continue
            seen.add(key)
            out.append(cell)
            taken += 1
            if taken >= quota or len(out) >= limit:
                break
        if len(out) >= limit:
            break
    return out


def period_of(cell: Cell) -> str:
    """The column's period as a reader says it ("FY2018", "Q2 2023", "as of Dec 31, 2022")."""
    if cell.period_kind == "quarter" and cell.fiscal_year and cell.quarter:
        return f"Q{cell.quarter} FY{cell.fiscal_year}"
    if cell.period_kind == "ytd" and cell.fiscal_year and cell.months:
        return f"{cell.months} months FY{cell.fiscal_year}"
    if cell.fiscal_year and cell.period_kind in ("year", "instant"):
        return f"FY{cell.fiscal_year}" if cell.period_kind == "year" else f"end of FY{cell.fiscal_year}"
    return cell.period_label


def evidence_line(cell: Cell) -> str:
    """The row a fact rests on as the page prints it ("Purchases of property, plant and equipment (1,577)"):
    what the page image highlights."""
    return f"{cell.label} {cell.value_text}".strip()


def evidence_context(cell: Cell) -> str:
    """Where the row stands: its section, its column's period and its table's scale."""
    parts = [" › ".join(cell.path.split(" › ")[:-1]), cell.period_label, cell.scale_words]
    return " · ".join(p for p in parts if p)


def as_fact(n: int, cell: Cell, source: int) -> Fact:
    figure = cell_figure(cell)
    if figure.number < 0 and figure.kind == "money" and OUTFLOW_LABEL.search(cell.label):
        figure = replace(figure, number=-figure.number)
    return Fact(n=n, figure=figure, label=cell.path, source=source, period=period_of(cell),
                statement=statement_of(cell.caption))


def shown_value(fact: Fact, asked: Asked) -> str:
    """The fact's value written in the unit the question asks (its table's digits kept otherwise)."""
    figure = fact.figure
    if figure.kind in ("money", "count") and asked.scale is None:
        # asked no unit: the table's digits with its scale word ("$1,577 million")
        return present(figure.value, figure.kind, Asked(scale=figure.scale if figure.scale != 1.0 else None,
                                                         currency=figure.currency), decimals=figure.decimals)
    decimals = figure.decimals
    if figure.kind in ("money", "count") and asked.scale:
        decimals = decimals_at(figure, asked.scale)
    return present(figure.value, figure.kind, asked, decimals=decimals)


def fact_block(facts: Sequence[Fact], asked: Asked) -> str:
    """The facts as the answering prompt lists them, each with its excerpt's citation marker."""
    if not facts:
        return ""
    lines = [f"F{f.n}: {f.label} ({f.period}) = {shown_value(f, asked)} [{f.source}]" for f in facts]
    return "Figures copied from the documents' tables:\n" + "\n".join(lines) + "\n\n"


def stored_facts(items: Sequence[dict[str, object]], numbers: dict[str, int]) -> list[Fact]:
    """The state's facts (graph/nodes/facts.py) as calc Facts, each cited by its excerpt's number in
    `numbers` (excerpt key -> [n] as generation shows it)."""
    out = []
    for item in items:
        cell = Cell(**item["cell"])  # type: ignore[arg-type]
        out.append(as_fact(int(item["n"]), cell, numbers.get(str(item["key"]), 0)))  # type: ignore[call-overload]
    return out

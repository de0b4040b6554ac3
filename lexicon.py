"""Words of general English the product reads, declared once: every module below and above storage
imports them from here, and patterns are generated from them. Patterns that several modules read
with (a citation marker, a year, a date) are declared here once too.

Scales: how documents and questions write a thousand, a million, a billion, a trillion ("5.1 billion",
"$2,018mn", "in thousands"): figures are read (graph/figures.py), captions scaled (ingestion/numbers.py),
questions' units read and answers written (storage/numbers.py) from the same words.

Function words carry no evidence: a passage is not nearer a question for sharing "the" or "what"
with it (graph/windows.py), and an answer sentence made of them and the question's own words says
nothing new (graph/claims.py). Months, dates, fiscal years and quarters are read with the patterns
below (storage/periods.py turns their matches into dates). Units of measure say how a figure is
counted, not what it is of: "10 miles" of a line "Visibility 10 Miles" is no distance of a crash site (graph/verify.py).
"""

from __future__ import annotations

import calendar
import re

_FUNCTION_WORDS = """
a about above after again against all also am an and any are as at be because been before being below
between both but by can could did do does doing done down during each either else ever every few for from
further had has have having he her here hers herself him himself his how however i if in into is it its
itself just least less let like many may me might more most much must my myself neither no nor not now of
off on once only or other ought our ours ourselves out over own per please same shall she should since so
some such than that the their theirs them themselves then there these they this those through thus to too
under until up upon us very was we were what whatever when whenever where whereas whether which while who
whom whose why will with within without would yet you your yours yourself yourselves
tell give list name state describe explain according based document documents excerpt excerpts say says
said stated shown show mentioned given provided
"""
FUNCTION_WORDS = frozenset(_FUNCTION_WORDS.split())

_UNIT_WORDS = """
mile miles km kilometre kilometres kilometer kilometers metre metres meter meters m cm mm ft foot feet inch inches
yard yards nautical nm knot knots kt kts mph kph hour hours hr hrs minute minutes min mins second seconds sec secs
day days week weeks month months year years mg g kg gram grams kilogram kilograms lb lbs pound pounds ounce ounces
ml l litre litres liter liters gallon gallons percent percentage per degree degrees celsius fahrenheit
"""
# Money's units: what a figure is counted in, not what it is of ("18 cents", "$5 dollars").
CURRENCY_WORDS = frozenset(["dollar", "dollars", "usd", "cent", "cents", "euro", "euros", "eur", "yen", "gbp",
                            "sterling"])
UNIT_WORDS = frozenset(_UNIT_WORDS.split()) | CURRENCY_WORDS

# Numbers written in words ("seven members", "one week").
_CARDINALS = """
zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen
eighteen nineteen twenty
"""
_TENS = "thirty forty fifty sixty seventy eighty ninety"
CARDINALS: dict[str, int] = {w: n for n, w in enumerate(_CARDINALS.split())} | {
    w: 10 * n for n, w in enumerate(_TENS.split(), 3)}
NUMBER_WORD = "|".join([*CARDINALS, "hundred", "thousand", "million", "billion", "trillion", "dozen", "half", "once",
                        "twice"])

# Words an answer presents its value with, saying nothing of what it is ("The figure is 412 million",
# "According to the excerpt, the answer is ...").
_PRESENTING_WORDS = """
answer answers figure figures value values amount number result total stated states state says said shown
shows show given gives according excerpt excerpts document documents source sources reported reports
approximately about roughly around
"""
PRESENTING_WORDS = frozenset(_PRESENTING_WORDS.split())

# Words that deny what their statement says ("This vote cannot be canceled.").
NEGATION_WORDS = frozenset(["not", "no", "never", "cannot"])
# Words that answer yes or no, or deny: they say whether, not what ("Yes, the agreements survive.").
POLARITY_WORDS = NEGATION_WORDS | frozenset(["yes", "none", "neither", "nor", "without"])

SCALE_WORDS: dict[float, str] = {1e3: "thousand", 1e6: "million", 1e9: "billion", 1e12: "trillion"}
# Abbreviations written after a figure ("$2,018mn", "$1.8 bn", "$5k"); the one-letter ones only attached.
SCALE_ABBREVIATIONS: dict[str, float] = {"k": 1e3, "mn": 1e6, "mm": 1e6, "m": 1e6, "bn": 1e9, "b": 1e9, "tn": 1e12}
SCALES: dict[str, float] = {
    **{word: factor for factor, word in SCALE_WORDS.items()},
    **{word + "s": factor for factor, word in SCALE_WORDS.items()},
    **SCALE_ABBREVIATIONS,
}
# Patterns to embed: a scale word in the plural a caption uses ("in millions"), or either number.
SCALE_PLURAL = "|".join(word + "s" for word in SCALE_WORDS.values())
SCALE_WORD = "|".join(word + "s?" for word in SCALE_WORDS.values())
SCALE_ABBREVIATION = "|".join(a for a in SCALE_ABBREVIATIONS if len(a) > 1)


# -- reading words out of text -----------------------------------------------------------------------------------------
# Words as runs of ASCII letters ("U.S." is "U", "S"), or of letters and digits ("3M", "10"): every
# module that counts or compares a text's words reads them with these, not with its own pattern.
_LETTERS = re.compile(r"[A-Za-z]+")
_LETTERS_AND_DIGITS = re.compile(r"[A-Za-z0-9]+")


def letter_words(text: str, least: int = 1) -> list[str]:
    """The runs of letters in `text` at least `least` long, as written."""
    return [w for w in _LETTERS.findall(text) if len(w) >= least]


def alnum_words(text: str) -> list[str]:
    """The runs of letters and digits in `text`, as written."""
    return _LETTERS_AND_DIGITS.findall(text)


def squashed(text: str) -> str:
    """`text` lower-cased with only its letters and digits: "Advanced Micro-Devices" -> "advancedmicrodevices"."""
    return "".join(alnum_words(text.lower()))


# A citation marker as answers write it: "[1]", "[2, 3]" (the numbers are group 1).
MARKER = r"\[(\d+(?:\s*,\s*\d+)*)\]"
MARK = re.compile(MARKER)
# A year's four digits, 1900-2099, wherever they stand ("FY2022", "2019-20"): storage/periods.py's
# YEAR is the year written alone.
YEAR_DIGITS = re.compile(r"(?:19|20)\d\d")


# -- months, dates and periods -----------------------------------------------------------------------------------------
# How text names a period: "Q2 FY23", "2Q23", "fiscal '22" or "Sept. 30, 2023" read the same wherever
# they are written (a question, a cover page, a column header, an answer sentence).
MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
MONTHS["sept"] = 9
# Months' and days' full names: a date's words, never a name's.
CALENDAR_NAMES = frozenset(m.lower() for m in (*calendar.month_name, *calendar.day_name) if m)
# a month's name or abbreviation, as a pattern to embed (every spelling is a key of MONTHS)
MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
         r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?")
MONTH_ANYWHERE = re.compile(MONTH, re.I)
MONTH_BEFORE = re.compile(rf"\b{MONTH}\s*$", re.I)  # a month's name just before: "December 31" is no figure
# A month's full name, capitalised, not a sentence's first word ("in March", not "March was ...").
MONTH_NAME = re.compile(r"(?<!^)(?<![.!?]\s)\b(" + "|".join(m for m in calendar.month_name if m) + r")\b")
# One word that names a period, not a thing: "March", "Monday", "fiscal", "Q2", "FY2023".
CALENDAR_WORD = re.compile(rf"^{MONTH}$|^(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*day$"
                           r"|^(?:fiscal|year|quarter|q[1-4]|fy\d*)$", re.IGNORECASE)
_YEAR4 = r"(?P<year>(?:19|20)\d{2})"
# "December 31, 2022", "Sept. 30 2023"; DAY_FIRST: "30 June 2023", "1st of July, 2022" (patterns to embed)
DATE = rf"(?P<month>{MONTH})\s+(?P<day>\d{{1,2}})\s*,?\s*{_YEAR4}"
DAY_FIRST = rf"(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<month>{MONTH}),?\s+{_YEAR4}"
DATES = (re.compile(rf"\b{DATE}\b", re.I), re.compile(rf"\b{DAY_FIRST}\b", re.I))
# As answers write dates: "December 11th 1995", "March 3, 2019"; "2019-03-03"; "March 1996", "May of 2001".
MONTH_DAY = re.compile(rf"\b(?P<month>{MONTH})\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?,?\s+{_YEAR4}\b", re.I)
ISO_DATE = re.compile(r"\b((?:19|20)\d{2})-(\d{2})-(\d{2})\b")
MONTH_YEAR = re.compile(rf"\b(?P<month>{MONTH})\s+(?:of\s+)?{_YEAR4}\b", re.I)
# a year written alone: not part of an amount ("$2019 million", "1,2019", "2019.5") nor a percentage
YEAR = re.compile(rf"(?<![\d,.$]){_YEAR4}(?![\d%]|[,.]\d)")
# "FY23", "fiscal 2022", "fiscal year '22"
FISCAL = re.compile(r"\b(?:fiscal(?:\s+year)?|fy)\s*'?(?P<year>(?:19|20)?\d{2})\b", re.I)
# "Q2", "Q2 FY23", "2Q23", "second quarter", "2nd fiscal quarter of fiscal 2023", with the year when it follows
QUARTER = re.compile(
    r"\b(?:q(?P<n>[1-4])|(?P<n2>[1-4])q|(?P<word>first|second|third|fourth|1st|2nd|3rd|4th)\s+(?:fiscal\s+)?quarter)"
    r"(?:\s*(?:(?:of|in|for)\s+)?(?:the\s+)?(?:fiscal\s+(?:year\s+)?|fy\s*)?'?(?P<year>(?:19|20)?\d{2})\b|\b)", re.I)
QUARTER_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}


# -- questions ---------------------------------------------------------------------------------------------------------
# How a question is put, whatever it asks of: the words it opens with, where it says to look, what
# kind of answer its form asks for (graph/reading.py), whether it wants one figure (graph/compose.py,
# graph/facts.py).
AUXILIARIES = ("is", "are", "was", "were", "do", "does", "did", "can", "could", "will", "would", "should", "shall",
               "has", "have", "had", "may", "might", "must")
QUESTION_WORDS = ("what", "which", "who", "whom", "whose", "how", "when", "where", "why")
# What "how ..." asks the size of: "how long", "how far", "how many".
DIMENSIONS = ("many", "much", "long", "far", "old", "often", "large", "big", "high", "tall", "fast", "heavy", "wide",
              "deep")


def _either(words: tuple[str, ...] | list[str]) -> str:
    return "(?:" + "|".join(words) + ")"


# A framing before the question proper: "According to the report, who ...", "As of v4.74b, is ...",
# and a condition before its question word ("If I fix it, how long ...").
_SOURCE = r"(?:according\s+to|based\s+on|using|considering|given|in|from|per|as\s+of|under)\b[^,?]*"
_OPENERS = _either([*QUESTION_WORDS, *(a for a in AUXILIARIES if a not in ("shall", "has", "have", "had", "might"))])
QUESTION_FRAMING = re.compile(
    rf"^\W*(?:{_SOURCE},\s*|(?:if|when|once|after|before|while)\b[^,?]*,\s*(?={_OPENERS}\b))", re.I)
# Where to look, not what is asked: "According to the study, ..." and "..., per the study?"
QUESTION_SOURCE = re.compile(rf"^\W*{_SOURCE},\s*|,\s*(?:according\s+to|per|as\s+(?:stated|given|reported)\s+in)\b"
                             r"[^,?]*(?=\?*\s*$)", re.I)
ASKED_DIMENSION = re.compile(rf"\bhow\s+({'|'.join(d for d in DIMENSIONS if d not in ('many', 'much'))})\b", re.I)
# What a question's form asks for, tried in order (graph/reading.py `kind_of`).
QUESTION_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("explanation", re.compile(r"^\W*why\b|^\W*what\s+happens\b", re.I)),
    ("yes_no", re.compile(rf"^\W*{_either(AUXILIARIES)}\b", re.I)),
    ("date", re.compile(r"^\W*(?:when|since\s+when|until\s+when|by\s+when)\b"
                        r"|\b(?:what|which)\s+(?:[\w-]+\s+){0,4}?(?:year|date|day|month)\b", re.I)),
    ("name", re.compile(r"^\W*(?:who|whom|which)\b|\bwhose\b|\bthe\s+name\s+of\b|\bwho\s+(?:is|was|are|were)\b",
                        re.I)),
    ("value", re.compile(rf"\bhow\s+{_either(DIMENSIONS)}\b|\bthe\s+(?:most|least|maximum|minimum|longest|shortest|"
                         r"largest|smallest|number|amount)\b", re.I)),
    ("list", re.compile(r"^\W*(?:list|enumerate|name\s+(?:the|all|every|each))\b|\bwhat\s+are\s+the\s+(?:\w+\s+)?"
                        r"(?:steps|types|kinds|criteria|conditions|requirements|components|parts|stages|phases)\b",
                        re.I)),
    ("explanation", re.compile(r"^\W*how\b|\b(?:explain|describe|summari[sz]e)\b|\bwhat\s+(?:is|was|are|were)"
                               r"\s+the\s+(?:purpose|reason|role|goal|objective|rationale)s?\b", re.I)),
)
# A verdict asked of a figure ("Did revenue grow?"): the auxiliaries a figure question may open with.
FIGURE_VERDICT = re.compile(
    rf"^\W*{_either([a for a in AUXILIARIES if a not in ('shall', 'may', 'might', 'must')])}\b", re.I)
# A reason or a choice among things is prose, even when the question names a figure.
PROSE_ASKED = re.compile(
    r"\b(?:why|explain\w*|drove|driven|drivers?|reasons?|describe|discuss|summar\w+|which|whether|what\s+(?:are|were)"
    r"\s+the\s+(?:main|key|major|primary|biggest|largest)|how\s+(?:did|does|has|have|is|are|was|were)\b(?!\s+(?:much|many)))",
    re.I)
# What the question calls its figure: "what was the FY2019 fixed asset turnover ratio for ..." and where that ends.
METRIC_ASKED = re.compile(r"\b(?:what\s+(?:is|was|were|are)|how\s+(?:much|many))\s+(?:the\s+|is\s+|was\s+)?(?P<m>.+)",
                          re.I | re.S)
METRIC_END = re.compile(r"\s+(?:for|did|does|do|according|based|as\s+of|reported|at\s+the\s+end)\b.*$|\s*[?(].*$",
                        re.I | re.S)
# A question asks for a figure when it says so in one of these ways (graph/facts.py `asks_for_figure`
# adds a unit, a rounding or an operation it names).
FIGURE_ASKED = re.compile(
    r"\bhow\s+(?:much|many)\b|\bwhat\s+(?:is|was|were|are)\s+(?:the\s+)?(?:[\w'’]+\s+){0,6}?"
    r"(?:amount|total|value|figure|number|balance|revenue|sales|income|loss|expense|margin|ratio|cash|debt|"
    r"assets|liabilities|equity|earnings|eps|dividends?|capex|expenditures?|profit|ebitda|cost|turnover|rate)\b"
    rf"|\bratio\b|\bmargin\b|\bin\s+(?:usd\s+)?(?:{SCALE_PLURAL})\b|\bper\s+share\b|\bpercent",
    re.IGNORECASE)


# -- financial statements and filings ----------------------------------------------------------------------------------
# kind -> the title's letters, spaces removed (text laid out letter by letter, "Balance Shee t", still
# reads; also a Postgres pattern); "statements of comprehensive income" is none of them
STATEMENT_TITLES: dict[str, str] = {
    "income": r"statements?of(?:consolidated)?(?:operations|income|earnings)|incomestatements?",
    "balance": r"balancesheets?|statements?of(?:consolidated)?financial(?:position|condition)",
    "cash": r"statements?of(?:consolidated)?cashflows?|cashflowstatements?",
}
STATEMENT_TITLE_PATTERNS = {kind: re.compile(pattern) for kind, pattern in STATEMENT_TITLES.items()}
# how questions name them ("the P&L", "the statement of income", "cash flow statement")
STATEMENTS_NAMED = {
    "income": re.compile(r"\b(?:income\s+statements?|statements?\s+of\s+(?:operations|income|earnings)|p\s*&\s*l"
                         r"|profit\s+and\s+loss)\b", re.I),
    "balance": re.compile(r"\b(?:balance\s+sheets?|statements?\s+of\s+financial\s+(?:position|condition))\b", re.I),
    "cash": re.compile(r"\b(?:cash\s*flows?\s+statements?|statements?\s+of\s+cash\s*flows?)\b", re.I),
}
# A statement's name in running words, which says where to look, never which row (graph/facts.py).
STATEMENT_MENTION = re.compile(r"\b(?:(?:income|cash\s*flows?|balance)\s+(?:statements?|sheets?)"
                               r"|statements?\s+of\s+(?:financial\s+position|cash\s+flows?|operations|income|earnings)"
                               r"|p&l)\b", re.IGNORECASE)
# The kind of filing a question names.
FORMS_NAMED: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(?:form\s*)?10\s*-?\s*k\b|\bannual\s+report\b", re.I), "10-K"),
    (re.compile(r"\b(?:form\s*)?10\s*-?\s*q\b|\bquarterly\s+report\b", re.I), "10-Q"),
    (re.compile(r"\b(?:form\s*)?8\s*-?\s*k\b|\bcurrent\s+report\b", re.I), "8-K"),
    (re.compile(r"\b(?:earnings|press)\s+release\b|\bearnings\s+report\b", re.I), "earnings release"),
)
# A form as a filter writes it ("10k", "Form 10-K", "10 K"), and a release ("earnings", "press release").
FORM_WRITTEN = re.compile(r"^(?:form\s*)?(10|8|20|40|6)\s*-?\s*([kqf])$", re.I)
RELEASE_WRITTEN = re.compile(r"^(?:earnings|press|news)?\s*(?:release|results|earnings)$", re.I)
# a filing's own period label (ingestion/context.py): "FY2022", "Q2 FY2024"
PERIOD_LABEL = re.compile(r"^(?:Q(?P<quarter>[1-4])\s+)?FY(?P<year>\d{4})$")

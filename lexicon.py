"""Words the product reads, and the patterns spelled from them, declared once: every module below and
above storage imports them from here. Patterns that several modules read with (a citation marker, a
year, a number's digits, a date) are declared here once too; graph/ and storage/ keep only structural
patterns (tests/unit/test_pattern_budget.py holds their count).

Scales: how documents and questions write a thousand, a million, a billion, a trillion ("5.1 billion",
"$2,018mn", "in thousands"): figures are read (graph/figures.py), captions scaled (ingestion/numbers.py),
questions' units read and answers written (storage/numbers.py) from the same words.

Function words carry no evidence: a passage is not nearer a question for sharing "the" or "what"
with it (graph/windows.py), and an answer sentence made of them and the question's own words says
nothing new (graph/claims.py). Units of measure say how a figure is counted, not what it is of:
"10 miles" of a line "Visibility 10 Miles" is no distance of a crash site (graph/verify.py).

Below them, by section: how text is split into words; months, dates and periods (storage/periods.py
turns their matches into dates); question forms; statement titles and filing forms; units and the
unit a question asks; operations' phrasings and the words formulas are written in; how answers
decline, deny and point back. Patterns with the same purpose that still disagree sit side by side
(evals/results/pattern_budget.md lists them): merging them changes what is read, a measured step.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Set

_FUNCTION_WORDS = """
a about above after again against all also am an and any are as at be because been before being below
between both but by can could did do does doing done down during each either else ever every few for from
further had has have having he her here hers herself him himself his how however i if in into is it its
itself just least less let like many may me might more most much must my myself neither no nor not now of
off on once only or other ought our ours ourselves out over own per please same shall she should since so
some such than that the their theirs them themselves then there these they this those through thus to too
under until up upon us very was we were what whatever when whenever where whereas whether which while who
whom whose why will with within without would yet you your yours yourself yourselves
someone somebody something anyone anybody anything everyone everybody everything nobody nothing
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
# Units written glued to their number ("100MB", "5mg", "10km", "2.4GHz"): the number is a figure all the same.
# Not "m", "b", "k" or "mm" (a scale: "$3M", "1.2B", "$5MM") nor "g" or "l" alone (codes: "5G", "4L").
_GLUED_UNITS = """
kb mb gb tb pb kib mib gib tib kbps mbps gbps mg kg mcg ml cm km ms ns hz khz mhz ghz dpi ppi pt px mph kph kmh
kts ft lb lbs oz kw kwh mwh hrs hr min mins sec secs bpm mmhg mmol
"""
GLUED_UNITS = frozenset(_GLUED_UNITS.split())

# Numbers written in words ("seven members", "one week").
_CARDINALS = """
zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen
eighteen nineteen twenty
"""
_TENS = "thirty forty fifty sixty seventy eighty ninety"
CARDINALS: dict[str, int] = {w: n for n, w in enumerate(_CARDINALS.split())} | {
    w: 10 * n for n, w in enumerate(_TENS.split(), 3)}
# A whole number below a hundred written in words ("thirty six", "thirty-six", "twelve"): group 1 the tens, 2 the units.
_UNITS = "|".join(w for w, n in CARDINALS.items() if 0 < n < 10)
SPELLED_NUMBER = re.compile(rf"\b(?:(twenty|{'|'.join(_TENS.split())})(?:[\s-]+({_UNITS}))?|({'|'.join(CARDINALS)}))\b",
                            re.IGNORECASE)


def spelled_numbers(text: str) -> list[tuple[int, int, int]]:
    """The whole numbers below a hundred `text` writes in words, as (value, start, end): "the thirty six streams"
    -> 36."""
    out = []
    for m in SPELLED_NUMBER.finditer(text):
        tens, units, alone = m.groups()
        value = CARDINALS[(alone or tens).lower()] + (CARDINALS[units.lower()] if units else 0)
        out.append((value, m.start(), m.end()))
    return out


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
# An English inflection or a final e, dropped to compare words of one root: "used", "uses", "using" and "use".
INFLECTION = re.compile(r"(?<=[a-z]{2})(?:ing|ed|es|e|s|d)$")

# Words that number the things of a document, written before their number: "version 1.4", "Section 4.2",
# "Flight 1549" (a capitalised word before a number is read as such a name too: "Debian 1.0").
_NUMBERING_WORDS = """
version release revision section chapter part phase step stage item article clause paragraph appendix annex
figure table exhibit schedule note rule goal objective flight trial study cohort arm visit level class volume issue
"""
NUMBERING_WORDS = frozenset(_NUMBERING_WORDS.split())
# A thing named by a word and a number: "Debian 1.0", "MPL 2.0", "Section 4.2", "Flight 1549", "Phase 2"
# (not a year, not a code's part like "Form 10-K"); the number may carry a release's letters ("0.93R6"); a word
# capitalised within too ("NetHack 3.6", "PostgreSQL 15").
NUMBERED_NAME = re.compile(rf"\b([A-Z][a-z][A-Za-z]*|[A-Z]{{2,}}|(?:{'|'.join(sorted(NUMBERING_WORDS))}))\s+[vV]?"
                           r"(\d+(?:\.\d+)*(?:[A-Za-z]+\d*)?)(?![\w-])")

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
LETTERS = re.compile(r"[A-Za-z]+")
_LETTERS_AND_DIGITS = re.compile(r"[A-Za-z0-9]+")


def letter_words(text: str, least: int = 1) -> list[str]:
    """The runs of letters in `text` at least `least` long, as written."""
    return [w for w in LETTERS.findall(text) if len(w) >= least]


def alnum_words(text: str) -> list[str]:
    """The runs of letters and digits in `text`, as written."""
    return _LETTERS_AND_DIGITS.findall(text)


# A word written as code: words joined by underscores ("R_PAPERSIZE", "_NET_WM_STATE_FULLSCREEN") or letters
# glued to digits ("PYTHONUTF8", "md5", "DebConf14"). A name whatever its case; "FY2023" and "Q2" are periods.
CODE_WORD = re.compile(r"(?<![\w.-])[A-Za-z_]\w*?(?:_[A-Za-z0-9]|[A-Za-z]\d)\w*(?![\w-])")
# Words joined into one ("keyword-idents", "print_results"): a name, whatever words it is made of.
JOINED_WORD = re.compile(r"(?<![\w-])[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)+(?![\w-])")
# A version's or code's number, which no figure reads ("3.6.0", "v2.7.0", "1.8-4"): two points, or a point and a
# dash.
CODE_NUMBER = re.compile(r"(?:(?<=\b[vV])|(?<![\w.-]))\d+(?:\.\d+){2,}(?![\w-])|(?<![\w.-])\d+\.\d+-\d+(?![\w-])")
# Any number as a text writes it, a release's letters included ("3.6", "0.93R6").
ANY_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)*(?:[A-Za-z]+\d*)?(?![\d])")
_CODE_PARTS = re.compile(r"_+|(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])")


def spelled_apart(name: str) -> str:
    """`name` with a code word's parts apart ("UTF8" -> "UTF 8", "R_PAPERSIZE" -> "R PAPERSIZE"): a text
    writing "UTF-8" mentions it; a full-text search reads each part as a word."""
    return " ".join(_CODE_PARTS.sub(" ", name).split())


# The short forms English writes for the common words of names ("Cumberland Univ.", "Mt. Vernon", "Dept. of
# Energy"), a full-text search reading each without its full stop.
ABBREVIATED: dict[str, str] = {
    "association": "assn", "brothers": "bros", "captain": "capt", "colonel": "col", "company": "co",
    "corporation": "corp", "county": "co", "department": "dept", "doctor": "dr", "fort": "ft", "general": "gen",
    "government": "govt", "governor": "gov", "incorporated": "inc", "institute": "inst", "international": "intl",
    "junior": "jr", "lieutenant": "lt", "limited": "ltd", "mount": "mt", "national": "natl", "president": "pres",
    "professor": "prof", "reverend": "rev", "saint": "st", "senior": "sr", "sergeant": "sgt", "society": "soc",
    "street": "st", "university": "univ"}


def written_forms(name: str) -> list[str]:
    """The ways a text may write `name`: as the question does, with a code word's parts apart ("UTF 8"), its
    words joined ("Tsar Bomba" -> "TsarBomba", a units file's "tsarbomba") and its common words abbreviated
    ("Cumberland University" -> "Cumberland Univ", an almanac's "Cumberland Univ.")."""
    words = name.split()
    forms = [name, spelled_apart(name)]
    if len(words) > 1:
        forms.append("".join(words))
        short = [ABBREVIATED.get(w.lower(), w) for w in words]
        if short != words:
            forms.append(" ".join(short))
    return list(dict.fromkeys(forms))


# A possessive ending, straight or curly: a name reads the same with it or without ("Developer’s Reference").
POSSESSIVE = re.compile(r"['’]s\b")


def squashed(text: str) -> str:
    """`text` lower-cased with only its letters and digits, possessive endings cut: "Advanced Micro-Devices" ->
    "advancedmicrodevices", "the Developer’s Reference" -> "thedeveloperreference"."""
    return "".join(alnum_words(POSSESSIVE.sub("", text.lower())))


# A word in capitals, with a letter ("AMCOR", "3M", "10-K"; not "2023"): an acronym, a ticker, a name
# written so. graph/reading.py drops them from a question's measure, graph/filers.py reads filers by them.
CAPITALS = re.compile(r"\b(?=[A-Z0-9&.-]*[A-Z])[A-Z0-9][A-Z0-9&.-]+\b")

# A citation marker as answers write it: "[1]", "[2, 3]" (the numbers are group 1).
MARKER = r"\[(\d+(?:\s*,\s*\d+)*)\]"
MARK = re.compile(MARKER)
# A year's four digits, 1900-2099, wherever they stand ("FY2022", "2019-20"): storage/periods.py's
# YEAR is the year written alone.
YEAR_DIGITS = re.compile(r"(?:19|20)\d\d")
# A number's digits as written, from its first digit to its last ("1,234.5"; "1.," reads "1"): no sign, no unit.
DIGITS = re.compile(r"\d[\d,.]*\d|\d")


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
# "December 31, 2022", "Sept. 30 2023"; DAY_FIRST: "30 June 2023", "1st of July, 2022", "19.Oct.1993",
# "3-May-2020" (patterns to embed)
DATE = rf"(?P<month>{MONTH})\s+(?P<day>\d{{1,2}})\s*,?\s*{_YEAR4}"
_DATE_PART = r"(?:\s+|[./-])"  # what parts of a date are written apart by: a space, a point, a slash, a dash
DAY_FIRST = (rf"(?P<day>\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of\s+|{_DATE_PART})(?P<month>{MONTH}),?"
             rf"(?:{_DATE_PART}|(?<=\.)){_YEAR4}")
DATES = (re.compile(rf"\b{DATE}\b", re.I), re.compile(rf"\b{DAY_FIRST}\b", re.I))
# "1972 Jan 7", "2019 March 3": a year first, as data files, logs and reference lists write a day
YEAR_FIRST = re.compile(rf"\b{_YEAR4}{_DATE_PART}(?P<month>{MONTH}){_DATE_PART}?(?P<day>\d{{1,2}})\b(?![:.,]\d)", re.I)
# As answers write dates: "December 11th 1995", "March 3, 2019"; "2019-03-03"; "March 1996", "May of 2001".
MONTH_DAY = re.compile(rf"\b(?P<month>{MONTH})\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?,?\s+{_YEAR4}\b", re.I)
ISO_DATE = re.compile(r"\b((?:19|20)\d{2})-(\d{2})-(\d{2})\b")
MONTH_YEAR = re.compile(rf"\b(?P<month>{MONTH})\s+(?:of\s+)?{_YEAR4}\b", re.I)
# A date written whole, each pattern with groups year, month and day: "July 24th, 1998", "24 July 1998", "1972 Jan 7"
WHOLE_DATES = (MONTH_DAY, DATES[1], YEAR_FIRST)
# "May 18th" with no year after it
MONTH_DAY_ALONE = re.compile(rf"\b(?P<month>{MONTH})\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\b"
                             r"(?!\s*,?\s*(?:19|20)\d{2})", re.I)
# The words of a date (a month's name, a day's number): a statement shares them with any date.
DATE_WORDS = re.compile(rf"\b{MONTH}|\b\d+(?:st|nd|rd|th)?\b", re.I)
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


def without_source(question: str) -> str:
    """The question without the phrase that says where to look ("According to the Counting potatoes
    article, what share ..." -> "what share ..."): the source's words say nothing of what is asked."""
    return QUESTION_SOURCE.sub("", question or "")


ASKED_DIMENSION = re.compile(rf"\bhow\s+({'|'.join(d for d in DIMENSIONS if d not in ('many', 'much'))})\b", re.I)
# What a question's form asks for, tried in order (graph/reading.py `kind_of`).
QUESTION_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("explanation", re.compile(r"^\W*why\b|^\W*what\s+happens\b", re.I)),
    ("yes_no", re.compile(rf"^\W*{_either(AUXILIARIES)}\b", re.I)),
    ("date", re.compile(r"^\W*(?:when|since\s+when|until\s+when|by\s+when)\b"
                        r"|\b(?:what|which)\s+(?:[\w-]+\s+){0,4}?(?:year|date|day|month)\b", re.I)),
    # "In which release ...", "On which level ...": a preposition before "which" asks what "which" asks
    ("name", re.compile(r"^\W*(?:(?:in|on|at|from|for|by|to|with|under|of|into)\s+)?(?:who|whom|which)\b|\bwhose\b"
                        r"|\bthe\s+name\s+of\b|\bwho\s+(?:is|was|are|were)\b", re.I)),
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


# -- units, scales and what a number is counted in ---------------------------------------------------------------------
# Headers that scale a table by a thousand without a word ("(000s)", "in $'000s", "$000"), or say
# that its bare numbers are percentages ("(%)", "in percent").
HEADER_000 = re.compile(r"\(\s*(?:in\s+)?[$€£]?\s*'?000'?s?\s*\)|\bin\s+[$€£]?\s*'?000'?s\b|\$\s*000s?\b", re.I)
HEADER_PERCENT = re.compile(r"\(\s*(?:in\s+)?(?:%|percent|percentages?)\s*\)|\bin\s+percent", re.I)
# Table and passage headers that scale the bare numbers under them: "(in millions)", "Dollars in thousands".
HEADER_SCALE = re.compile(
    r"(?P<lead>\(\s*(?:[$€£]\s*|usd\s+|dollars\s+|amounts\s+)?(?:in\s+)?"
    r"|\b(?:in|dollars\s+in|amounts\s+in|usd\s+in)\s+(?:usd\s+|us\$\s*|\$\s*|u\.s\.\s+dollars\s+)?"
    r"|[$€£]\s*in\s+)"
    rf"(?P<word>{SCALE_PLURAL})\b(?P<rest>[^)\n|]{{0,80}}\)?)", re.IGNORECASE)
# A unit written glued to its number ("100MB", "5mg", "2.4GHz"): the longest spelling first.
GLUED_UNIT = re.compile(rf"(?:{'|'.join(sorted(GLUED_UNITS, key=len, reverse=True))})(?![A-Za-z0-9])", re.IGNORECASE)
MONEY_WORDS = re.compile(r"[$€£]|\bdollars?\b|\busd\b|\beuros?\b|\bu\.s\.", re.IGNORECASE)
# Row labels whose numbers a table's scale never applies to.
PER_SHARE_LABEL = re.compile(r"\bper\s+(?:\w+\s+){0,3}(?:share|unit)s?\b|\beps\b|\bearnings\s+per\b", re.I)
# not a format's code ("%y", "%d"): a percent sign is a unit, written alone or after its number
PERCENT_LABEL = re.compile(r"%(?![A-Za-z])|\bpercent(?:age)?s?\b|\bbasis\s+points?\b", re.I)
RATIO_LABEL = re.compile(r"\bratio\b|\btimes\b", re.I)
# "per share" after a figure, its class words between ("$1.20 per diluted share"), and in a phrase.
PER_SHARE_AFTER = re.compile(r"\s*(?:per|a|/)\s*(?:\w+\s+){0,2}share\b", re.IGNORECASE)
PER_SHARE_PHRASE = re.compile(r"\bper\b[\w\s]{0,30}\bshares?\b", re.I)
# Words before a number that make it a reference, not a figure: "Note 7", "Item 1A", "page 45", "Level 3".
REFERENCE_BEFORE = re.compile(
    r"(?:\b(?:notes?|items?|pages?|p\.|pp\.|parts?|sections?|exhibits?|schedules?|rules?|asu|asc|topics?|form|"
    r"chapters?|articles?|no\.|footnotes?|s&p|fortune|level|tier)\s*)$", re.IGNORECASE)
# Percent said in a question's or a label's words: a percentage, a rate, a margin asked.
PERCENT_OR_MARGIN = re.compile(r"%|\bpercent|\bmargin\b", re.I)
PERCENT_RATE_OR_MARGIN = re.compile(r"percent|%|\brate\b|\bmargin\b", re.I)
# How the answer is to be written, not what it is of: "(in units of percents)", "as a %", "growth rate".
ANSWER_IN_PERCENT = re.compile(r"\b(?:in\s+(?:units\s+of\s+)?|as\s+an?\s+|expressed\s+as\s+(?:an?\s+)?)"
                               r"(?:percent(?:s|ages?)?|%)(?![a-z])(?!\s+of\b)"
                               r"|\b(?:growth|annual|change)\s+rate\b|\brate\s+of\s+(?:growth|change)\b", re.I)
# The unit and rounding a question asks its figures in (graph/figures.py `asked_unit`).
ASKED_SCALE = re.compile(r"(?:\bin\s+|\(\s*)(?:usd\s+|us\$\s*|\$\s*|u\.s\.\s+dollars\s+|dollars\s+|eur\s+|€\s*)?"
                         rf"({SCALE_PLURAL})\b|\b(?:usd|us\$|\$)\s*({SCALE_PLURAL})\b", re.IGNORECASE)
ASKED_DECIMALS = re.compile(r"\b(\d|zero|no|one|two|three|four|five|six)\s+decimals?\b", re.IGNORECASE)
# "to the nearest tenth": the decimals each word leaves
NEAREST: dict[str, int] = {"tenth": 1, "hundredth": 2, "thousandth": 3, "whole": 0, "integer": 0, "dollar": 0,
                           "cent": 2, "percent": 0}
ASKED_NEAREST = re.compile(rf"\bnearest\s+({'|'.join(NEAREST)})|\bwhole\s+(?:number|percent)", re.IGNORECASE)
ASKED_POINTS = re.compile(r"\b(?:in\s+)?(?:percentage\s+points|basis\s+points)\b", re.IGNORECASE)
ASKED_PERCENT = re.compile(r"\bas\s+an?\s+(?:percent(?:age)?|%)|\bin\s+(?:percent(?:age)?s?|%)"
                           r"|\bwhat\s+percent(?:age)?\b|\bpercentage\s+(?:of|change|increase|decrease)\b"
                           r"|\bexpressed\s+as\s+(?:a\s+)?(?:percent(?:age)?|%)|\(\s*%\s*\)", re.IGNORECASE)
ASKED_CURRENCY = re.compile(r"\busd\b|\bus\$|\$|\bdollars?\b", re.IGNORECASE)


# -- operations: how a question asks for a calculation -----------------------------------------------------------------
# Which operation a question's words ask for, written from general English and finance usage, checked
# in order; the first that matches wins (graph/calc.py `choose_op` settles its unit's confusions).
_CHANGE = r"\b(?:change[ds]?|increase[ds]?|decrease[ds]?|decline[ds]?|rise|rose|drop(?:ped)?|fell)\b"
OPERATION_PHRASINGS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (op, re.compile(pattern, re.IGNORECASE)) for op, pattern in (
        ("cagr", r"\bcagr\b|\bcompound(?:ed)?\s+annual(?:\s+growth)?\b"),
        ("days", r"\bdays?\s+(?:of\s+)?(?:sales|inventor(?:y|ies)|payables?|receivables?)\b|\b(?:dso|dio|dpo)\b"),
        ("turnover", r"\bturnover\b"),
        ("per_share", r"\bper\s+(?:\w+\s+)?share\b"),
        ("percentage", r"\bas\s+an?\s+(?:percent(?:age)?|%|share|proportion|fraction)\s+of\b"
                       r"|\b(?:what|which)\s+(?:percent(?:age)?|share|proportion|fraction|portion)\s+of\b"
                       r"|\bpercent(?:age)?\s+of\b"),
        ("growth", r"\bgrowth\b|\bgr[eo]w\b|\bgrowing\b|\bpercent(?:age)?\s+" + _CHANGE
                   + r"|\byear[-\s]+over[-\s]+year\b|\byoy\b|\bannual\s+rate\s+of\s+" + _CHANGE),
        ("difference", _CHANGE + r"[^?]*\b(?:from|between|compared)\b|\bby\s+how\s+much\b|\bdifference\b|\bminus\b"
                       r"|\bsubtract(?:ed|ing)?\b|\bless\b(?!\s+than)|\bgap\s+between\b"),
        ("margin", r"\bmargins?\b"),
        ("ratio", r"\bdivided\s+by\b|\bratio\b|\bquotient\b|\bhow\s+many\s+times\b|\bcoverage\b|\bmultiple\s+of\b"),
        ("average", r"(?<!weighted[-\s])\baverage\b|\bmean\b"),
        ("sum", r"\bsum\s+of\b|\bcombined\b|\bplus\b|\badded\s+together\b|\bin\s+aggregate\b|\btotal\s+of\b"),
    ))
# A margin's name -> its numerator's row (the denominator is revenue).
MARGIN_NAMES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bgross\s+(?:profit\s+)?margin", re.I), "gross profit"),
    (re.compile(r"\boperating\s+(?:profit\s+|income\s+)?margin", re.I), "operating income"),
    (re.compile(r"\b(?:net\s+(?:profit\s+|income\s+)?|profit\s+)margin", re.I), "net income"),
    (re.compile(r"\bebitda\s+margin", re.I), "ebitda"),
)
# A formula the question writes out: "X is defined as A / B", "define X as ...", "the ratio of A to B".
DEFINED_AS = re.compile(r"\b(?:defined|calculated|computed)\s+as\b:?\s*(?P<rest>.+)"
                        r"|\bdefine[sd]?\b[^.?]{0,60}?\bas\b:?\s*(?P<rest2>.+)", re.I | re.S)
DEFINITION = re.compile(
    r"(?:(?P<name>[A-Za-z(][\w&'’()/ -]{0,60}?)\s+(?:is|are)\s+(?:here\s+)?(?:defined|calculated|computed)\s+as"
    r"|\bdefine\s+(?:the\s+)?(?P<name2>[\w&'’()/ -]{1,60}?)\s+as)\s*:?\s*(?P<body>.+?)(?=\.\s|\?|\.?$)",
    re.I | re.S)
RATIO_OF = re.compile(r"\b(?:ratio|proportion|share|percentage)\s+of\s+(?P<rest>.+)", re.I | re.S)
# What divides one operand by the other in words or signs ("A over B", "A as a % of B", "A to B").
DIVIDED_BY = re.compile(r"\s*(?:/|÷|\bdivided\s+by\b|\bover\b"
                        r"|\bas\s+an?\s+(?:percent(?:age)?|%|share|proportion)\s+of\b"
                        r"|\brelative\s+to\b|\bto\b|\bper\b)\s*", re.I)
# A formula's operators and brackets, signs or words (the token between operands; graph/formula.py).
FORMULA_TOKEN = re.compile(r"\s*(\(|\)|\+|×|\*|/|÷|\s-\s|−|\bplus\b|\bminus\b|\btimes\b|\bdivided\s+by\b|\bover\b)\s*",
                           re.I)
# More arithmetic than one operation: a sum, a product, a change ("365 * (average AP) / (COGS + ...)").
ARITHMETIC = re.compile(r"[+*×]|\s-\s|\bplus\b|\bchange\s+in\b|\btimes\b")
DAYS_FACTOR = re.compile(r"\b36[05]\s*(?:[*×x]|\btimes\b)\s*", re.I)  # "365 *" of a days formula
AVERAGE_WORD = re.compile(r"\baverage\b", re.I)
AVERAGE_OF = re.compile(r"^\s*(?:the\s+)?average\s+(?:of\s+)?", re.I)
CHANGE_IN = re.compile(r"^\s*(?:the\s+)?(?:change|increase|decrease)\s+in\s+", re.I)
AS_PERCENT_OF = re.compile(r"\s+as\s+an?\s+(?:%|percent(?:age)?|share|proportion)\s+of\s+", re.I)
MARGIN_AFTER = re.compile(r"\s*%?\s*margin\b.*$", re.I)  # "EBITDA % margin": the line item before it
# One year's "% margin" of a line item: "is the FY2015 D&A % margin" (graph/formula.py).
PERCENT_MARGIN = re.compile(r"\b(?:is|was)\s+(?:the\s+)?(?:[\w&.-]+['’]s\s+)?(?:fy\s?'?\d{4}\s+)?"
                            r"(?P<metric>[^?.]{3,120}?(?:%|\bpercent(?:age)?)\s*margin)\b", re.I)
# Years in a formula's words: "FY2019", "fiscal year 2020", "between 2019 and 2021", "2019-2021 average of ...".
_YEAR_WORD = r"(?:fy|fiscal(?:\s+year)?\s*)?'?((?:19|20)\d\d)"
YEARS_BETWEEN = re.compile(rf"\b(?:between|from)\s+{_YEAR_WORD}\s+(?:and|to|-|–)\s+{_YEAR_WORD}\b", re.I)
YEAR_WRITTEN = re.compile(rf"\b{_YEAR_WORD}\b", re.I)
YEARS_AVERAGE = re.compile(
    rf"{_YEAR_WORD}\s*(?:-|–|to|through)\s*{_YEAR_WORD}\s+(?:\w+[-\s]+years?\s+)?average\s+(?:of\s+)?(?:the\s+)?"
    r"(?P<metric>[^?.]+)", re.I)


# -- how answers speak -------------------------------------------------------------------------------------------------
# The model declining in its own words: "The excerpts do not provide ...", "I cannot determine ...".
# "... do not say" or "... not found in" declines only when the sentence speaks of the sources ("The excerpts
# do not provide ..."); "People with a sleep disorder are not included in the study [1]" is a claim.
_SOURCES_SPOKEN_OF = r"(?=.*(?:\b(?:excerpts?|documents?|context|sources?|passages?|texts?|information|data)\b))"
DECLINING = re.compile(
    rf"^{_SOURCES_SPOKEN_OF}.*?(?:\b(?:do(?:es)?\s*n[o'’]t|did\s*n[o'’]t)\s+(?:say|state|contain|mention|provide|"
    r"include|cover|report|disclose|specify|give)\b"
    r"|\bnot\s+(?:found|mentioned|provided|stated|available|given|included|disclosed|reported|covered)\s+in\b)"
    r"|\b(?:cannot|can[’']t|can\s+not|unable\s+to)\s+(?:answer|find|determine|tell)\b|\bno\s+information\b",
    re.IGNORECASE | re.DOTALL)
# Where a statement turns to say the other way of something else ("X cannot ..., but Y does ..."): its clauses.
CLAUSE_TURN = re.compile(r"[,;]?\s+\b(?:but|whereas)\s+", re.IGNORECASE)
# A word that denies (NEGATION_WORDS, "isn't"), and a "Yes," that opens a sentence.
DENIAL = re.compile(r"\b(?:" + "|".join(sorted(NEGATION_WORDS)) + r")\b|n['’]t\b", re.I)
YES_FIRST = re.compile(r"^\W*yes\b[\s,.;:!-]*", re.I)
# Words that point to a person or a thing named before: a sentence holding one is read with the one before it.
PRONOUNS = ("he", "she", "his", "her", "him", "they", "their", "them")
PRONOUN = re.compile(rf"\b(?:{'|'.join(PRONOUNS)})\b", re.I)
DEMONSTRATIVES = ("this", "these", "that", "those")
REFERS_BACK = re.compile(rf"^\W*(?:{'|'.join(DEMONSTRATIVES)}|it|they|he|she|such)\b", re.I)  # as a first word
# What a citation marker's parenthesis names is where it points: "This is from [2] (vi_diff.txt, lines 1-94).";
# so does a heading it names: '... in [2] under the heading "Membership".'
SOURCE_NAMED = re.compile(r"(?<=\])\s*\([^()]*(?:\)|$)|\s*\b(?:under|in)\s+(?:the\s+)?(?:heading|section|chapter|title|"
                          r"entry|part)\s+[\"“][^\"”]*(?:[\"”]|$)", re.IGNORECASE)
# An answer's talk of its own making ("as stated in the first excerpt [1]", "as indicated in the excerpt from [1]",
# "Excerpt 2 shows that", "The excerpt from X.txt, lines 177-183, states that").
_NTH = r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|provided|given|above|same)"
EXCERPT_TALK = re.compile(
    r",?\s*\(?\b(?:as\s+)?(?:(?:stated|shown|found|mentioned|given|noted|seen|listed|indicated|reported|provided)\s+)?"
    r"(?:in|from|according\s+to|per|by)\s+(?:the\s+)?(?:" + _NTH + r"\s+)?excerpts?"
    r"(?:\s+(?:from|in|of)\s*\[\d+\]|\s*\[?\d+\]?)?\)?"
    r"|\b(?:the\s+)?(?:" + _NTH + r"\s+)?excerpts?\s*\[?\d*\]?"
    # the source as the excerpt list labels it: "The excerpt from na.phone, lines 177-183, states that"
    r"(?:\s+(?:from|in|of)\s+[^\s,]+(?:,?\s+(?:lines?|pages?|sections?)\s+[\d.\-–]+)?,?)?"
    r"\s+(?:states?|says?|shows?|mentions?|indicates?)"
    r"(?:\s+that)?\s*", re.IGNORECASE)
# Words that exclude one another as what a figure is (each group's sides, a side's words alike): a row or
# sentence of one side says it is not of another ("Accounts payable" is no accounts receivable, "the nominal
# coverage of 0.95" no empirical coverage, "the largest" no smallest). Sales read as revenue (graph/facts.py
# SAME_MEANING), so a purchase is the opposite of a sale. Words as graph/facts.py `label_words` gives them.
CONTRASTS: tuple[tuple[frozenset[str], ...], ...] = tuple(tuple(frozenset(side.split()) for side in group)
                                                          for group in (
    ("payable", "receivable"), ("asset", "liability"), ("income", "expense"), ("current", "noncurrent"),
    ("short-term", "long-term"), ("purchase", "revenue"), ("inflow", "outflow"),
    ("operating", "investing", "financing"),
    ("minimum min lowest smallest", "maximum max highest largest"), ("nominal", "empirical actual observed"),
    ("male", "female"), ("input", "output"), ("upper", "lower")))


def contrasted(said: Set[str], asked: Set[str]) -> bool:
    """`said` names a side of a contrast (CONTRASTS) that `asked` asks another side of, and not `asked`'s own:
    a line of "nominal coverage" for a question of the empirical one."""
    for group in CONTRASTS:
        wanted = [side for side in group if side & asked]
        if wanted and not any(side & said for side in wanted) and any(side & said for side in group):
            return True
    return False


# Rows whose label already says money goes out: their parentheses give the direction, not a negative
# amount ("Purchases of property, plant and equipment (1,577)" is capex of $1,577 million).
OUTFLOW_LABEL = re.compile(r"^(?:purchases?|payments?|repayments?|acquisitions?|additions?|capital\s+expenditures?"
                           r"|dividends?\s+paid|repurchases?|cash\s+paid|investments?\s+in)\b|\bused\s+in\b",
                           re.IGNORECASE)
# How answers quote: a quotation between straight or curly quotes, read word by word (a path or an address
# is one word: "/tmp", "fhs-discuss@lists").
QUOTATION = re.compile(r'["“]([^"“”]{20,}?)["”]')
QUOTED_WORD = re.compile(r"[a-z0-9/_@<>-]+(?:[.'’][a-z0-9]+)*")
# One sentence or line of an excerpt ("Debian 2.0 Hamm (July 24th, 1998): ..." is one: a point in a number ends
# none, nor one that words in lower case go on from: "e.g. the", an address wrapped at "teltox. donarmstrong.com";
# a closing quotation mark or bracket after a sentence's point ends it with the point: '... systemd-sysv.” This').
_CLOSING = "”\"’)]"
_CLOSE = re.escape(_CLOSING)
STATEMENT = re.compile(rf"(?:[^\n.!?]|[.!?](?=[{_CLOSE}]*(?:[^\s{_CLOSE}]|[^\S\n]+[a-z])))+"
                       rf"(?:[.!?][{_CLOSE}]*(?=\s|$)|\n|$)")
# A line that opens an item of a list: a bullet, "1.", "(a)", "iv)".
LIST_ITEM = re.compile(r"\s*(?:[•·▪‣◦*–—-]\s|\(?\w{1,3}[.)]\s)")


def _wraps(line: str, following: str) -> bool:
    """`following` goes on with the sentence `line` was cut in: it opens in lower case (a sentence does not,
    whatever point ended the line: "teltox." then "donarmstrong.com) 2014-11-15"), or `line` stops in mid-
    clause (a comma, an open bracket, a hyphen, a word like "of" or "the", or a word before a sign: "Bug"
    then "#762194"). A list's item or a table's row ("a | b") stands alone, and so does a line after a
    sentence's end, or one that opens with a capital after a line without a point (a heading, a name in
    a list of names)."""
    before, after = line.rstrip(), following.lstrip()
    if not before or not after or "|" in before or "|" in after or LIST_ITEM.match(after):
        return False
    if after[0].islower():
        return True
    if before[-1] in ".!?:;" or before[-1] in _CLOSING and before.rstrip(_CLOSING)[-1:] in (".", "!", "?"):
        return False
    if not after[0].isalnum():  # "Bug" then "#762194 (https://...)"
        return True
    last = before.split()[-1].lower()
    return before[-1] in ",(-–—/&" or last in FUNCTION_WORDS


def unwrapped(text: str) -> str:
    """`text` with each line that a sentence was wrapped across joined to the one before it (`_wraps`);
    every other line break kept."""
    lines: list[str] = []
    for line in text.split("\n"):
        if lines and _wraps(lines[-1], line):
            lines[-1] = f"{lines[-1].rstrip()} {line.lstrip()}"
        else:
            lines.append(line)
    return "\n".join(lines)


def list_items(text: str) -> list[str]:
    """The items of an excerpt's lists, each whole: from the line its bullet or number opens to the next
    item, a blank line or the excerpt's end ("• "wild" ... The wild cluster bootstrap does not resample ...
    By default, the factors are drawn from Rademacher distribution.")."""
    items: list[list[str]] = []
    for line in text.split("\n"):
        if LIST_ITEM.match(line):
            items.append([line])
        elif items and items[-1] and line.strip():
            items[-1].append(line)
        elif items:
            items.append([])  # a blank line ends the item
    return [" ".join(" ".join(item).split()) for item in items if len(item) > 1]


# A line that is a name alone, as under a verse, a quotation or a letter ("Phela Orm", "— A. Bierce").
SIGNATURE = re.compile(r"[^\S\n]*(?:[-–—]+[^\S\n]*)?[A-Z][\w'’.-]*(?:[^\S\n]+[A-Z][\w'’.-]*){0,3}[^\S\n]*")


def signed(text: str) -> list[str]:
    """Each statement of an excerpt that a name alone on the line after it signs, with the name: a verse's,
    a quotation's or a letter's author ("... The trees are leaving and cashiers abscond." over "Phela Orm"),
    though no sentence holds both."""
    lines = text.split("\n")
    out = []
    for at in range(1, len(lines)):
        before = lines[at - 1].rstrip()
        if before[-1:] in ".!?;:\"'”’" and SIGNATURE.fullmatch(lines[at]):
            said = statements("\n".join(lines[:at]))
            if said:
                out.append(f"{said[-1].strip()} {lines[at].strip()}")
    return out


def labelled(text: str) -> list[str]:
    """Each line of an excerpt that ends in a colon, with the line after it: a label and what it labels
    ("Questions or comments to:" over "Christian Bizouard: christian.bizouard@obspm.fr")."""
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    return [f"{label} {value}" for label, value in zip(lines, lines[1:], strict=False) if label.endswith(":")]


def statements(text: str) -> list[str]:
    """The statements of an excerpt: its sentences and the lines that are no sentence (a list's items, a
    table's rows), a sentence wrapped across lines read as one (`unwrapped`)."""
    return [s for s in STATEMENT.findall(unwrapped(text)) if s.strip()]

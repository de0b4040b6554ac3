"""Words of general English the product reads, declared once: every module below and above storage
imports them from here, and patterns are generated from them (months: storage/periods.py).

Scales: how documents and questions write a thousand, a million, a billion, a trillion ("5.1 billion",
"$2,018mn", "in thousands"): figures are read (graph/figures.py), captions scaled (ingestion/numbers.py),
questions' units read and answers written (storage/numbers.py) from the same words.

Function words carry no evidence: a passage is not nearer a question for sharing "the" or "what"
with it (graph/windows.py), and an answer sentence made of them and the question's own words says
nothing new (graph/claims.py). Units of measure say how a figure is counted, not what it is of:
"10 miles" of a line "Visibility 10 Miles" is no distance of a crash site (graph/verify.py).
"""

from __future__ import annotations

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

# Words that number the things of a document, written before their number: "version 1.4", "Section 4.2",
# "Flight 1549" (a capitalised word before a number is read as such a name too: "Debian 1.0").
_NUMBERING_WORDS = """
version release revision section chapter part phase step stage item article clause paragraph appendix annex
figure table exhibit schedule note rule goal objective flight trial study cohort arm visit level class volume issue
"""
NUMBERING_WORDS = frozenset(_NUMBERING_WORDS.split())

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

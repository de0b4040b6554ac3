"""The claim check: what an answer sentence says must be in what it cites, whatever the document.

Each check is a named object with the reason a reader would give and examples (tests/unit/
test_claims.py holds them). A sentence citing excerpts fails a check when:
- `adds_nothing`: beyond the question's own words it says nothing, no figure and no yes or no:
  the value was left blank ("The principal investigator of the study is [1].");
- `name_not_cited`: it names someone or something (capitalised words past its first, a month's name
  aside) that neither the excerpts it cites nor the question hold: a name taken from another report;
- `date_not_cited`: it gives a year or a month that neither the excerpts it cites nor the question
  hold: a date of the wrong year;
- `period_not_cited`: asked how many or how much in a year, it gives a figure for that year, and what it
  cites dates other years, never that one: a table's 1999 value given for 1968.
- `figure_of_another_numbered`: the question names a thing by a word and a number ("Debian 1.0"), and
  what it cites writes the sentence's figure only under that word with another number ("Debian 1.1").
- `code_not_cited`: it gives a thing's number, a version or a code ("R 3.6.0", "Bash 5", "xtable 1.8-4"),
  that neither what it cites nor the question writes: a release the documents never name.
- `code_apart_from_what_is_said`: asked which, it gives a version or a code that what it cites writes only
  apart from what the sentence says of it ("first added in Grace release 7.4" beside "7.4 | Dates in Grace"),
  read as `name_apart_from_what_is_said` reads a name (below).
Figures are checked figure by figure by graph/verify.py. What fails is removed; what passes is kept,
and a sentence that fails only because it cites too little ("Murdock stepped down in March 1996 and
Perens took over [2]", the month and year in [1]) is kept citing the excerpts that hold what it says.
(An answer whose model cited nothing was cited sentence by sentence by graph/citations.py
`cite_uncited` before it came here.)

And the answer as a whole must speak of what was asked (`answers_the_question`, on the question's
reading, graph/reading.py): when it says what it states a thing of, that is one of the question's
own words, unless it gives what the question's kind asks for (a yes or no, the name a "who" asks,
the date a "when" asks, the measure a "how long" asks). "Corning had about 11,500 unexpired patents"
is no answer to how many homes it had in backlog, whatever it cites; "The figure is 412 million" for
a revenue question says nothing else and is left to the figure checks. An answer whose first
sentence declines ("The excerpts do not provide ...") is a refusal, which cites nothing. An answer
quoting its excerpts with a word of its own in the place of theirs (`misquotes`: "The /mnt directory
must be made available ..." for "The /tmp directory ...") is withheld: what it concludes rests on it.
These three are `ANSWER_CHECKS`, the registry of checks on the whole answer. Asked "who", an answer must
name someone the question does not. Asked yes or no, a first "Yes" whose own sentence denies the
question's words says "No" (`verdict_as_stated`): the checked sentence is the claim, the first word
only its direction; a "Yes" quoting an excerpt that denies what is asked is answered "No" in the words it
quotes (`denial_quoted`), as an excerpt's own denial is (`denied_by_evidence`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache
from itertools import combinations

from graph.citations import MARK, before_stop, marked
from graph.reading import Reading, numbered, read, same_number, unnumbered
from graph.verify import sentences
from graph.windows import GAP, STEM, stems
from lexicon import (
    ANY_NUMBER,
    CARDINALS,
    CLAUSE_TURN,
    CODE_NUMBER,
    DECLINING,
    DENIAL,
    DIGITS,
    FUNCTION_WORDS,
    INFLECTION,
    ISO_DATE,
    JOINED_WORD,
    MONTH_ANYWHERE,
    MONTH_NAME,
    MONTH_YEAR,
    MONTHS,
    NUMBER_WORD,
    POLARITY_WORDS,
    PRESENTING_WORDS,
    PRONOUN,
    QUOTATION,
    QUOTED_WORD,
    REFERS_BACK,
    SCALES,
    UNIT_WORDS,
    WHOLE_DATES,
    YEAR,
    YES_FIRST,
    alnum_words,
    labelled,
    letter_words,
    list_items,
    signed,
    squashed,
    statements,
)
from lexicon import CALENDAR_NAMES as _MONTHS

# The model declining in its own words: "The excerpts do not provide ...", "I cannot determine ...".
DECLINES = DECLINING

# Words that answer a yes/no question: an answer sentence holding one says something.
_NAME = re.compile(r"\b[A-Z][A-Za-z'’.-]*[A-Za-z](?:\s+(?:of|and|&|de|van|von|du|la)?\s*[A-Z][A-Za-z'’.-]*[A-Za-z])*\b")
# a number and the word after it; not a name's digits ("TLC2") nor an ordinal ("2nd edition")
_QUANTITY = re.compile(rf"(?:(?<![A-Za-z\d])\d[\d,.]*(?!\d|st\b|nd\b|rd\b|th\b)|\b(?:{NUMBER_WORD})\b)\s*([a-z]*)")
# Words that present a figure or count it, and never say what it is of ("The figure is 18 cents").
_SAYS_NOTHING_OF_WHAT = frozenset(stems(" ".join(PRESENTING_WORDS | UNIT_WORDS | set(SCALES))))


def _words(text: str) -> set[str]:
    return set(alnum_words(text.lower()))


def _body(sentence: str) -> str:
    return MARK.sub(" ", sentence)


def _roots(text: str) -> set[str]:
    return {INFLECTION.sub("", w)[:STEM] for w in alnum_words(text.lower())
            if w not in FUNCTION_WORDS and (len(w) > 2 or w[0].isdigit())}


def adds_nothing(sentence: str, cited: str, question: str) -> bool:
    body = _body(sentence)
    if set(DIGITS.findall(body)) - set(DIGITS.findall(question)):
        return False  # a figure the question does not give ("3M" is the question's name, not a value)
    if {w.lower() for w in JOINED_WORD.findall(body)} - {w.lower() for w in JOINED_WORD.findall(question)}:
        return False  # a name made of the question's words: "the keyword-idents lint" for identifiers and keywords
    if names_not_cited(body, "", question):
        return False  # a name the question does not write, though cut to a stem it is one of its words: "Symbola"
    polar = _words(body) & POLARITY_WORDS
    if polar and (polar - _words(question) or _read(question).asks == "yes_no"):
        return False  # a yes or a no: the question's own "not" ("when R_PAPERSIZE is not set") is neither
    return not (_roots(body) - _roots(question))


def declines(answer: str, spans: list[tuple[int, int]]) -> bool:
    """The answer's first sentence says the excerpts do not answer: a refusal, which cites nothing."""
    first = next((answer[a:b] for a, b in spans if answer[a:b].strip()), "")
    return bool(DECLINES.search(first))


def names_not_cited(sentence: str, cited: str, question: str) -> list[str]:
    """The names of `sentence` (past its first word) with a word neither `cited` nor `question` holds (a word
    glued to a footnote's number counts: "5John Hobby's METAPOST")."""
    held = _words(cited) | _words(question) | set(letter_words(cited.lower()))
    body = _body(sentence)
    start = next((i for i, c in enumerate(body) if c.isalnum()), len(body))  # past leading marks and spaces
    out = []
    for m in _NAME.finditer(body):
        raw = m.group(0).split()
        if m.start() == start:  # a sentence's first word is capitalised by orthography
            raw = raw[1:]
        words = [w for w in alnum_words(" ".join(raw).lower())
                 if w not in FUNCTION_WORDS and w not in _MONTHS and len(w) > 1]  # a month is a date's
        if any(w not in held for w in words):
            out.append(m.group(0))
    return out


def name_not_cited(sentence: str, cited: str, question: str) -> bool:
    return bool(names_not_cited(sentence, cited, question))


def dates_in(text: str) -> set[tuple[int, int, int | None]]:
    """The dates `text` writes as (year, month, day or None): "March 3, 2019", "3rd of March 2019",
    "2019-03-03", "1972 Jan 7", "March 1996"."""
    out: set[tuple[int, int, int | None]] = set()
    for pattern in WHOLE_DATES:
        out |= {(int(m["year"]), MONTHS[m["month"].lower().rstrip(".")], int(m["day"])) for m in pattern.finditer(text)}
    out |= {(int(m[1]), int(m[2]), int(m[3])) for m in ISO_DATE.finditer(text) if 1 <= int(m[2]) <= 12}
    out |= {(int(m["year"]), MONTHS[m["month"].lower().rstrip(".")], None) for m in MONTH_YEAR.finditer(text)}
    return out


def date_not_cited(sentence: str, cited: str, question: str) -> bool:
    """A year, a month, or a date written whole, that neither `cited` nor `question` holds: "August 11,
    2013" fails beside an excerpt's "August 2010 ... 2013", and "March 1996" beside "January 1996"; a date
    is the same however written ("November 15, 2014" beside "2014-11-15")."""
    body = _body(sentence)
    written = dates_in(f"{cited}\n{question}")
    held = set(YEAR.findall(cited)) | set(YEAR.findall(question)) | {str(d[0]) for d in written}  # "19.Oct.1993"
    named, numbered = _words(cited) | _words(question), {d[1] for d in written}  # "November", "2014-11-15"
    if any(y not in held for y in YEAR.findall(body)) or any(
            m.lower() not in named and MONTHS[m.lower()] not in numbered for m in MONTH_NAME.findall(body)):
        return True
    return any(not any(w[:2] == d[:2] and (d[2] is None or w[2] == d[2]) for w in written) for d in dates_in(body))


def period_not_cited(sentence: str, cited: str, question: str) -> bool:
    """Asked how many or how much in a year, the sentence gives a figure for that year, and what it cites
    never writes the year: "The difference between TAI and UTC in 1968 was 32 seconds [2]" beside a table
    that starts in 1972. The question's year says which figure is asked, not that the excerpt has one; an
    excerpt that writes no year at all (a table's row without its heading) leaves it to the figures' check."""
    if _read(question).asks != "value":
        return False
    body = _body(sentence)
    years = set(YEAR.findall(body)) & set(YEAR.findall(question))
    figures = [w for w in stems(YEAR.sub(" ", body)) if w[0].isdigit()]
    written = set(YEAR.findall(cited))
    return bool(years and figures and written) and not years & written  # it dates other years, not that one


# The question read once per question, not once per sentence and excerpt a check tries (`failures`).
_read = lru_cache(maxsize=64)(read)


def _read_back(text: str, refers_back: Callable[[str], object]) -> list[str]:
    """The sentences of `text` as running text (wrapped lines joined; "Dr." or "U.S." ends none), each
    with the one before it when `refers_back` finds it points there ("He founded ...", "This vote ...")."""
    running = " ".join(text.split())
    said = [running[a:b] for a, b in sentences(running)]
    return [f"{before} {now}" if refers_back(now) else now for before, now in zip(["", *said], said, strict=False)]


def _statements(text: str) -> list[set[str]]:
    """The stems of each statement of `text`: each sentence (wrapped lines joined) or line that is no
    sentence, and each sentence of running text with the sentence before it when it says "he" or "they"
    (whom that names) or opens with "This ..." or "It ..." (what that names: "This rule comes from
    Thirumala Reddy Mutchukota's JGit change" is the rule the sentence before states)."""
    # a view's pieces are cut apart where text was left out: no statement spans two ("Table 37: PDF driver options
    # … 7.4 | Dates in Grace"), nor does "he" reach over a cut; "This rule ..." after one still speaks of the
    # rule before it
    pieces = text.split(GAP.strip())
    said = (*(s for piece in pieces for s in (*statements(piece), *list_items(piece), *labelled(piece), *signed(piece),
                                              *_read_back(piece, _refers_back))),
            *_read_back(text, REFERS_BACK.match))
    # a label's line says nothing of its own: "Questions or comments to:" is said with the line after it
    return [stems(s) for s in said if not s.rstrip().endswith(":")]


def _refers_back(sentence: str) -> bool:
    return bool(PRONOUN.search(sentence) or REFERS_BACK.match(sentence))


def name_apart_from_what_is_said(sentence: str, cited: str, question: str) -> bool:
    """Asked who or which, the sentence gives a name the question does not, what it cites says what the
    sentence says of it (or, saying nothing else, what the question asks) in some statement, and no
    statement holds that name with it: "The new Debian logo was designed by Ian Murdock [2]" cites a
    history that tells of the new logo in one sentence and names Ian Murdock only as its founder. A name
    standing only beside a few of those words (under half), in a statement saying no more of them than
    one without the name, is not named as that either, unless another name it gives is. Said in other
    words nowhere ("leads" for "Principal Investigator"), the check cannot tell, and passes."""
    reading = _read(question)
    if reading.asks != "name":
        return False
    body = _body(sentence)
    names = [n for n in names_not_cited(body, "", question) if not _words(n) <= _MONTHS and not YEAR.search(n)]
    return bool(names) and _apart(body, names, reading, cited)


def code_apart_from_what_is_said(sentence: str, cited: str, question: str) -> bool:
    """Asked which, the sentence gives a version or code the question does not ("Grace release 7.4"),
    and no statement of what it cites holds it with what the sentence says of it, as
    `name_apart_from_what_is_said` reads a name: "first added in Grace release 7.4 [1]" beside "7.4 | Dates in
    Grace"."""
    reading = _read(question)
    if reading.asks != "name":
        return False
    body = _body(sentence)
    asked = set(DIGITS.findall(question))
    codes = [c for c in _codes(body) if c not in asked]
    return bool(codes) and _apart(body, codes, reading, cited)


def _apart(body: str, names: list[str], reading: Reading, cited: str) -> bool:
    """Whether every one of `names` (a sentence's, `body`) stands apart from what the sentence says of it in
    the statements of `cited` (`name_apart_from_what_is_said`)."""
    what = stems(body) - stems(" ".join(_NAME.findall(body))) - _SAYS_NOTHING_OF_WHAT
    what -= {w for w in what if w[0].isdigit()}
    # what it says of the thing asked, when it says it: "This worm was designed by Bruce Perens, who was the
    # leader and worked at Pixar" is about the worm's designer, not about leading or Pixar, which a
    # statement of the excerpt tells of Perens
    what = (what & reading.measure) or what or set(reading.measure)
    if not what:
        return False
    about = [said for said in _statements(cited) if said & what]
    if not about:
        return False
    weak = []
    for name in names:
        named = stems(name.split()[-1])
        holding = max((len(said & what) for said in about if named <= said), default=0)
        if not holding:
            return True  # named nowhere with it
        others = max((len(said & what) for said in about if not named <= said), default=0)
        weak.append(2 * holding < len(what) and holding <= others)
    # every name only beside under half of it, in a statement that says no more of it than one without the
    # name: "TMPDIR" from "check the TMPDIR environment variable" for the variable "originally going to be
    # named POSIX_ME_HARDER" (the sentence saying so names POSIXLY_CORRECT); a title page's affiliation for the
    # funding agency of the work it titles. One name standing with it is the answer; the others may be where
    # the sentence says it read it ("as mentioned in Appendix B: Invoking R").
    return all(weak)


_COUNTING = stems(" ".join(CARDINALS))  # "one", "two": how many, not what
_WHO = frozenset(["who", "whom", "whose"])  # asked so, the answer names someone: "which" may be a thing's name


def _denies(text: str) -> bool:
    return bool(DENIAL.search(YES_FIRST.sub("", text)))


DENIED_WITHIN = 3  # words after a denial that it bears on ("not be made", "cannot be canceled")


def verdict_as_stated(answer: str, reading: Reading) -> str:
    """`answer` with a first "Yes" that its own sentence (or the one after a bare "Yes.") denies said as
    "No": "Yes, configuration files that a program rewrites should not be made conffiles [1]" for "Should
    configuration files that a program rewrites be made conffiles?". The sentence, checked against what it
    cites, is the claim; its first word only says which way it goes. A denial counts when one of the
    question's own words follows it closely ("should not be made"), not in a clause of its own ("as long as
    it does not bypass ..."); a question that denies itself ("Is it not allowed?") is left alone."""
    spans = sentences(answer)
    if reading.asks != "yes_no" or not spans or _denies(reading.question):
        return answer
    start, end = spans[0]
    verdict = YES_FIRST.match(answer[start:end])
    if not verdict:
        return answer
    asked = stems(reading.question)
    words = _plain_words(answer[start + verdict.end():end])
    if not words and len(spans) > 1:  # "Yes. A Developer cannot be reappointed [1].": the next sentence says it
        words = _plain_words(answer[slice(*spans[1])])
    if not _denies_asked(words, asked):
        return answer
    at = start + answer[start:end].lower().index("yes")  # YES_FIRST matched it
    yes = answer[at:at + 3]
    no = "NO" if yes.isupper() else "No" if yes[0].isupper() else "no"
    return answer[:at] + no + answer[at + 3:]


def _denies_asked(words: list[str], asked: set[str]) -> bool:
    """A denial closely before one of the question's own words ("should not be made", "cannot be canceled")."""
    return any(_denies(word) and stems(" ".join(words[i + 1:i + 1 + DENIED_WITHIN])) & asked
               for i, word in enumerate(words))


def denied_by_evidence(reading: Reading, texts: Mapping[int, str]) -> tuple[int, str] | None:
    """Asked yes or no, the statement of the excerpts that says most of what the question asks of (at least two
    of its measure words, and half of them), when it denies it: (its excerpt's number, the statement). "Is
    /usr/etc allowed ...?" beside "Note that /usr/etc is still not allowed: programs in /usr should place
    configuration files in /etc." The answer is then that "No", in the excerpt's words, whatever the model
    wrote: a small model says "Yes" to most such questions (evals/results/README.md, yes/no from the
    evidence). Of statements saying as many of its words, a word the excerpts say in few statements counts
    above one they say in many. A statement that affirms is left to the model: words cannot tell that it
    says yes. When the statement turns ("..., but ..."), the clause of it saying most of what is asked must deny
    it. A question that denies itself ("Is it not allowed?") is left alone."""
    if reading.asks != "yes_no" or _denies(reading.question) or not reading.measure:
        return None
    said: list[tuple[int, str, set[str]]] = []
    for n, text in sorted(texts.items()):
        running = " ".join(text.split())
        sentences_of = [running[a:b].strip() for a, b in sentences(running)]
        for before, now in zip(["", *sentences_of], sentences_of, strict=False):
            # "This vote cannot be canceled." says of what the sentence before names; it alone is quoted
            said.append((n, now, stems(f"{before} {now}" if REFERS_BACK.match(now) else now) & reading.measure))
    # of statements saying as many of its words, the one saying words the excerpts say in few statements: "changes
    # of a few lines" picks the one statement about them in a section on legal papers
    # (a number word says how many, not of what: "one of their own delegates")
    weight = {word: 1 / max(1, sum(word in words for _, _, words in said)) for word in reading.measure - _COUNTING}
    best = max(said, key=lambda s: (len(s[2]), sum(weight.get(w, 0.0) for w in s[2])), default=(0, "", set()))
    n, statement, shared = best
    score = len(shared)
    if score < 2 or 2 * score < len(reading.measure):
        return None
    asked = stems(reading.question)
    # the clause saying most of what is asked must deny it: "The scent of flowers cannot travel against the wind,
    # ... but the fragrance of the good does travel against the wind" affirms it of the good
    pieces = statement.split(GAP)
    clauses = [c for piece in pieces for c in CLAUSE_TURN.split(piece)]
    if not _denies_asked(_plain_words(max(clauses, key=lambda c: len(stems(c) & reading.measure))), asked):
        return None
    # the part of a window's text that denies, not the pieces the window's gaps join to it
    denying = [piece.strip() for piece in pieces if _denies_asked(_plain_words(piece), asked)]
    return (n, denying[-1]) if denying else None


def denial_quoted(answer: str, reading: Reading, texts: Mapping[int, str]) -> tuple[int, str] | None:
    """Asked yes or no, a "Yes" that quotes an excerpt denying what is asked: (the excerpt's number, the quotation).
    'Yes, the Corsair IPA recipe includes dry-hopping [1]. It is mentioned as "There is no dry-hopping, but by all
    means, feel free to do so." [1]' The excerpts say no, in the words the answer itself quotes; as with
    `denied_by_evidence`, the answer is then theirs. The quotation must be in an excerpt as written (letters and
    digits in order), and deny one of the question's own words closely (`_denies_asked`)."""
    if reading.asks != "yes_no" or _denies(reading.question) or not YES_FIRST.match(answer):
        return None
    asked = stems(reading.question)
    held = {n: squashed(text) for n, text in texts.items()}
    for quote in QUOTATION.findall(answer):
        said = quote.strip(" .…")
        if _denies_asked(_plain_words(said), asked) and (
                n := next((n for n, text in sorted(held.items()) if squashed(said) in text), None)):
            return n, said
    return None


def _plain_words(text: str) -> list[str]:
    """The words of `text` in lower case, a denial's "n't" kept with its word ("shouldn't")."""
    return [w for w in (w.strip(".,;:!?()[]\"'") for w in _body(text).lower().split()) if w]


def figure_of_another_numbered(sentence: str, cited: str, question: str) -> bool:
    """The question names a thing by a word and a number ("Debian 1.0", "Section 4.2", "Flight 1549"), and
    every place what the sentence cites writes one of its figures falls under that word with another
    number (the nearest before it): "The official Debian 1.0 release contained 474 packages [2]" beside
    "Debian 1.1 Buzz (June 17th, 1996): ... contained 474 packages". A figure written under no such
    word, or under the question's own number, passes; so does a sentence that names the other thing."""
    asked = _read(question).numbered
    words = {word for word, _ in asked}
    if not words:
        return False
    body = _body(sentence)
    if any(word in words and not _asked(asked, word, number) for word, number, _ in numbered(body)):
        return False  # it says which thing it speaks of: "Debian 1.1 had 474 packages"
    marks = [(at, word, number) for word, number, at in numbered(cited) if word in words]
    if not marks:
        return False
    for figure in set(DIGITS.findall(body)) - set(DIGITS.findall(question)):
        places = [m.start() for m in re.finditer(rf"(?<![\d.,]){re.escape(figure)}(?!\d|[.,]\d)", cited)]
        under = [max(((at, word, number) for at, word, number in marks if at < place), default=None)
                 for place in places]
        if places and all(u is not None and not _asked(asked, u[1], u[2]) for u in under):
            return True
    return False


def _codes(text: str) -> set[str]:
    """The versions and codes `text` gives: dotted ones, and the numbers of the things it names by number."""
    return set(CODE_NUMBER.findall(text)) | {number for _, number, _ in numbered(text)}


def code_not_cited(sentence: str, cited: str, question: str) -> bool:
    """The sentence gives a thing's number, a version or a code ("R 3.6.0", "Bash 5", "release 7.4",
    "xtable 1.8-4"), that neither what it cites nor the question writes: "The native pipe operator |> was
    introduced in R 3.6.0 [1]" beside an excerpt that names no 3.6.0. Figures are graph/verify.py's."""
    body = _body(sentence)
    given = _codes(body)
    if not given:
        return False
    held = set(ANY_NUMBER.findall(cited)) | set(ANY_NUMBER.findall(question)) | set(CODE_NUMBER.findall(cited))
    return any(not any(same_number(code, h) for h in held) for code in given)


def _asked(asked: tuple[tuple[str, str], ...], word: str, number: str) -> bool:
    return any(w == word and same_number(n, number) for w, n in asked)


def answers_the_question(answer: str, reading: Reading, spans: list[tuple[int, int]]) -> bool:
    """Whether a sentence of `answer` (its `spans`) speaks of what `reading`'s question asks (module doc):
    the model may cite a later sentence than the one that answers."""
    return any(speaks_to(answer[a:b], reading) for a, b in spans if answer[a:b].strip())


def _quantities(text: str) -> list[str]:
    """The quantities `text` states, each as the word after it ("2 weeks" -> "weeks"): not a year, nor a
    thing's number ("Debian 1.1", "0.93R6")."""
    return list(_QUANTITY.findall(YEAR.sub(" ", unnumbered(text)).lower()))


def states_no_quantity(answer: str, reading: Reading) -> bool:
    """Asked how many or how much, `answer` states no quantity: "NumberOfHashBuckets The number of hash
    buckets in the file [1]." once the figures' check took out the figure it gave of another thing."""
    return reading.asks == "value" and not _quantities(_body(answer))


def speaks_to(sentence: str, reading: Reading) -> bool:
    body = _body(sentence)
    if _words(body) & POLARITY_WORDS:
        return True
    if reading.asks == "name" and names_not_cited(body, "", reading.question):
        return True  # a name the question does not give: "Who founded Debian?" "Ian Murdock [1]."
    if reading.asks == "name" and _words(reading.question) & _WHO:
        return False  # "Who wrote METAPOST?" "It is a modified version of METAFONT [1]." names no one
    if reading.asks == "date" and (set(YEAR.findall(body)) - set(YEAR.findall(reading.question))
                                   or MONTH_ANYWHERE.search(body)):
        return True  # "When was it ratified?" "On March 26th, 2022 [1]."
    quantities = _quantities(body)
    if reading.asks == "value" and not quantities:
        # "How many barrels of oil did it produce?" "It produced the product in 2017 [1]."; a thing's number
        # is no quantity either: "How much did HP charge?" "HP hosted it beside the 0.93R6 release [1]."
        return False
    if reading.quantity and any(w in UNIT_WORDS for w in quantities):
        return True  # "How long is a vote open?" "2 weeks [1]."
    if stems(" ".join(w for w in quantities if w in UNIT_WORDS)) & reading.measure:
        return True  # in the unit it asks: "By how many seconds did TAI differ from UTC?" "By 32 seconds [1]."
    words = stems(body)
    said = words - _SAYS_NOTHING_OF_WHAT - stems(" ".join(reading.lone_names))
    said -= {w for w in words if w[0].isdigit()}
    if not said or not reading.measure:
        return True  # it says nothing but a figure or a name, or the question has no words of its own
    return bool(said & reading.measure)


@dataclass(frozen=True)
class Check:
    name: str
    why: str
    fails: Callable[[str, str, str], bool]  # (sentence, the text it cites, the question) -> it fails


CHECKS: tuple[Check, ...] = (
    Check("adds_nothing", "says nothing beyond the question: the value was left blank", adds_nothing),
    Check("name_not_cited", "names someone or something its cited excerpts do not", name_not_cited),
    Check("date_not_cited", "gives a year or a month its cited excerpts do not", date_not_cited),
    Check("name_apart_from_what_is_said", "names someone no statement of its excerpts connects with what it "
          "says of them", name_apart_from_what_is_said),
    Check("figure_of_another_numbered", "gives a figure its excerpts write of another numbered thing than the "
          "one asked (Debian 1.1 for Debian 1.0)", figure_of_another_numbered),
    Check("period_not_cited", "gives a figure for the question's year, which its cited excerpts never write",
          period_not_cited),
    Check("code_not_cited", "gives a version or a code (R 3.6.0, Bash 5) its cited excerpts do not",
          code_not_cited),
    Check("code_apart_from_what_is_said", "gives a version or a code no statement of its excerpts connects with what "
          "it says of it", code_apart_from_what_is_said),
)


QUOTE_WORDS = 6  # a shorter quotation is a phrase, which a sentence may well put its own way
QUOTE_FOLLOWS = 0.8  # the share of its words a quotation has in order with the passage it quotes


def _quoted_words(text: str) -> list[str]:
    return QUOTED_WORD.findall(MARK.sub(" ", text.replace("-\n", "")).lower())


def misquotes(answer: str, texts: Mapping[int, str]) -> list[str]:
    """The quotations of `answer` that follow a passage of `texts` closely (QUOTE_FOLLOWS of their words,
    in order) yet put another word in a place of it: "The /mnt directory must be made available for
    programs that require temporary files" beside the excerpt's "The /tmp directory ...". A quotation cut
    short or run on is none, nor one that differs only in punctuation or a word the PDF split."""
    passages = [_quoted_words(t) for t in texts.values()]
    out = []
    for quote in QUOTATION.findall(answer):
        said = _quoted_words(quote)
        if len(said) < QUOTE_WORDS:
            continue
        best: tuple[float, list[tuple[str, str]]] = (0.0, [])
        for words in passages:
            near = SequenceMatcher(None, said, words, autojunk=False).find_longest_match(0, len(said), 0, len(words))
            window = words[max(0, near.b - near.a - 5):near.b + len(said) - near.a + 5]
            match = SequenceMatcher(None, said, window, autojunk=False)
            follows = sum(b.size for b in match.get_matching_blocks()) / len(said)
            swapped = [("".join(said[i1:i2]), "".join(window[j1:j2])) for op, i1, i2, j1, j2 in match.get_opcodes()
                       if op == "replace"]
            if follows > best[0]:
                best = (follows, swapped)
        if best[0] >= QUOTE_FOLLOWS and any(squashed(a) != squashed(b) for a, b in best[1]):
            out.append(quote)
    return out


@dataclass(frozen=True)
class AnswerCheck:
    """A check of the answer as a whole (the model's, not code's): what fails is withheld entirely."""

    name: str
    why: str
    # (answer, the question's reading, its sentences, the excerpts by [n]) -> it fails
    fails: Callable[[str, Reading, list[tuple[int, int]], Mapping[int, str]], bool]


ANSWER_CHECKS: tuple[AnswerCheck, ...] = (
    AnswerCheck("declined", "declines in its own words: a refusal, which cites nothing",
                lambda answer, _reading, spans, _texts: declines(answer, spans)),
    AnswerCheck("misquotes", "quotes its excerpts with a word of its own in the place of theirs",
                lambda answer, _reading, _spans, texts: bool(misquotes(answer, texts))),
    AnswerCheck("answers_the_question", "speaks of something the question does not ask",
                lambda answer, reading, spans, _texts: not answers_the_question(answer, reading, spans)),
)


def answer_failure(answer: str, reading: Reading, spans: list[tuple[int, int]],
                   texts: Mapping[int, str]) -> AnswerCheck | None:
    """The first whole-answer check `answer` (its sentence `spans`, the excerpts `texts`) fails, or None."""
    return next((c for c in ANSWER_CHECKS if c.fails(answer, reading, spans, texts)), None)


REFERS_TO_STRUCK = "refers_to_struck"  # a sentence opening "This ..." or "It ..." after a struck one
READ_WITH_NEXT = "read_with_next"  # no failure: an uncited sentence given the markers of the next, which refers to it


@dataclass(frozen=True)
class Failure:
    sentence: str
    check: str
    repair: str | None = None  # the sentence citing the excerpts that hold what it says, when some do


def with_markers(sentence: str, extra: tuple[int, ...]) -> str:
    """`sentence` citing `extra` too: the markers go after its last one, or before its closing stop."""
    marks = "".join(f"[{n}]" for n in extra)
    last = next(reversed(list(MARK.finditer(sentence))), None)
    if last is not None:
        return sentence[:last.end()] + marks + sentence[last.end():]
    return before_stop(sentence, marks)


def _cited_by(sentence: str, texts: Mapping[int, str], question: str, checks: tuple[Check, ...]) -> list[int]:
    """What `sentence` cites, when it passes every check against it: "... is Patterson Beams. This plug-in
    ... is described in [1]." lends [1] to the sentence before it, "This limit is set by NAMEDATALEN [1]",
    struck, lends nothing."""
    cited = list(dict.fromkeys(marked(sentence)))
    text = "\n".join(texts.get(n, "") for n in cited)
    return cited if cited and not any(c.fails(sentence, text, question) for c in checks) else []


def failures(spans: list[tuple[int, int]], answer: str, texts: Mapping[int, str], question: str,
             checks: tuple[Check, ...] | None = None) -> list[Failure]:
    """The sentences of `answer` (its `spans`) that fail a check against what they cite (`texts` by
    [n]; a sentence citing nothing is checked against nothing: "... was designed by Martin Quak."), each
    with its repair when citing one or two more of `texts` makes it pass every check. `checks`: CHECKS
    as the module holds them when called (an ablation replaces them: evals/verify_replay.py)."""
    checks = CHECKS if checks is None else checks
    out = []
    said = [answer[a:b] for a, b in spans if _body(answer[a:b]).strip(" \n.;:")]
    struck = False  # the sentence before was struck: one that refers back to it speaks of nothing left
    for i, sentence in enumerate(said):
        if struck and REFERS_BACK.match(_body(sentence)):
            out.append(Failure(sentence, REFERS_TO_STRUCK))
            continue
        struck = False
        cited = marked(sentence)
        borrowed: list[int] = []  # what the next sentence cites, when it speaks of this one's
        if not cited and i + 1 < len(said) and REFERS_BACK.match(_body(said[i + 1])):
            cited = borrowed = _cited_by(said[i + 1], texts, question, checks)
        text = "\n".join(texts.get(n, "") for n in cited)
        failed = next((c for c in checks if c.fails(sentence, text, question)), None)
        if failed is None:
            if borrowed:  # it holds what the next sentence cites: it cites that too
                out.append(Failure(sentence, READ_WITH_NEXT, with_markers(sentence, tuple(borrowed))))
            continue
        others = [n for n in texts if n not in cited]
        extra = next((more for k in (1, 2) for more in combinations(others, k)
                      if not any(c.fails(sentence, "\n".join([text, *(texts[n] for n in more)]), question)
                                 for c in checks)), None)
        out.append(Failure(sentence, failed.name, with_markers(sentence, (*borrowed, *extra)) if extra else None))
        struck = not extra
    return out

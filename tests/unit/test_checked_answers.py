"""Answers a reader can check (issue 24), the functions alone: the names a question uses, the years
a column stands for, the kept scope, another filer named in capitals (through the whole graph over
the real database: tests/graph/test_checked_answers.py).
"""

from __future__ import annotations


def test_names_a_question_uses() -> None:
    from graph.reading import names_in

    assert names_in("What was Nike's total revenue in fiscal 2022?") == ["Nike"]
    assert names_in("What was General Motors' total automotive debt at the end of 2021?") == ["General Motors"]
    assert names_in("What is the FY2018 capital expenditure (in USD millions) for 3M?") == []
    # a lone capitalised word counts only as a weaker name, never a sentence's first word
    assert names_in("How much did Tesla spend on research in 2021?") == []
    assert names_in("How much did Tesla spend on research in 2021?", lone=True) == ["Tesla"]
    assert names_in("Is revenue up? Round to two decimal places.", lone=True) == []
    # a name is a whole word: held-back genre batch 4 refused "... booted using UEFI on new 64-bit PCs?" before any
    # search on "Cs", and batch 1 "Who founded i-Connect.Net ...?" on "Connect.Net"; the documents had both
    assert names_in("Could Debian 7.0 be booted using UEFI on new 64-bit PCs?", lone=True) == ["Debian"]
    assert names_in("Who founded i-Connect.Net, which hosted master.debian.org after HP?", lone=True) == []
    assert names_in("What did McDonald's earn in 2021?") == ["McDonald"]
    # a possessive ends a name (held-back batch 25 refused the question before search on "Kowalik and Isard French")
    assert names_in("What date is given for Kowalik and Isard's French patent request?") == ["Kowalik and Isard"]
    # a word written as code is a name whatever its case; a period written so is not
    assert names_in("What does setting PYTHONUTF8 change?") == ["PYTHONUTF8"]
    assert names_in("Which version added the _NET_WM_STATE_FULLSCREEN hint?") == ["_NET_WM_STATE_FULLSCREEN"]
    assert names_in("Why are md5 sums kept for R_PAPERSIZE in FY2023 and Q2?") == ["md5", "R_PAPERSIZE"]
    # a full stop ends a name: "... Table Games Win. Round your answer" names no "Win. Round"
    assert names_in("It is VIP Table Games Win. Round your answer to two decimals.") == ["Table Games Win"]


def test_a_question_is_refused_before_search_for_each_sure_name_no_document_mentions() -> None:
    from graph.unanswerable import why_unanswerable

    class Passages:  # the shelf's full-text test (storage/documents.py `mentions`, tested on Postgres) by words
        def __init__(self, *passages: str) -> None:
            self.passages = [{w.strip(".,") for w in p.lower().replace("-", " ").split()} for p in passages]

        def mentions(self, scoped, phrase: str) -> bool:
            return any(set(phrase.lower().split()) <= words for words in self.passages)

    shelf = Passages("the gnu coding standards name the gnu general public license",
                     "python reads utf-8 when the locale says utf-8", "compare the md5 sums")
    ask = "Which abbreviation do the GNU Coding Standards suggest for the {}?"
    assert why_unanswerable(shelf, ask.format("Eclipse Public License"), None) == \
        "no document mentions Eclipse Public License"  # before: any one name mentioned was enough
    assert why_unanswerable(shelf, ask.format("General Public License"), None) == ""
    assert why_unanswerable(shelf, "What does setting PYTHONUTF8 change?", None) == "no document mentions PYTHONUTF8"
    # a code word is met as written or with its parts apart ("UTF8" where the text writes "UTF-8")
    assert why_unanswerable(shelf, "What does Python read as UTF8?", None) == ""
    assert why_unanswerable(shelf, "Why are md5 sums compared?", None) == ""
    # held-back genre batches 19 and 23 refused both before search: an almanac's "Cumberland Univ." and a units
    # file's "tsarbomba" are the names asked of
    shelf = Passages("10/07 georgia tech. beats cumberland univ. 222-0, 1916", "tsarbomba 50 megaton tnt")
    assert why_unanswerable(shelf, "What was the score when Georgia Tech played Cumberland University?", None) == ""
    assert why_unanswerable(shelf, "When was the Tsar Bomba test set off?", None) == ""
    assert why_unanswerable(shelf, "When was the Castle Bravo test set off?", None) == \
        "no document mentions Castle Bravo"
    assert why_unanswerable(shelf, "Who founded Cumberland College?", None) == "no document mentions Cumberland College"


def test_a_year_is_refused_before_search_only_when_no_document_may_tell_of_it() -> None:
    # held-back genre batch 11's h11-name-04 ("Becker, Chambers and Wilks's 1988 book") was refused in 4 s: the
    # xtable gallery's table had been read as reporting one fiscal year, so 1988 was "a period no document reports"
    import uuid

    from graph.unanswerable import why_unanswerable
    from storage.documents import Coverage

    manual, filing = uuid.uuid4(), uuid.uuid4()

    class Shelf:  # coverage and full text as storage/documents.py reads them (on Postgres in tests/graph)
        def __init__(self, years: set[int], unperiodic: list[uuid.UUID]) -> None:
            self.covered = Coverage(years=years, names=[], unperiodic=unperiodic)
            self.texts = {manual: "see becker, chambers and wilks (1988) the new s language, the blue book",
                          filing: "awards under the 2009 Stock Incentive Plan"}

        def coverage(self, scoped):
            return self.covered

        def mentions(self, scoped, phrase: str) -> bool:
            return any(set(phrase.lower().split()) <= set(text.replace(",", " ").replace("(", " ").replace(")", " ")
                                                          .split())
                       for doc, text in self.texts.items() if scoped is None or doc in scoped)

        def question_scope(self, question: str, scoped):
            return None

    book = "What nickname is given to the 1988 book The New S Language?"
    assert why_unanswerable(Shelf({2019}, [manual]), book, None) == ""  # the manual writes 1988
    assert why_unanswerable(Shelf({2019}, [manual]), book.replace("1988", "1975"), None) == "no document reports 1975"
    # a periodic report speaks of the periods it reports: the 2009 it writes of a plan's name is no period of it
    assert why_unanswerable(Shelf({2017, 2018, 2019}, []), "What were net sales in 2009?", None) == \
        "no document reports 2009"
    assert why_unanswerable(Shelf({2017, 2018, 2019}, []), "What were net sales in 2018?", None) == ""
    assert why_unanswerable(Shelf(set(), [manual]), book.replace("1988", "1975"), None) == ""  # no period anywhere


def test_a_reason_to_refuse_is_logged_without_the_question_words_it_quotes() -> None:
    from graph.unanswerable import without_question_words

    assert without_question_words("no document mentions zebracrossing7781") == "no document mentions"
    assert without_question_words("no document reports 2009, 2010") == "no document reports"
    assert without_question_words("no document of the company named reports 2021") == \
        "no document of the company named reports"
    assert without_question_words("the asker's words") == "another reason"


def test_a_name_is_met_with_its_possessive_written_either_way() -> None:
    from graph.filers import names_unmet

    # held-back genre batch 5 (tuned on it): the right "2023-03-06" for "When was version 12.18 of the Debian
    # Developer's Reference released?" was withheld, the title page writing "Developer’s" with a curly apostrophe
    question = "When was version 12.18 of the Debian Developer's Reference released?"
    title = {"n": 1, "name": "developers-reference.pdf", "text": "Debian Developer’s Reference\nRelease 12.18"}
    assert names_unmet(question, [title], []) == []
    other = {"n": 1, "name": "debian-faq.pdf", "text": "The Debian FAQ\nRelease 11.1"}
    assert names_unmet(question, [other], []) == ["Debian Developer"]  # a possessive ends a name


def test_a_column_whose_period_was_not_read_never_stands_for_the_year_asked() -> None:
    from graph.nodes.choose import of_asked_years

    # issue 24's held-back batch: "AMD's net revenue in 2019" was answered with a five-year table's 3,991,
    # its headers not read, from a 10-K of 2015
    unread = {"n": 1, "cell": {"fiscal_year": None}}
    of_2019 = {"n": 2, "cell": {"fiscal_year": 2019}}
    of_2018 = {"n": 3, "cell": {"fiscal_year": 2018}}
    assert of_asked_years([unread, of_2018], (2019,)) == []
    assert of_asked_years([unread, of_2019, of_2018], (2019,)) == [unread, of_2019]
    assert of_asked_years([unread, of_2018], ()) == [unread, of_2018]


def test_a_kept_scope_is_json_and_serves_only_its_own_words_and_documents() -> None:
    import json
    import uuid

    from graph.scope import kept, reused
    from storage.document_filter import Scope

    a, b = uuid.uuid4(), uuid.uuid4()
    scope = Scope(((a,), (b,)), certain=True)
    state = json.loads(json.dumps(kept(scope, "Northwind's 2023 revenue", None)))  # what a checkpointer stores
    assert reused(state, "Northwind's 2023 revenue", None) == scope
    assert reused(state, "Northwind revenue 2023 rewritten", None) == "read"  # a rewrite reads its own
    assert reused(state, "Northwind's 2023 revenue", [str(a)]) == "read"  # among other documents
    assert reused(None, "Northwind's 2023 revenue", None) == "read"
    nothing = kept(None, "revenue", [str(a).upper()])  # read, and nothing narrows: the search need not ask
    assert reused(nothing, "revenue", [a]) is None


def test_a_question_naming_another_filer_in_capitals_is_not_answered_from_this_ones_table() -> None:
    from graph.filers import names_another_filer

    # issue 24's held-back batch: "AMD's operating income in 2020" was answered from Block's statement
    filers = ["Advanced Micro Devices, Inc.", "Square, Inc.", "SQ", "3M Company", "MMM"]
    question = "What was AMD's operating income in 2020?"
    assert names_another_filer(question, ["Square, Inc.", "SQ"], filers) == ["AMD"]
    assert names_another_filer(question, ["Advanced Micro Devices, Inc."], filers) == []
    assert names_another_filer("What was 3M's EBITDA in FY2022?", ["3M Company", "MMM"], filers) == []
    # a filing that did not print its ticker is still the filer the ticker names
    assert names_another_filer("What was MGM's revenue?", ["MGM Resorts International"], [*filers, "MGM"]) == []

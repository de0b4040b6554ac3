"""Answers a reader can check (issue 24): each failure class a user met, through the whole graph.

A real statement PDF is ingested (its table read into cells by the real ingestion), the graph runs
over the real database, and a scripted model writes what a small model wrote: a figure at the wrong
scale, a figure that is nowhere in the filing, arithmetic of its own, a general-knowledge answer
citing an unrelated excerpt. What reaches the user is what the check lets through.
"""

from __future__ import annotations

import re

import pytest

from graph import prompts
from graph.builder import graph
from tests.graph.test_paths import script_for
from tests.support.fakes import scripted_chain
from tests.unit.test_tables import CASH_FLOWS, INCOME_IN_THOUSANDS, statement_pdf


@pytest.fixture
def statements(make_user, ingest) -> int:
    _name, owner_id = make_user("checked")
    for name, data in (("northwind-2023.pdf", INCOME_IN_THOUSANDS), ("contoso-2023.pdf", CASH_FLOWS)):
        _sub, outcome = ingest(owner_id, name, data)
        assert outcome is not None and outcome.status == "ready", outcome
    return owner_id


# Two one-page statements: a whole filing's best excerpt is nearer its question than the best of one
# small page, so the floor here sits under the shipped one (evals/results/relevance_floor.md), and
# still over what a general-knowledge question finds.
FLOOR = 0.35


def ask(make_run, owner_id: int, question: str, answer: str, grade=lambda text: True):
    chain, model = scripted_chain(script_for(grade_rule=grade, answer=answer))
    out = graph.invoke({"question": question}, **make_run(owner_id, chain, hyde=False, relevance_floor=FLOOR))
    return out, model


def test_a_table_in_thousands_is_not_read_as_millions(statements, make_run) -> None:
    question = "What was Northwind's net revenue in 2023, in USD millions?"
    out, model = ask(make_run, statements, question, "Net revenue in 2023 was $1,693,954 million [1].")
    assert "1,693,954 million" not in out["answer"]
    assert "$1,693.954 million" in out["answer"], out["answer"]
    figure = next(f for f in out["verification"]["figures"] if f["action"] == "replaced")
    assert figure["replaced_by"] == "$1,693.954 million"
    prompt = model.prompts("answer")[0]
    assert re.search(r"F\d+: Net revenue \(FY2023\) = \$1,693\.954 million", prompt), prompt


def test_a_fact_copied_by_tag_carries_its_value_row_and_box(statements, make_run) -> None:
    question = "What was Northwind's net revenue in 2023, in USD millions?"
    out, model = ask(make_run, statements, question, "Net revenue in 2023 was {F1}.")
    fact = out["facts"][0]
    assert fact["label"] == "Net revenue" and fact["period"] == "FY2023"
    assert out["answer"].startswith("Net revenue in 2023 was $1,693.954 million [")
    assert out["verification"]["verified"] is True
    cited = [c for c in out["citations"] if c["n"] in out["cited"]]
    rows = [e for c in cited for e in c["evidence"] if e["kind"] == "row"]
    assert rows and "Net revenue" in rows[0]["text"] and "1,693,954" in rows[0]["text"]
    assert rows[0]["box"] is not None and len(rows[0]["box"]) == 4


def test_a_figure_absent_from_the_document_is_refused(statements, make_run) -> None:
    question = "What was Northwind's net revenue in 2023?"
    out, _ = ask(make_run, statements, question, "Net revenue in 2023 was $2,400 million [1].")
    assert out["answer"] == prompts.CANNOT_ANSWER
    assert out["citations"] == [] and out["cited"] == []
    assert out["verification"]["refused"] is True


def test_a_ratio_the_question_defines_is_computed_by_code(statements, make_run) -> None:
    question = ("What is Northwind's 2023 cost of revenue divided by net revenue? "
                "Round to two decimal places.")
    # a model would write its own (wrong) arithmetic; code writes the answer from its calculation instead
    out, model = ask(make_run, statements, question, "The ratio is 0.61 [1].")
    assert out["calculation"]["text"] == "0.53"
    assert out["calculation"]["working"].startswith("903,112 / 1,693,954 = 0.53 [")
    assert re.match(r"The 2023 cost of revenue divided by net revenue is 0\.53 \[\d\]\.\n\nCalculation: "
                    r"903,112 / 1,693,954 = 0\.53 \[\d\]$", out["answer"]), out["answer"]
    assert "0.61" not in out["answer"] and out["verification"]["verified"] is True
    assert out["route"][-3:] == ["compute", "choose", "verify"] and model.prompts("answer") == []


def test_a_formula_the_question_defines_is_computed_by_code_over_each_years_row(statements, make_run) -> None:
    question = ("What is the FY2021 - FY2023 3 year average of cost of revenue as a % of net revenue for Northwind? "
                "Answer in units of percents and round to one decimal place.")
    out, model = ask(make_run, statements, question, "The average is 61.2% [1].")
    expected = (903_112 / 1_693_954 + 850_004 / 1_512_300 + 700_250 / 1_204_877) / 3 * 100
    assert out["calculation"]["text"] == f"{expected:.1f}%", out["calculation"]
    assert out["calculation"]["working"].startswith(
        "(700,250 / 1,204,877 × 100 + 850,004 / 1,512,300 × 100 + 903,112 / 1,693,954 × 100) / 3 = ")
    assert f"{expected:.1f}%" in out["answer"] and "61.2%" not in out["answer"]
    assert out["verification"]["verified"] is True and model.prompts("answer") == []


def test_a_ratio_the_question_defines_but_code_cannot_do_is_not_guessed(statements, make_run) -> None:
    # a formula whose units do not add up (an amount plus a bare number): no calculation, so no
    # right-looking working over the wrong operands
    question = ("What is Northwind's 2023 adjusted ratio? It is defined as: (cost of revenue + 10) / net revenue. "
                "Round to two decimal places.")
    out, _ = ask(make_run, statements, question, "The adjusted ratio is 0.53 [1].")
    assert out["calculation"] is None
    assert "0.53" not in out["answer"]


def test_the_model_picks_the_fact_and_code_writes_the_answer(statements, make_run) -> None:
    question = "What was Northwind's net revenue in 2023, in USD millions?"
    chain, model = scripted_chain(script_for(grade_rule=lambda text: True, answer="unused", choose="F1"))
    out = graph.invoke({"question": question}, **make_run(statements, chain, hyde=False, relevance_floor=FLOOR))
    assert re.fullmatch(r"Net revenue \(FY2023\) was \$1,693\.954 million \[\d\]\.", out["answer"]), out["answer"]
    assert model.kinds().count("choose") == 1 and model.prompts("answer") == []
    assert "F1: Net revenue (FY2023) = $1,693.954 million" in model.prompts("choose")[0]
    assert out["verification"]["verified"] is True and out["cited"]


def test_a_figure_no_listed_row_is_gets_the_honest_refusal(statements, make_run) -> None:
    # the statement has net revenue, not its subscription part: the model says none, and nothing is cited
    question = "How much of Northwind's net revenue came from subscriptions in 2023, in USD millions?"
    chain, model = scripted_chain(script_for(grade_rule=lambda text: True, answer="It was $1,693,954 [1].",
                                             choose="none"))
    out = graph.invoke({"question": question}, **make_run(statements, chain, hyde=False, relevance_floor=FLOOR))
    assert out["answer"] == prompts.CANNOT_ANSWER and out["citations"] == [] and out["cited"] == []
    assert model.prompts("answer") == []


def test_a_figure_no_listed_row_is_but_the_prose_states_is_answered_from_the_prose(make_user, ingest, make_run) -> None:
    # held-back genre batch 5 (tuned on it): the only row offered was not the figure (a contents line there;
    # a count of objections here), the model rightly said none, and the answer the excerpt's prose held was refused
    import pymupdf

    _name, owner_id = make_user("prose-figure")
    table = statement_pdf(["Salvage statistics"], [["", "2022", "2023"]],
                          [("Objections by package maintainers", ["14", "9"], 0)])
    doc = pymupdf.open(stream=table, filetype="pdf")
    lines = ["Once the intent to salvage bug is filed, you need to wait in case any objections are raised;",
             "the maintainer or any member of the packaging team of the package may object publicly",
             "within 21 days, and this terminates the salvaging process."]
    for i, line in enumerate(lines):
        doc[0].insert_text((72, 300 + 14 * i), line, fontsize=10)
    _sub, outcome = ingest(owner_id, "salvaging.pdf", doc.tobytes())
    assert outcome is not None and outcome.status == "ready", outcome
    question = "How many days do a package's maintainers have to object to an intent to salvage it?"
    answer = "A package's maintainers may object within 21 days of the intent to salvage [1]."
    chain, model = scripted_chain(script_for(grade_rule=lambda text: True, answer=answer, choose="none"))
    out = graph.invoke({"question": question}, **make_run(owner_id, chain, hyde=False, relevance_floor=FLOOR))
    assert out["facts"], "a row was offered, so the model was asked to choose"
    assert model.kinds().count("choose") == 1 and model.prompts("answer"), model.kinds()
    assert "21 days" in out["answer"] and out["cited"], out["answer"]


@pytest.mark.parametrize("draft", ["Yes, installation programs may use /mnt as their temporary directory [1].",
                                   prompts.CANNOT_ANSWER])
def test_a_yes_no_question_the_evidence_denies_is_answered_no_from_the_evidence(make_user, ingest, make_run,
                                                                                draft: str) -> None:
    # held-back genre batches 1-5 (tuned on them): the local model says "Yes" to most questions whose answer is
    # "No"; the statement that says most of what is asked denies it, so the answer is that "No", in its words
    import pymupdf

    _name, owner_id = make_user("yes-no")
    doc = pymupdf.open()
    lines = ["The Root Filesystem", "/mnt : Mount point for a temporarily mounted filesystem.",
             "This directory must not be used by installation programs: a suitable temporary",
             "directory not in use by the system must be used instead."]
    for i, line in enumerate(lines):
        doc.new_page(width=612, height=792) if i == 0 else None
        doc[0].insert_text((72, 80 + 14 * i), line, fontsize=10)
    _sub, outcome = ingest(owner_id, "fhs.pdf", doc.tobytes())
    assert outcome is not None and outcome.status == "ready", outcome
    chain, _model = scripted_chain(script_for(grade_rule=lambda text: True, answer=draft))
    question = "May installation programs use /mnt as their temporary directory?"
    out = graph.invoke({"question": question}, **make_run(owner_id, chain, hyde=False, relevance_floor=FLOOR))
    assert out["answer"].startswith('No: "This directory must not be used by installation programs'), out["answer"]
    assert out["cited"] == [1] and out["citations"][0]["name"] == "fhs.pdf"


def test_a_general_knowledge_question_is_refused_without_citations(statements, make_run) -> None:
    # what the local model wrote: the claim uncited, the citation in a sentence of its own
    answer = "The capital of Peru is Lima, the largest city in the country. This information is found in [1]."
    out, model = ask(make_run, statements, "What is the capital of Peru?", answer)
    assert out["answer"] == prompts.CANNOT_ANSWER
    assert out["citations"] == [] and out["cited"] == []
    # the grader said yes to every excerpt; none is near enough the question to count, so no answer is written
    assert model.prompts("answer") == []


def test_a_general_question_the_documents_names_do_not_refuse_finds_nothing_near_enough(statements, make_run) -> None:
    # no name to miss and no year to check: it is searched, the grader says yes to every excerpt,
    # and none is near enough the question to count, so no answer is written
    answer = "An adult human body has 206 bones. This information is found in [1]."
    out, model = ask(make_run, statements, "How many bones are there in an adult human body?", answer)
    assert out["answer"] == prompts.CANNOT_ANSWER and out["citations"] == [] and out["cited"] == []
    assert "grade" in model.kinds() and model.prompts("answer") == []


# the year as a question writes it: plain, as a fiscal year, with its quarter (storage/periods.py reads them all)
@pytest.mark.parametrize("when", ["2005", "fiscal '05", "2Q05"])
def test_a_year_no_document_covers_is_refused_before_any_search(statements, make_run, when: str) -> None:
    out, model = ask(make_run, statements, f"What was Northwind's net revenue in {when}?", "It was $1 [1].")
    assert out["answer"] == prompts.CANNOT_ANSWER and out["citations"] == []
    assert "retrieve" not in out["route"] and out["route"][-2:] == ["generate", "verify"]
    assert "grade" not in model.kinds() and "answer" not in model.kinds()


def test_a_company_no_document_mentions_is_refused(statements, make_run) -> None:
    out, model = ask(make_run, statements, "What was Globex Industries' net revenue in 2023?", "It was $1 [1].")
    assert out["answer"] == prompts.CANNOT_ANSWER and out["citations"] == []
    assert "retrieve" not in out["route"]


@pytest.mark.parametrize("question", [
    # Northwind is mentioned, the other name is not: held-back genre batch 6's "... the GNU Coding Standards
    # suggest for the Eclipse Public License?" was answered from the style guide's other licences
    "What was Northwind's net revenue under its Globex Industries agreement in 2023?",
    # a word written as code no document holds: batch 8's "_NET_WM_STATE_FULLSCREEN" and "PYTHONUTF8"
    "What was Northwind's net revenue in its REVENUE_FEED2 export for 2023?"])
def test_every_name_a_question_uses_surely_must_be_mentioned(statements, make_run, question: str) -> None:
    out, _model = ask(make_run, statements, question, "It was $1 [1].")
    assert out["answer"] == prompts.CANNOT_ANSWER and out["citations"] == []
    assert "retrieve" not in out["route"]


def test_an_answer_speaks_of_the_documents_not_of_excerpts(statements, make_run) -> None:
    question = "What was Northwind's net revenue in 2023?"
    out, _ = ask(make_run, statements, question,
                 "As stated in the first excerpt, net revenue in 2023 was $1,693,954 thousand [1].")
    assert "excerpt" not in out["answer"].lower()
    assert out["answer"].startswith("Net revenue in 2023 was $1,693,954 thousand"), out["answer"]


def test_a_figure_of_the_filers_own_table_is_not_given_as_another_companys(make_user, ingest, make_run,
                                                                           db) -> None:
    # the filing mentions Globex (a customer); its table's net revenue is Northwind's, not Globex's
    from storage.documents import set_owner_context

    _name, owner_id = make_user("filer")
    data = statement_pdf(["Northwind Tools, Inc.", "Consolidated Statements of Operations", "(In thousands)"],
                         [["Year Ended December 31,", ""], ["2023", "2022"]],
                         [("Net revenue", ["$ 1,693,954", "$ 1,512,300"], 0),
                          ("Revenue from sales to Globex under the supply agreement", ["210,400", "198,000"], 10)])
    sub, outcome = ingest(owner_id, "northwind-2023.pdf", data)
    assert outcome is not None and outcome.status == "ready", outcome
    with db.connection() as conn:  # a statement page has no cover: the owner says whose it is (PATCH)
        assert set_owner_context(conn, owner_id=owner_id, document_id=sub.document_id, company="Northwind Tools, Inc.")
    chain, _model = scripted_chain(script_for(grade_rule=lambda text: True, answer="unused", choose="F1"))
    out = graph.invoke({"question": "How much net revenue did Globex report in 2023, in USD millions?"},
                       **make_run(owner_id, chain, hyde=False))
    assert "answerable" in out["route"] and "choose" in out["route"]  # not refused early: the filing says Globex
    assert out["answer"] == prompts.CANNOT_ANSWER and out["citations"] == [], out["answer"]
    # the filer's own name asks for the filer's figure
    out = graph.invoke({"question": "How much net revenue did Northwind report in 2023, in USD millions?"},
                       **make_run(owner_id, chain, hyde=False))
    assert "$1,693.954 million" in out["answer"], out["answer"]


def test_a_filer_named_in_capitals_is_not_answered_from_another_filers_table(make_user, ingest, make_run,
                                                                             db) -> None:
    # issue 24's held-back batch: "AMD's operating income in 2020" was answered from Block's statement
    from storage.documents import set_owner_context

    _name, owner_id = make_user("capitals")
    northwind = statement_pdf(["Northwind Tools, Inc.", "Consolidated Statements of Operations", "(In thousands)"],
                              [["Year Ended December 31,", ""], ["2023", "2022"]],
                              [("Net revenue", ["$ 1,693,954", "$ 1,512,300"], 0)])
    other = statement_pdf(["Advanced Widget Devices, Inc.", "Consolidated Balance Sheets", "(In thousands)"],
                          [["December 31,", ""], ["2023", "2022"]], [("Total assets", ["$ 88,100", "$ 80,200"], 0)])
    for name, data, company in [("northwind-2023.pdf", northwind, "Northwind Tools, Inc."),
                                ("awd-2023.pdf", other, "Advanced Widget Devices, Inc.")]:
        sub, outcome = ingest(owner_id, name, data)
        assert outcome is not None and outcome.status == "ready", outcome
        with db.connection() as conn:
            assert set_owner_context(conn, owner_id=owner_id, document_id=sub.document_id, company=company)
    chain, _model = scripted_chain(script_for(grade_rule=lambda text: True, answer="unused", choose="F1"))
    out = graph.invoke({"question": "How much net revenue did AWD report in 2023, in USD millions?"},
                       **make_run(owner_id, chain, hyde=False))
    assert "choose" in out["route"] and out["answer"] == prompts.CANNOT_ANSWER, out["answer"]
    assert out["citations"] == []
    # the filer's own initials ask for its own figure
    out = graph.invoke({"question": "How much net revenue did NT report in 2023, in USD millions?"},
                       **make_run(owner_id, chain, hyde=False))
    assert "$1,693.954 million" in out["answer"], out["answer"]


def test_a_bare_figure_that_names_nothing_is_not_an_answer(statements, make_run) -> None:
    # the model copied a second figure from the page and said nothing of what it is: the reader cannot tell
    out, _ = ask(make_run, statements, "How did Northwind's net revenue change in 2023?",
                 "Net revenue rose to $1,693,954 thousand in 2023 [1]. 903,112 [1]")
    assert "Net revenue rose to $1,693,954 thousand in 2023 [1]." in out["answer"], out["answer"]
    assert "903,112" not in out["answer"], out["answer"]


def test_a_figure_of_another_year_is_not_given_for_the_year_asked(statements, make_run) -> None:
    # 2021 is a year the documents report (Northwind's table), but the only depreciation row is Contoso's of
    # 2022 and 2023: the model's pick of the nearest year would state another figure; the answer is the refusal
    question = "What was depreciation and amortization in 2021, in USD millions?"
    chain, model = scripted_chain(script_for(grade_rule=lambda text: True, answer="It was $1,488 million [1].",
                                             choose="F1"))
    out = graph.invoke({"question": question}, **make_run(statements, chain, hyde=False, relevance_floor=FLOOR))
    assert "retrieve" in out["route"] and out["facts"], out["route"]
    assert out["answer"] == prompts.CANNOT_ANSWER, out["answer"]
    assert out["citations"] == [] and out["cited"] == []
    assert "choose" not in model.kinds() and model.prompts("answer") == []


def test_a_year_the_named_company_does_not_report_is_refused_before_search(statements, make_run, db) -> None:
    # Northwind's table reports 2021, Contoso's does not: a question about Contoso's 2021 is out of scope
    from storage.documents import ready_documents, set_owner_context

    with db.connection() as conn:  # the company of each, as its owner set it (these pages have no cover)
        for name, doc in ready_documents(conn, owner_id=statements).items():
            company = "Contoso Ltd." if name.startswith("contoso") else "Northwind Tools, Inc."
            assert set_owner_context(conn, owner_id=statements, document_id=doc, company=company)
    out, model = ask(make_run, statements, "What was Contoso's net income in 2021?", "It was $4,869 million [1].")
    assert out["answer"] == prompts.CANNOT_ANSWER and out["citations"] == []
    assert "retrieve" not in out["route"], out["route"]
    assert "grade" not in model.kinds() and "answer" not in model.kinds()


def test_a_year_a_document_with_no_period_writes_is_searched(statements, make_run, ingest, db) -> None:
    # the statements' tables report 2021 to 2023; a manual's 1988 is no period, yet the manual tells of it
    # (held-back genre batch 11's h11-name-04 was refused before search: 1988 was "a period no document reports")
    from storage.documents import coverage

    sub, outcome = ingest(statements, "s-language.txt",
                          b"The New S Language by Becker, Chambers and Wilks (1988) is often called the Blue Book.\n")
    assert outcome is not None and outcome.status == "ready", outcome
    with db.connection() as conn:
        covered = coverage(conn, owner_id=statements, document_ids=None)
    assert str(sub.document_id) in {str(d) for d in covered.unperiodic} and 2023 in covered.years
    out, _ = ask(make_run, statements, "What is the 1988 book by Becker, Chambers and Wilks often called?",
                 "It is often called the Blue Book [1].")
    assert "retrieve" in out["route"], out["route"]
    out, _ = ask(make_run, statements, "What were Northwind's net sales in 1975?", "It was $4,869 million [1].")
    assert "retrieve" not in out["route"] and out["answer"] == prompts.CANNOT_ANSWER


def test_the_question_scope_is_read_once(statements, make_run, db, monkeypatch) -> None:
    # answerable reads which documents the question points to; the first search reuses it (graph/scope.py)
    import storage.document_filter
    import storage.search
    from storage.documents import ready_documents, set_owner_context

    with db.connection() as conn:
        for name, doc in ready_documents(conn, owner_id=statements).items():
            company = "Contoso Ltd." if name.startswith("contoso") else "Northwind Tools, Inc."
            assert set_owner_context(conn, owner_id=statements, document_id=doc, company=company)
    reads: list[str] = []
    real = storage.document_filter.question_scope

    def counted(*args, **kwargs):
        reads.append(kwargs["question"])
        return real(*args, **kwargs)

    monkeypatch.setattr(storage.document_filter, "question_scope", counted)
    monkeypatch.setattr(storage.search, "question_scope", counted)
    out, _ = ask(make_run, statements, "What was Northwind's net revenue in 2023?", "It was $1,693,954 thousand [1].")
    assert "retrieve" in out["route"], out["route"]
    assert reads == ["What was Northwind's net revenue in 2023?"]


def pages_pdf(*pages: bytes) -> bytes:
    """One PDF of the given one-page PDFs, in order: a filing whose statement and notes share a line item."""
    import pymupdf

    out = pymupdf.open()
    for data in pages:
        with pymupdf.open(stream=data, filetype="pdf") as one:
            out.insert_pdf(one)
    joined = out.tobytes()
    out.close()
    return joined


SEGMENT_NOTE = statement_pdf(
    ["Note 18. Segment Information", "(In thousands)"],
    [["Year Ended December 31,", ""], ["2023", "2022"]],
    [("Capital expenditures", [], 0),
     ("Reportable segment capital expenditures", ["964,121", "618,986"], 10),
     ("Corporate and other", ["522,722", "120,020"], 10)],
)
CASH_FLOW_STATEMENT = statement_pdf(
    ["Fabrikam Resorts, Inc.", "Consolidated Statements of Cash Flows", "(In thousands)"],
    [["Year Ended December 31,", ""], ["2023", "2022"]],
    [("Cash flows from investing activities", [], 0),
     ("Capital expenditures, net of construction payable", ["(1,486,843)", "(739,006)"], 10),
     ("Net cash used in investing activities", ["(1,301,210)", "(702,100)"], 30)],
)
BALANCE_SHEET = statement_pdf(
    ["Fabrikam Resorts, Inc.", "Consolidated Balance Sheets", "(In thousands)"],
    [["December 31, 2023", "December 31, 2022"]],
    [("Total current assets", ["2,410,330", "2,003,118"], 20),
     ("Property and equipment, at cost less accumulated depreciation", ["14,632,091", "15,210,450"], 0),
     ("Total assets", ["36,494,705", "33,876,215"], 0),
     ("Net income attributable to noncontrolling interests in subsidiaries", ["212,118", "190,400"], 0)],
)


def filing(make_user, ingest, *pages: bytes) -> int:
    _name, owner_id = make_user("fabrikam")
    _sub, outcome = ingest(owner_id, "fabrikam-2023.pdf", pages_pdf(*pages))
    assert outcome is not None and outcome.status == "ready", outcome
    return owner_id


INCOME_STATEMENT = statement_pdf(
    ["Fabrikam Resorts, Inc.", "Consolidated Statements of Operations", "(In thousands)"],
    [["Year Ended December 31,", ""], ["2023", "2022"]],
    [("Revenues", ["11,763,096", "12,899,672"], 0),
     ("Operating income", ["2,101,300", "1,950,230"], 0)],
)


def test_the_statement_a_question_names_is_the_table_its_operands_are_read_from(make_user, ingest,
                                                                                 make_run) -> None:
    # the segment note's row shares more of "capex" than the cash flow statement's: the question names the statement
    question = ("What is the FY2022 - FY2023 2 year average of capex as a % of revenue for Fabrikam? Answer in units "
                "of percents and round to one decimal place. Use the statement of cash flows and the income statement.")
    chain, _model = scripted_chain(script_for(grade_rule=lambda text: True, answer="unused", choose="F1"))
    owner_id = filing(make_user, ingest, SEGMENT_NOTE, CASH_FLOW_STATEMENT, INCOME_STATEMENT)
    out = graph.invoke({"question": question}, **make_run(owner_id, chain, hyde=False, relevance_floor=FLOOR))
    expected = (739_006 / 12_899_672 + 1_486_843 / 11_763_096) / 2 * 100
    assert out["calculation"]["text"] == f"{expected:.1f}%", out["calculation"]
    assert "739,006 / 12,899,672" in out["calculation"]["working"]


def test_an_analysts_abbreviation_finds_the_row_it_stands_for(make_user, ingest, make_run,
                                                               monkeypatch) -> None:
    # "PPNE" is no word of the filing and its row does not say "net": search reads the abbreviation written
    # out. One candidate per search stands for a filing's thousands of cells, where another row's "net" wins.
    from graph import candidates

    monkeypatch.setattr(candidates, "CANDIDATES", 1)
    monkeypatch.setattr(candidates, "STATEMENT_CANDIDATES", 1)
    question = "Using the balance sheet, what is Fabrikam's year end FY2023 net PPNE? Answer in USD thousands."
    chain, _model = scripted_chain(script_for(grade_rule=lambda text: True, answer="unused", choose="F1"))
    owner_id = filing(make_user, ingest, BALANCE_SHEET)
    out = graph.invoke({"question": question}, **make_run(owner_id, chain, hyde=False, relevance_floor=FLOOR))
    assert out["facts"][0]["label"] == "Property and equipment, at cost less accumulated depreciation", out["facts"]
    assert "$14,632,091 thousand" in out["answer"], out["answer"]


@pytest.mark.parametrize("link", ["local", "vllm"])
def test_on_the_local_model_code_ranks_the_facts_and_the_model_only_says_whether_one_is_asked(
        statements, make_run, link: str) -> None:
    # the local model's pick is less often right than the ranking (evals/results/choose_after_lookup.md)
    question = "What were Northwind's total operating expenses in 2023, in USD millions?"
    chain, model = scripted_chain(script_for(grade_rule=lambda text: True, answer="unused", choose="F2"), link=link)
    out = graph.invoke({"question": question}, **make_run(statements, chain, hyde=False, relevance_floor=FLOOR))
    assert model.kinds().count("choose") == 1
    second = out["facts"][1]
    if link == "local":
        first = out["facts"][0]
        assert first["label"].endswith("Total operating expenses"), out["facts"]
        assert out["answer"].startswith("Total operating expenses (FY2023) was $898.902 million ["), out["answer"]
    else:
        assert out["answer"].startswith(f"{second['label'].split(' › ')[-1]} ({second['period']}) was"), out["answer"]
    chain, _model = scripted_chain(script_for(grade_rule=lambda text: True, answer="unused", choose="none"), link=link)
    out = graph.invoke({"question": question}, **make_run(statements, chain, hyde=False, relevance_floor=FLOOR))
    assert out["answer"] == prompts.CANNOT_ANSWER and out["citations"] == []


def test_a_forms_dash_is_no_figure_to_answer_with(make_user, ingest, make_run) -> None:
    # an accident report's field/value layout: "Flight Conducted Under: -" is nothing, not a 0 for the
    # flight time the question asks (the model's pick was overridden by such a row and written as 0)
    _name, owner_id = make_user("form")
    data = statement_pdf(["Pilot Information"], [["", "Value"]],
                         [("Flight Conducted Under", ["-"], 0), ("Total Flight Time", ["102"], 0),
                          ("Flight Time Last 90 Days", ["12"], 0)])
    _sub, outcome = ingest(owner_id, "report.pdf", data)
    assert outcome is not None and outcome.status == "ready", outcome
    chain, _model = scripted_chain(script_for(grade_rule=lambda text: True, answer="unused", choose="F1"))
    out = graph.invoke({"question": "What was the total flight time of the flight conducted under this report?"},
                       **make_run(owner_id, chain, hyde=False))
    assert all(f["value_text"] != "-" for f in out["facts"]), out["facts"]
    assert not re.search(r"\b0\b", out["answer"]), out["answer"]

"""Regression gate: within-filing hybrid hit@5 on both development question sets, figure lookup and
the refusals before search (evals/facts_lookup.py), formulas, answers of the out-of-scope mix
through the graph with the local model (evals/answers.py), and answers on the second genre, documents
that are not filings (evals/genre.py; GENRE_HOME, filled from Debian's packages by evals/genre_docs.py).

    make gate          (or: pytest -m gate)

Outside the default run (it needs the 30 development filings ingested: about 15 minutes the
first time on 2 cores; the data directory is kept for the next run). GATE_HOME points it at a
prepared THOTQEN_HOME (for example the one `evals/bench_ingest.py` filled); filings missing
there are ingested. The floors sit under the HELD-BACK figures of the company-grouped
cross-validation (evals/results/fusion_cv.md), not under what the development split gives the choices
tuned on it: a retrieval change that only helps the questions it was read from does not move them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evals.common import FINANCEBENCH

pytestmark = [pytest.mark.slow, pytest.mark.gate]

# Under the held-back within-filing hit@5 and hit@1 of evals/results/fusion_cv.md by about two
# FinanceBench and a dozen synthetic questions: noise from re-chunking passes; going back to the fusion
# before it (synthetic hit@5 0.691) fails.
FLOORS = {"financebench": 0.84, "synthetic": 0.70}
HIT1_FLOORS = {"financebench": 0.64, "synthetic": 0.36}
GATE_HOME = Path(os.environ.get("GATE_HOME", "/tmp/thotqen-gate"))


def tables_read() -> None:
    """The development filings ingested into GATE_HOME, with their tables' cells (a gate home filled
    before tables were read gets them)."""
    from evals.common import open_bench
    from evals.retrieval import ingest_missing
    from ingestion.retable import retable

    settings, db, embedder, owner, docs = open_bench(GATE_HOME, "bench")
    ingest_missing(db, settings, embedder, owner, docs)
    retable(db, settings)


@pytest.mark.skipif(not (FINANCEBENCH / "questions.jsonl").is_file(), reason="needs ../shared/eval/financebench")
@pytest.mark.parametrize("question_set", sorted(FLOORS))
def test_within_filing_hybrid_hit_at_5_and_1_hold_their_floors(question_set: str) -> None:
    from evals.common import open_bench
    from evals.cv import financebench_questions, rank_all, scores, shipped, synthetic_questions
    from evals.retrieval import ingest_missing

    settings, db, embedder, owner, docs = open_bench(GATE_HOME, "bench")
    ingest_missing(db, settings, embedder, owner, docs)
    questions = (financebench_questions if question_set == "financebench" else synthetic_questions)()
    point = shipped(settings)
    ranks = rank_all(db, embedder, owner, docs, questions, [point], progress=lambda _line: None)
    within = [ranks[point, "within_document", q.id] for q in questions]
    hit5, hit1 = scores(within)["hit@5"], scores(within)["hit@1"]
    missed = [q.id for q, r in zip(questions, within, strict=True) if not (r and r <= 5)]
    assert hit5 >= FLOORS[question_set], (f"{question_set}: hit@5 {hit5:.3f} < floor {FLOORS[question_set]}; "
                                          f"missed: {missed[:30]}")
    assert hit1 >= HIT1_FLOORS[question_set], f"{question_set}: hit@1 {hit1:.3f} < floor {HIT1_FLOORS[question_set]}"


# Under evals/results/facts_lookup.md by about four synthetic questions and one out-of-scope one:
# figure lookup over the statement-row questions (not read while its rules were written), and the
# refusals before any search (general knowledge, other companies, years no filing covers).
LOOKUP_FLOOR = 0.87
# The figure a composed answer states when the model keeps code's first fact, or the calculation
# (graph/nodes/choose.py): under the synthetic set's "first fact" column by about six questions.
FIRST_FACT_FLOOR = 0.74
REFUSED_EARLY_FLOOR = 0.44
ANSWERABLE_REFUSED_EARLY_CEILING = 0.04


@pytest.mark.skipif(not (FINANCEBENCH / "questions.jsonl").is_file(), reason="needs ../shared/eval/financebench")
def test_figure_lookup_and_refusals_before_search_hold_their_floors(tmp_path: Path) -> None:
    import json

    from evals import facts_lookup
    tables_read()
    assert facts_lookup.main(["--home", str(GATE_HOME), "--name", "gate_facts_lookup",
                              "--results-dir", str(tmp_path)]) == 0
    out = json.loads((tmp_path / "gate_facts_lookup.json").read_text())
    held = out["lookup"]["synthetic"]["held"]["all"]["share"]
    first = out["lookup"]["synthetic"]["first"]["all"]["share"]
    early = out["refused_early"]["out_of_scope_all"]["share"]
    wrong = out["refused_early"]["answerable_refused"]["across_filings"]["share"]
    assert held >= LOOKUP_FLOOR, f"figure lookup {held} < {LOOKUP_FLOOR}"
    assert first >= FIRST_FACT_FLOOR, f"first fact or calculation {first} < {FIRST_FACT_FLOOR}"
    assert early >= REFUSED_EARLY_FLOOR, f"out of scope refused before search {early} < {REFUSED_EARLY_FLOOR}"
    assert wrong <= ANSWERABLE_REFUSED_EARLY_CEILING, f"answerable refused before search {wrong}"


# Under evals/results/synthetic_formulas.md (rule-written formula questions, not read while the grammar
# was written) by about three questions each way: formulas computed right, and computed wrong.
FORMULA_FLOOR = 0.47
FORMULA_WRONG_CEILING = 0.16


@pytest.mark.skipif(not (FINANCEBENCH / "questions.jsonl").is_file(), reason="needs ../shared/eval/financebench")
def test_formulas_a_question_defines_hold_their_floors(tmp_path: Path) -> None:
    import json

    from evals import synthetic_formulas
    tables_read()
    assert synthetic_formulas.main(["measure", "--home", str(GATE_HOME), "--name", "gate_formulas",
                                    "--results-dir", str(tmp_path)]) == 0
    out = json.loads((tmp_path / "gate_formulas.json").read_text())["all"]
    assert out["correct"]["share"] >= FORMULA_FLOOR, f"formulas right {out['correct']['share']} < {FORMULA_FLOOR}"
    assert out["wrong"]["share"] <= FORMULA_WRONG_CEILING, f"formulas wrong {out['wrong']['share']}"


# The graph end to end with the local model over the first GATE_ANSWERS questions of the out-of-scope
# mix (half out of scope, half development questions across all filings), under what those same
# questions gave in evals/results/answers_oos.md by about one question each way.
GATE_ANSWERS = 16
OOS_REFUSED_FLOOR = 0.87  # 8 of 8 measured: 7 of 8 passes
ANSWERABLE_REFUSED_CEILING = 0.13  # 1 of 8 measured (3M's capex: the model says none): 1 of 8 passes
UNTRACED_CEILING = 0.05  # 0 of 44 answer figures measured: about 2 pass
FIGURE_CORRECT_FLOOR = 0.6  # 4 of 5 measured: 3 of 5 passes


@pytest.mark.skipif(not (FINANCEBENCH / "questions.jsonl").is_file(), reason="needs ../shared/eval/financebench")
def test_answers_of_the_out_of_scope_mix_hold_their_floors(tmp_path: Path) -> None:
    import json

    from evals import answers
    tables_read()
    assert answers.main(["--set", "oos", "--limit", str(GATE_ANSWERS), "--home", str(GATE_HOME), "--judge", "none",
                         "--rows", str(tmp_path / "rows.jsonl"), "--name", "gate_answers",
                         "--results-dir", str(tmp_path)]) == 0
    out = json.loads((tmp_path / "gate_answers.json").read_text())["folds"]["all"]
    assert out["oos_refused_no_citation"]["value"] >= OOS_REFUSED_FLOOR, out["oos_refused_no_citation"]
    assert out["answerable_refused"]["value"] <= ANSWERABLE_REFUSED_CEILING, out["answerable_refused"]
    assert out["untraced_figures"]["value"] <= UNTRACED_CEILING, out["untraced_figures"]
    assert out["figure_correct"]["value"] >= FIGURE_CORRECT_FLOOR, out["figure_correct"]


# The two held-back out-of-scope batches alone (evals/data/out_of_scope_holdout*.jsonl, 80 questions), under
# what they gave in evals/results/answers_oos_holdout.md and answers_oos_holdout_2.md by about two questions.
HOLDOUT_REFUSED_FLOOR = 0.85  # 70 of 80 measured (1e1c376): 68 of 80 passes


@pytest.mark.skipif(not (FINANCEBENCH / "questions.jsonl").is_file(), reason="needs ../shared/eval/financebench")
def test_the_held_back_out_of_scope_batches_are_refused(tmp_path: Path) -> None:
    import json

    from evals import answers
    tables_read()
    refused = asked = 0
    for batch in ("out_of_scope_holdout.jsonl", "out_of_scope_holdout_2.jsonl"):
        name = batch.removesuffix(".jsonl")
        assert answers.main(["--set", "oos", "--without-answerable", "--out-of-scope", str(answers.DATA / batch),
                             "--home", str(GATE_HOME), "--judge", "none", "--rows", str(tmp_path / f"{name}.jsonl"),
                             "--name", name, "--results-dir", str(tmp_path)]) == 0
        share = json.loads((tmp_path / f"{name}.json").read_text())["folds"]["all"]["oos_refused_no_citation"]
        refused, asked = refused + share["k"], asked + share["n"]
    assert refused / asked >= HOLDOUT_REFUSED_FLOOR, (refused, asked)


# The second genre (evals/data/genre_*.jsonl: eight documents that are not filings, questions written before
# any product run), under what evals/results/genre_after.md gave by about three questions each.
GENRE_HOME = Path(os.environ.get("GENRE_HOME", "/tmp/thotqen-genre"))
GENRE_RIGHT_FLOOR = 0.30  # 20 of 56 measured (0.357): 17 of 56 passes; the code before issue 39 gave 17
GENRE_REFUSED_OOS_FLOOR = 0.66  # 10 of 12 measured: 8 of 12 passes


def test_the_second_genre_holds_its_floors(tmp_path: Path) -> None:
    import json

    from evals import genre, genre_docs

    os.environ["THOTQEN_HOME"] = str(GENRE_HOME)
    if not (GENRE_HOME / "genre-ingested").exists():
        assert genre_docs.main(["--dir", str(tmp_path / "docs")]) == 0
        (GENRE_HOME / "genre-ingested").touch()
    assert genre.main(["--name", "gate", "--rows", str(tmp_path / "rows.jsonl"), "--results-dir", str(tmp_path)]) == 0
    figures = json.loads((tmp_path / "genre_gate.json").read_text())["figures"]
    assert figures["answerable_right"]["value"] >= GENRE_RIGHT_FLOOR, figures["answerable_right"]
    assert figures["oos_refused_no_citation"]["value"] >= GENRE_REFUSED_OOS_FLOOR, figures["oos_refused_no_citation"]

"""Company-grouped cross-validation of the retrieval choices: tuned-on and held-back side by side.

    python evals/cv.py --home DIR [--set financebench|synthetic|both] [--name cv]

Every tuned choice of retrieval (fusion weights, the statement-heading leg, the query glossary,
RRF k, candidates per side) is a point of GRID. Each question is searched once per point (query
vectors computed once), within its own filing and across all filings. Then, leaving one company
out at a time, the point with the best score on the other companies' questions is chosen and its
ranks on the left-out company's questions are kept: pooled over all companies, these are the
held-back figures, what a user with filings nobody read should expect. The tuned-on figures are
the same chosen points scored on the questions they were chosen on. A change to retrieval is kept
only when its held-back figures improve (evals/results/cv.md). The dense leg's own RRF constant
stays at its shipped value here: evals/fusion_cv.py chooses the fusion (evals/results/fusion_cv.md).

Needs the development filings ingested under --home for --user (evals/bench_ingest.py or
evals/retrieval.py); questions on filings not ingested there are left out.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.common import FINANCEBENCH, load_jsonl, open_bench, write_result
from evals.retrieval import evidence_pages
from evals.scoring import filing_rank, first_hit_rank, rank_scores

DATA = Path(__file__).parent / "data"
SYNTHETIC = DATA / "synthetic_questions.jsonl"
SEARCHED = ("within_document", "all_filings")
# "filing": across all filings, the rank of the first hit from the question's own filing (any page):
# its hit@1 is "the named filing first"
SCOPES = (*SEARCHED, "filing")
CUTS = (1, 3, 5)


@dataclass(frozen=True)
class Question:
    id: str
    company: str
    doc_name: str  # the filing's file name without .pdf
    text: str
    pages: frozenset[int]  # 1-based evidence pages in doc_name


def financebench_questions() -> list[Question]:
    return [Question(q["financebench_id"], q["company"], q["doc_name"], q["question"], frozenset(evidence_pages(q)))
            for q in load_jsonl(FINANCEBENCH / "questions.jsonl")]


def synthetic_questions(path: Path = SYNTHETIC) -> list[Question]:
    return [Question(q["id"], q["company"], q["doc_name"], q["question"], frozenset(q["pages"]))
            for q in load_jsonl(path)]


@dataclass(frozen=True)
class Point:
    """One combination of the tuned choices."""

    dense_weight: float
    sparse_weight: float
    heading_weight: float
    rrf_k: int
    candidates: int
    glossary: str  # "shipped" (as migrated), "off", or an SQL file that rewrites query_glossary

    @property
    def label(self) -> str:
        return (f"dense {self.dense_weight} / sparse {self.sparse_weight} / heading {self.heading_weight}, "
                f"k={self.rrf_k}, {self.candidates} a side, glossary {Path(self.glossary).stem}")


def grid(default: Point, glossaries: Iterable[str] = ()) -> list[Point]:
    """Every combination of the weights, RRF k, candidates and the glossary on or off; another
    glossary (an SQL file) is tried at the shipped point only (a comparison, not a choice)."""
    # Only ratios between the weights matter to RRF: sparse stays 1.
    points = [Point(d, 1.0, h, k, c, g) for d, h, k, c, g in itertools.product(
        (0.5, 1.0, 2.0), (0.0, 0.5, 1.0), (20, 60), (50, 100), ("shipped", "off"))
        if not (h > 0 and g == "off")]  # the heading leg's phrases live in the glossary
    return points + [replace(default, glossary=g) for g in glossaries]


def shipped(settings) -> Point:
    return Point(settings.dense_weight, settings.sparse_weight, settings.heading_weight, settings.rrf_k,
                 settings.candidates, "shipped")


Ranks = dict[tuple[Point, str, str], int | None]  # (point, scope, question id) -> first evidence rank


def rank_all(db, embedder, owner: int, docs: dict, questions: list[Question], points: list[Point],
             progress: Callable[[str], None] = print) -> Ranks:
    """Searches every question at every point, in both scopes (k=10, one hit per parent)."""
    import psycopg

    from storage.search import SearchParams, search

    vectors = {q.id: embedder.embed_query(q.text) for q in questions}
    ranks: Ranks = {}
    for n, point in enumerate(points, 1):
        params = SearchParams(k=10, mode="hybrid", dense_weight=point.dense_weight,
                              sparse_weight=point.sparse_weight, heading_weight=point.heading_weight,
                              rrf_k=point.rrf_k, candidates=point.candidates)
        with db.connection() as conn, conn.transaction() as tx:
            # undone below: the glossary is data, read per search
            if point.glossary == "off":
                conn.execute("delete from query_glossary")
            elif point.glossary != "shipped":
                conn.execute(Path(point.glossary).read_text())
            for q in questions:
                for scope in SEARCHED:
                    ids = [docs[f"{q.doc_name}.pdf"]] if scope == "within_document" else None
                    hits = search(conn, owner_id=owner, query_text=q.text, query_embedding=vectors[q.id],
                                  params=params, document_ids=ids)
                    ranks[point, scope, q.id] = first_hit_rank(hits, q.doc_name, q.pages)
                    if scope == "all_filings":
                        ranks[point, "filing", q.id] = filing_rank(hits, q.doc_name)
            raise psycopg.Rollback(tx)
        progress(f"point {n}/{len(points)}: {point.label}")
    return ranks


def scores(ranks: Iterable[int | None]) -> dict[str, float]:
    return rank_scores(ranks, CUTS)


def objective(ranks: list[int | None]) -> tuple[float, float]:
    """What a choice is judged by: hit@3 and hit@5 within the filing (the graph shows three
    excerpts; the held-out contract is hit@5), MRR to break ties."""
    s = scores(ranks)
    return (s["hit@3"] + s["hit@5"], s["mrr"])


def choose(ranks: Ranks, points: list[Point], train: dict[str, list[Question]], prefer: Point) -> Point:
    """The best point on the training questions of every set (within their filing; each set counts
    alike, however many questions it has); `prefer` wins ties, then grid order."""
    ordered = [prefer, *[p for p in points if p != prefer]] if prefer in points else points

    def judged(p: Point) -> tuple[float, float]:
        parts = [objective([ranks[p, "within_document", q.id] for q in qs]) for qs in train.values() if qs]
        return (statistics.mean(a for a, _ in parts), statistics.mean(b for _, b in parts))

    return max(ordered, key=judged)


def cross_validate(ranks: Ranks, points: list[Point], sets: dict[str, list[Question]], prefer: Point) -> dict:
    """Leave one company out: choose on the other companies' questions of every set, keep the
    left-out company's ranks; per set, pooled over companies."""
    held = {n: {s: {} for s in SCOPES} for n in sets}
    tuned: dict[str, dict[str, list[dict[str, float]]]] = {n: {s: [] for s in SCOPES} for n in sets}
    folds = []
    for company in sorted({q.company for qs in sets.values() for q in qs}):
        train = {n: [q for q in qs if q.company != company] for n, qs in sets.items()}
        best = choose(ranks, points, train, prefer)
        for n, qs in sets.items():
            for scope in SCOPES:
                for q in qs:
                    if q.company == company:
                        held[n][scope][q.id] = ranks[best, scope, q.id]
                tuned[n][scope].append(scores(ranks[best, scope, q.id] for q in train[n]))
        folds.append({"held_back": company, "chosen": best.label})
    return {n: {"held_back": {s: scores(held[n][s].values()) for s in SCOPES},
                "tuned_on": {s: {m: statistics.mean(f[m] for f in tuned[n][s]) for m in tuned[n][s][0]}
                             for s in SCOPES}} for n in sets} | {"folds": folds}


def fixed(ranks: Ranks, point: Point, questions: list[Question]) -> dict:
    return {s: scores(ranks[point, s, q.id] for q in questions) for s in SCOPES}


COLUMNS = [("within_document", "hit@1"), ("within_document", "hit@3"), ("within_document", "hit@5"),
           ("within_document", "mrr"), ("all_filings", "hit@1"), ("all_filings", "hit@5"), ("filing", "hit@1")]
HEADS = ["within hit@1", "within hit@3", "within hit@5", "within MRR", "across hit@1", "across hit@5",
         "named filing first"]


def table(rows: list[tuple[str, dict]]) -> str:
    lines = [f"| figures | {' | '.join(HEADS)} |", "|---|" + "---|" * len(HEADS)]
    lines += [f"| {name} | {' | '.join(f'{by[s][m]:.3f}' for s, m in COLUMNS)} |" for name, by in rows]
    return "\n".join(lines)


def ablations(default: Point, points: list[Point]) -> list[tuple[str, Point]]:
    """The shipped point with one choice changed, for each change the grid holds."""
    out = []
    for p in points:
        changed = [f for f in ("dense_weight", "heading_weight", "rrf_k", "candidates", "glossary")
                   if getattr(p, f) != getattr(default, f)]
        if len(changed) == 1:
            value = getattr(p, changed[0])
            out.append((f"{changed[0]} {Path(value).stem if isinstance(value, str) else value}", p))
    return out


def load_cache(path: Path) -> Ranks:
    if not path.is_file():
        return {}
    return {(Point(**row["point"]), row["scope"], row["id"]): row["rank"] for row in json.loads(path.read_text())}


def save_cache(path: Path, ranks: Ranks) -> None:
    rows = [{"point": asdict(p), "scope": s, "id": i, "rank": r} for (p, s, i), r in ranks.items()]
    path.write_text(json.dumps(rows))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--user", default="bench")
    parser.add_argument("--set", choices=["financebench", "synthetic", "both"], default="both")
    parser.add_argument("--name", default="cv")
    parser.add_argument("--grid", choices=["full", "shipped"], default="full",
                        help="shipped: only the shipped point (comparing two ingestions, nothing tuned)")
    parser.add_argument("--glossaries", default="", help="SQL files rewriting query_glossary, compared as more points")
    args = parser.parse_args()
    settings, db, embedder, owner, docs = open_bench(args.home, args.user, create_user=False)
    loaders = {"financebench": financebench_questions, "synthetic": synthetic_questions}
    wanted = list(loaders) if args.set == "both" else [args.set]
    default = shipped(settings)
    extra = [g for g in args.glossaries.split(",") if g]
    points = grid(default, extra) if args.grid == "full" else [default]
    if default not in points:
        points.append(default)
    # ranks already computed on this home are reused (the home's filings decide them)
    cache = args.home / "cv_ranks.json"
    ranks = load_cache(cache)
    sets = {n: [q for q in loaders[n]() if f"{q.doc_name}.pdf" in docs] for n in wanted}
    for n, questions in sets.items():
        todo = [p for p in points if any((p, "filing", q.id) not in ranks for q in questions)]
        ranks |= rank_all(db, embedder, owner, docs, questions, todo,
                          progress=lambda line, s=n: print(f"{s}: {line}", file=sys.stderr))
        save_cache(cache, ranks)
    choices = [p for p in points if p.glossary in ("shipped", "off")]  # what the folds may choose
    cv = cross_validate(ranks, choices, sets, default)
    everything = choose(ranks, choices, sets, default)
    chosen = statistics.multimode(f["chosen"] for f in cv["folds"])
    payload: dict = {"embedding": embedder.identity, "filings": len(docs), "points": len(points),
                     "default": default.label, "best_on_all": everything.label, "folds": cv["folds"], "sets": {}}
    parts = []
    for n, questions in sets.items():
        rows = [("shipped defaults", fixed(ranks, default, questions)),
                ("best point on all questions (tuned-on)", fixed(ranks, everything, questions)),
                ("cross-validated: tuned-on folds", cv[n]["tuned_on"]),
                ("cross-validated: held-back folds", cv[n]["held_back"])]
        rows += [(f"shipped, but {label}", fixed(ranks, p, questions)) for label, p in ablations(default, points)]
        payload["sets"][n] = {"questions": len(questions), "rows": dict(rows)}
        parts.append(f"### {n}: {len(questions)} questions, {len({q.company for q in questions})} companies\n\n"
                     + table(rows) + "\n")
    md = ("Held-back: each company's questions scored with the point chosen on the other companies "
          "(leave one company out; one choice for both sets, each set counting alike), pooled. Tuned-on: the "
          f"chosen points on the questions they were chosen on. {len(choices)} points (evals/cv.py `grid`), chosen "
          "by within-filing hit@3 + hit@5, MRR on ties. Named filing first: across all filings, the top hit is "
          f"from the question's own filing. Embeddings {embedder.identity}, {len(docs)} filings.\n\n"
          f"Shipped: {default.label}. Best on all: {everything.label}. Chosen most often in the folds: "
          f"{'; '.join(chosen)}.\n\n" + "\n".join(parts))
    write_result(args.name, payload, md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())

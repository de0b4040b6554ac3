"""The fusion and the soft-scoping tier weights, chosen on company-grouped folds.

    python evals/fusion_cv.py --home DIR [--user bench] [--name fusion_cv]

Each question is searched once per scope with every leg's candidates kept (hybrid_search with
per_parent off, 100 candidates a side: each leg's rank of every candidate), within its own filing
and across all the user's filings as the shipped search does it (storage/search.py `_scoped`: the
question's first tier searched alone, its whole scope beside it). The fusion (weighted RRF: the
dense and heading legs' weights against the sparse leg's 1, k, candidates a side) and the tier
weights (storage/document_filter.py TIER_WEIGHTS) are then applied here, in Python, exactly as
the SQL and `_scoped` apply them, so a grid of points costs no searches.

Folds: leave one company out. On the other companies' questions, the fusion point with the best
within-filing hit@1 + hit@5 (MRR on ties) is chosen, then with it the tier weights with the best
across-filing hit@1 + hit@5 + named filing first; the left-out company's questions are scored with
both: pooled, the held-back figures. Tuned-on: the chosen points on the questions they were
chosen on. Choices are made on the FinanceBench and the synthetic sets (each set counting alike);
the rule-written kinds (evals/synthetic_kinds.py) are scored held-back only, kind by kind.
Only numeric parameters are chosen: nothing about a question's wording.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.common import load_jsonl, open_bench, write_result
from evals.cv import Question, financebench_questions, scores, synthetic_questions

KINDS = Path(__file__).parent / "data" / "synthetic_kinds.jsonl"
K = 10  # hits a search returns (the graph's retrieve_k)
MAX_CANDIDATES = 100
LEG_SQL = (
    "select child_id, parent_id, document_id::text, document_name, page, dense_rank, sparse_rank, heading_rank"
    " from hybrid_search(%(owner)s, %(embedding)s, %(text)s, 400, %(docs)s::uuid[], 'hybrid', 1.0, 1.0, 60,"
    f" {MAX_CANDIDATES}, false, %(max_df)s, 'rrf', 1.0)"
)


@dataclass(frozen=True)
class Fusion:
    dense_weight: float
    heading_weight: float
    rrf_k: int  # the sparse and heading legs' RRF constant
    dense_rrf_k: int  # the dense leg's
    candidates: int

    @property
    def label(self) -> str:
        return (f"dense {self.dense_weight} / sparse 1.0 / heading {self.heading_weight}, k={self.rrf_k}, "
                f"dense k={self.dense_rrf_k}, {self.candidates} a side")


# Weighted RRF with a constant per kind of leg: a small k keeps a lexical leg's first places on top,
# a larger dense k lets the dense leg order what the lexical legs leave close.
FUSIONS = [Fusion(d, h, k, dk, c) for d, h, k, dk, c in itertools.product(
    (0.25, 0.5, 0.75, 1.0, 1.5), (0.0, 0.25, 0.5, 1.0), (1, 5, 10, 20, 60), (20, 60, 100, 200), (50, 100))]
# The previous procedure (evals/cv.py `grid`, one k for every leg, chosen by hit@3 + hit@5): its
# held-back figures are what a change here must beat.
PREVIOUS = [Fusion(d, h, k, k, c) for d, h, k, c in itertools.product(
    (0.5, 1.0, 2.0), (0.0, 0.5, 1.0), (20, 60), (50, 100))]
# What main shipped before this choice (one k for every leg; the tiers set once, not searched).
BEFORE = Fusion(1.0, 1.0, 60, 60, 50)
BEFORE_TIERS = (1.0, 0.8, 0.65, 0.5, 0.35)
# Single legs: the sparse (BM25) leg alone, `--mode sparse` (BM25 and the heading leg), the dense leg alone.
SPARSE_ONLY = Fusion(0.0, 0.0, 60, 60, 50)
SPARSE_MODE = Fusion(0.0, 1.0, 60, 60, 50)
DENSE_ONLY = Fusion(1.0, 0.0, 60, 60, 50)  # with the sparse weight 0 (fuse)
TIER_VALUES = (0.95, 0.85, 0.75, 0.65, 0.5, 0.35, 0.2, 0.1)
TIERS = [(1.0, *w) for w in itertools.combinations(TIER_VALUES, 4)]  # decreasing, first tier 1.0

Row = tuple  # (child, parent, doc id, doc name, page, dense rank, sparse rank, heading rank)


def fuse(rows: list[Row], f: Fusion, k: int, sparse_weight: float = 1.0) -> list[tuple[float, Row]]:
    """hybrid_search's RRF on the collected ranks: each leg's top `candidates`, one child per parent,
    the best `k` (score, row), as the SQL orders them."""
    c = max(f.candidates, k)
    scored = []
    for row in rows:
        d, s, h = row[5], row[6], row[7]
        score = 0.0
        if d is not None and d <= c:
            score += f.dense_weight / (f.dense_rrf_k + d)
        if s is not None and s <= c:
            score += sparse_weight / (f.rrf_k + s)
        if h is not None and h <= c and f.heading_weight > 0:
            score += f.heading_weight / (f.rrf_k + h)
        if score > 0:
            scored.append((score, row))
    scored.sort(key=lambda x: (-x[0], x[1][0]))
    out, seen = [], set()
    for score, row in scored:
        if row[1] not in seen:
            seen.add(row[1])
            out.append((score, row))
            if len(out) == k:
                break
    return out


def scoped(fused: list[list[tuple[float, Row]]], tier_of: dict[str, int], weights: tuple[float, ...]) -> list[Row]:
    """storage/search.py `_scoped` on fused runs (the first tier's, k; the whole scope's, 2k): each
    hit's score times its filing's tier weight, best per child, one per parent, the best k."""
    best: dict[int, tuple[float, Row]] = {}
    for run in fused:
        for score, row in run:
            w = score * weights[min(tier_of[row[2]], len(weights) - 1)]
            if row[0] not in best or best[row[0]][0] < w:
                best[row[0]] = (w, row)
    ranked = sorted(best.values(), key=lambda x: (-x[0], x[1][0]))
    out, seen = [], set()
    for _w, row in ranked:
        if row[1] not in seen:
            seen.add(row[1])
            out.append(row)
    return out[:K]


def first_rank(rows: Iterable[Row], q: Question, any_page: bool = False) -> int | None:
    return next((r for r, row in enumerate(rows, 1)
                 if row[3] == f"{q.doc_name}.pdf" and (any_page or row[4] in q.pages)), None)


def collect(db, embedder, settings, owner: int, docs: dict, questions: list[Question], cache: dict) -> None:
    """Every leg's ranks per question: within its filing, and across the owner's filings in the
    shipped scoping's runs (with each filing's tier), into `cache` by question id."""
    from storage.document_filter import question_scope
    from storage.search import SEARCH_SETTINGS

    todo = [q for q in questions if cache.get(q.id, {}).get("text") != q.text]
    for n, q in enumerate(todo, 1):
        vector = embedder.embed_query(q.text)
        args = {"owner": owner, "embedding": vector, "text": q.text, "max_df": settings.max_df}
        with db.connection() as conn, conn.transaction():
            conn.execute(SEARCH_SETTINGS)

            def legs(ids: list | None) -> list[list]:
                return [list(r) for r in conn.execute(LEG_SQL, {**args, "docs": ids}).fetchall()]  # noqa: B023

            scope = question_scope(conn, owner_id=owner, question=q.text)
            if scope is None or not scope.tiers:
                runs, tier_of = ([legs(None)], {str(d): 0 for d in docs.values()}) if scope is None else ([], {})
            else:
                first = list(scope.tiers[0])
                runs = [legs(first)]
                if len(scope.documents()) > len(first):
                    runs.append(legs(scope.documents()))
                tier_of = {str(d): t for t, tier in enumerate(scope.tiers) for d in tier}
            cache[q.id] = {"text": q.text, "within": legs([docs[f"{q.doc_name}.pdf"]]), "runs": runs,
                           "tier_of": tier_of}
        if n % 50 == 0:
            print(f"collected {n}/{len(todo)}", file=sys.stderr, flush=True)


@dataclass
class Ranked:
    within: dict  # (fusion, question id) -> first evidence rank within the filing
    across: dict  # (fusion, weights, question id) -> (first evidence rank, rank of the own filing)


def within_ranks(cache: dict, questions: list[Question], fusions: list[Fusion], ranked: Ranked) -> None:
    for f in fusions:
        for q in questions:
            if (f, q.id) not in ranked.within:
                ranked.within[f, q.id] = first_rank((r for _s, r in fuse(cache[q.id]["within"], f, K)), q)


def across_ranks(cache: dict, questions: list[Question], f: Fusion, tiers: list[tuple[float, ...]],
                 ranked: Ranked) -> None:
    for q in questions:
        entry = cache[q.id]
        if not entry["runs"]:
            for w in tiers:
                ranked.across[f, w, q.id] = (None, None)
            continue
        fused = [fuse(rows, f, K if n == 0 else 2 * K) for n, rows in enumerate(entry["runs"])]
        for w in tiers:
            if (f, w, q.id) in ranked.across:
                continue
            out = scoped(fused, entry["tier_of"], w)
            ranked.across[f, w, q.id] = (first_rank(out, q), first_rank(out, q, any_page=True))


def within_objective(ranks: list[int | None], cuts: tuple[str, ...] = ("hit@1", "hit@5")) -> tuple[float, float]:
    s = scores(ranks)
    return (sum(s[c] for c in cuts), s["mrr"])


def across_objective(pairs: list[tuple[int | None, int | None]]) -> tuple[float, float]:
    s = scores(p[0] for p in pairs)
    named = scores(p[1] for p in pairs)["hit@1"]
    return (s["hit@1"] + s["hit@5"] + named, s["mrr"])


def _mean_over_sets(parts: list[tuple[float, float]]) -> tuple[float, float]:
    return (statistics.mean(a for a, _ in parts), statistics.mean(b for _, b in parts))


def choose_fusion(ranked: Ranked, train: dict[str, list[Question]], prefer: Fusion,
                  points: list[Fusion] = FUSIONS, cuts: tuple[str, ...] = ("hit@1", "hit@5")) -> Fusion:
    ordered = [prefer, *[f for f in points if f != prefer]]
    return max(ordered, key=lambda f: _mean_over_sets(
        [within_objective([ranked.within[f, q.id] for q in qs], cuts) for qs in train.values() if qs]))


def choose_tiers(ranked: Ranked, f: Fusion, train: dict[str, list[Question]],
                 prefer: tuple[float, ...]) -> tuple[float, ...]:
    ordered = [prefer, *[w for w in TIERS if w != prefer]]
    return max(ordered, key=lambda w: _mean_over_sets(
        [across_objective([ranked.across[f, w, q.id] for q in qs]) for qs in train.values() if qs]))


def figures(within: list[int | None], across: list[tuple[int | None, int | None]]) -> dict[str, float]:
    w, a = scores(within), scores(p[0] for p in across)
    return {"within hit@1": w["hit@1"], "within hit@3": w["hit@3"], "within hit@5": w["hit@5"],
            "within MRR": w["mrr"], "across hit@1": a["hit@1"], "across hit@5": a["hit@5"],
            "named filing first": scores(p[1] for p in across)["hit@1"]}


HEADS = ["within hit@1", "within hit@3", "within hit@5", "within MRR", "across hit@1", "across hit@5",
         "named filing first"]


def table(rows: list[tuple[str, int, dict[str, float]]]) -> str:
    lines = [f"| figures | n | {' | '.join(HEADS)} |", "|---|---|" + "---|" * len(HEADS)]
    lines += [f"| {name} | {n} | {' | '.join(f'{by[h]:.3f}' for h in HEADS)} |" for name, n, by in rows]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--user", default="bench")
    parser.add_argument("--name", default="fusion_cv")
    args = parser.parse_args()
    from storage.document_filter import TIER_WEIGHTS

    settings, db, embedder, owner, docs = open_bench(args.home, args.user, create_user=False)
    kinds = [Question(q["id"], q["company"], q["doc_name"], q["question"], frozenset(q["pages"]))
             for q in load_jsonl(KINDS)] if KINDS.is_file() else []
    kind_of = {q["id"]: q["kind"] for q in load_jsonl(KINDS)} if KINDS.is_file() else {}
    present = lambda qs: [q for q in qs if f"{q.doc_name}.pdf" in docs]  # noqa: E731
    tuned_sets = {"financebench": present(financebench_questions()), "synthetic": present(synthetic_questions())}
    kinds = present(kinds)
    everyone = [q for qs in tuned_sets.values() for q in qs] + kinds
    cache_path = args.home / "fusion_cv_legs.json"
    cache = json.loads(cache_path.read_text()) if cache_path.is_file() else {}
    collect(db, embedder, settings, owner, docs, everyone, cache)
    cache_path.write_text(json.dumps(cache))

    shipped = Fusion(settings.dense_weight, settings.heading_weight, settings.rrf_k,
                     getattr(settings, "dense_rrf_k", None) or settings.rrf_k, settings.candidates)
    shipped_tiers = tuple(TIER_WEIGHTS)
    fusions = list(dict.fromkeys([*FUSIONS, *PREVIOUS, shipped, BEFORE]))
    ranked = Ranked({}, {})
    within_ranks(cache, everyone, fusions, ranked)
    for single in (SPARSE_ONLY, SPARSE_MODE):
        within_ranks(cache, everyone, [single], ranked)
    dense_alone = {q.id: first_rank((r for _s, r in fuse(cache[q.id]["within"], DENSE_ONLY, K, 0.0)), q)
                   for q in everyone}
    across_ranks(cache, everyone, shipped, [shipped_tiers, BEFORE_TIERS, *TIERS], ranked)

    # folds
    held: dict[str, dict] = {}
    tuned: dict[str, list[dict]] = defaultdict(list)
    folds = []
    previous: dict[str, int | None] = {}  # held-back within ranks of the previous procedure
    tiers_before: dict[str, tuple] = {}  # held-back across ranks: the fold's fusion, the tiers as before
    for company in sorted({q.company for q in everyone}):
        train = {n: [q for q in qs if q.company != company] for n, qs in tuned_sets.items()}
        before = choose_fusion(ranked, train, shipped, PREVIOUS, ("hit@3", "hit@5"))
        previous |= {q.id: ranked.within[before, q.id] for q in everyone if q.company == company}
        f = choose_fusion(ranked, train, shipped)
        across_ranks(cache, everyone, f, [shipped_tiers, BEFORE_TIERS, *TIERS], ranked)
        w = choose_tiers(ranked, f, train, shipped_tiers)
        tiers_before |= {q.id: ranked.across[f, BEFORE_TIERS, q.id] for q in everyone if q.company == company}
        for q in everyone:
            if q.company == company:
                held[q.id] = (ranked.within[f, q.id], ranked.across[f, w, q.id])
        for n, qs in train.items():
            tuned[n].append(figures([ranked.within[f, q.id] for q in qs], [ranked.across[f, w, q.id] for q in qs]))
        folds.append({"held_back": company, "fusion": f.label, "tiers": w})
    train_all = tuned_sets
    f_all = choose_fusion(ranked, train_all, shipped)
    across_ranks(cache, everyone, f_all, [shipped_tiers, *TIERS], ranked)
    w_all = choose_tiers(ranked, f_all, train_all, shipped_tiers)
    across_ranks(cache, everyone, f_all, [shipped_tiers], ranked)
    across_ranks(cache, everyone, SPARSE_MODE, [shipped_tiers], ranked)

    def fixed(qs: list[Question], f: Fusion, w: tuple[float, ...]) -> dict[str, float]:
        across_ranks(cache, qs, f, [w], ranked)
        return figures([ranked.within[f, q.id] for q in qs], [ranked.across[f, w, q.id] for q in qs])

    groups = {**tuned_sets}
    for q in kinds:
        groups.setdefault(f"kind: {kind_of[q.id]}", []).append(q)
    payload: dict = {"embedding": embedder.identity, "filings": len(docs), "fusion_points": len(FUSIONS),
                     "tier_points": len(TIERS), "shipped": {"fusion": asdict(shipped), "tiers": shipped_tiers},
                     "chosen_on_all": {"fusion": asdict(f_all), "tiers": w_all}, "folds": folds, "sets": {}}
    parts = []
    for name, qs in groups.items():
        rows = [("before: " + BEFORE.label + ", tiers " + ", ".join(map(str, BEFORE_TIERS)), len(qs),
                 fixed(qs, BEFORE, BEFORE_TIERS)),
                ("shipped fusion and tier weights", len(qs), fixed(qs, shipped, shipped_tiers)),
                ("sparse leg alone (within only)", len(qs),
                 figures([ranked.within[SPARSE_ONLY, q.id] for q in qs], [(None, None)] * len(qs))),
                ("`--mode sparse` (BM25 + heading leg)", len(qs), fixed(qs, SPARSE_MODE, shipped_tiers)),
                ("dense leg alone (within only)", len(qs),
                 figures([dense_alone[q.id] for q in qs], [(None, None)] * len(qs))),
                ("previous procedure (evals/cv.py grid): held-back, within only", len(qs),
                 figures([previous[q.id] for q in qs], [(None, None)] * len(qs)))]
        if name in tuned:
            rows.append(("chosen on all questions (tuned-on)", len(qs), fixed(qs, f_all, w_all)))
            rows.append(("folds: tuned-on", len(qs), {h: statistics.mean(t[h] for t in tuned[name]) for h in HEADS}))
        else:
            rows.append(("chosen on all questions (never tuned on this set)", len(qs), fixed(qs, f_all, w_all)))
        rows.append(("folds: held-back", len(qs), figures([held[q.id][0] for q in qs], [held[q.id][1] for q in qs])))
        rows.append(("folds: held-back, tier weights as before", len(qs),
                     figures([held[q.id][0] for q in qs], [tiers_before[q.id] for q in qs])))
        payload["sets"][name] = {r[0]: r[2] for r in rows} | {"questions": len(qs)}
        parts.append(f"### {name}: {len(qs)} questions, {len({q.company for q in qs})} companies\n\n"
                     + table(rows) + "\n")
    fold_lines = ["| held back | fusion chosen | tier weights chosen |", "|---|---|---|"]
    fold_lines += [f"| {f['held_back']} | {f['fusion']} | {', '.join(map(str, f['tiers']))} |" for f in folds]
    md = (f"Within: the question's own filing. Across: all {len(docs)} filings of the user, searched as shipped "
          "(scoping from the question, storage/search.py `_scoped`). Folds leave one company out: fusion chosen "
          f"among {len(FUSIONS)} points by within-filing hit@1 + hit@5, then tier weights among {len(TIERS)} by "
          "across hit@1 + hit@5 + named filing first, on the FinanceBench and synthetic sets (each counting "
          "alike); kinds are never tuned on. Embeddings "
          f"{embedder.identity}, k={K}.\n\nShipped: {shipped.label}; tiers {', '.join(map(str, shipped_tiers))}. "
          f"Chosen on all: {f_all.label}; tiers {', '.join(map(str, w_all))}.\n\n" + "\n".join(parts)
          + "\n### Folds\n\n" + "\n".join(fold_lines) + "\n")
    write_result(args.name, payload, md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())

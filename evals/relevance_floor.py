"""The relevance floor (graph/nodes/grade.py): the cosine similarity below which an excerpt does not
bear on the question, chosen on company-grouped folds.

    THOTQEN_HOME=DIR python evals/relevance_floor.py [--user bench] [--name relevance_floor]
    THOTQEN_HOME=DIR python evals/relevance_floor.py --genre [--through N] --user genre --name relevance_floor_genre

No language model runs. Each question is searched as the graph searches it (the shipped retrieval
tunables; development and synthetic questions within their filing and across all filings, the
out-of-scope ones across all), and the question's similarity to each of the first `top_k` excerpts
is read (storage/search.py `similarities`). At a floor, a question keeps nothing to answer from
when every one of those excerpts is below it: that is a refusal of an out-of-scope question (good)
or of an answerable one (bad). A round with fewer than half its excerpts above the floor asks for
a rewrite (graph/nodes/route.py): reported too, since each costs a model call.

--genre asks the second genre's questions instead (evals/data/genre_questions.jsonl, genre_out_of_scope.jsonl
and every held-back batch, genre_holdout_*.jsonl), each answerable one's document standing for its company.

Folds: the answerable questions' companies in five groups, the out-of-scope questions dealt into
five groups beside them. For each fold the floor is chosen on the other four (the highest that
refuses none of their answerable questions) and scored on it; the table reports the
held-back folds pooled; the shipped floor is the lower of the two scopes' floors chosen on all.
Writes evals/results/<name>.{json,md}.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.answers import OUT_OF_SCOPE, SYNTHETIC
from evals.common import FINANCEBENCH, eval_runtime, load_jsonl, write_result
from evals.scoring import share

GENRE_DATA = Path(__file__).resolve().parent / "data"
FOLDS = 5
GRID = [round(-0.2 + 0.01 * i, 2) for i in range(101)]  # -0.2 .. 0.8
SHOWN_FLOORS = (0.22, 0.26, 0.30, 0.33, 0.36, 0.40)
BUDGET = 0.0  # the share of the training folds' answerable questions the floor may refuse


@dataclass(frozen=True)
class Asked:
    set: str  # dev | synthetic | oos
    kind: str  # the out-of-scope kind, or "answerable"
    company: str | None
    question: str
    doc_name: str | None

    @property
    def answerable(self) -> bool:
        return self.set != "oos"


def questions() -> list[Asked]:
    out = [Asked("dev", "answerable", q["company"], q["question"], q["doc_name"])
           for q in load_jsonl(FINANCEBENCH / "questions.jsonl")]
    out += [Asked("synthetic", "answerable", q.get("company"), q["question"], q.get("doc_name"))
            for q in load_jsonl(SYNTHETIC)]
    out += [Asked("oos", q["kind"], None, q["question"], None) for q in load_jsonl(OUT_OF_SCOPE)]
    return out


def genre_questions(through: int | None = None) -> list[Asked]:
    """The second genre's questions, development set and held-back batches (those up to `through`, or all); a
    document stands for a company."""
    out: list[Asked] = []
    sets = [GENRE_DATA / "genre_questions.jsonl", GENRE_DATA / "genre_out_of_scope.jsonl",
            *GENRE_DATA.glob("genre_holdout_*.jsonl")]
    for path in sorted(sets):
        batch = path.stem.removeprefix("genre_holdout_").removesuffix("_oos")
        if through is not None and batch.isdigit() and int(batch) > through:
            continue  # a batch not yet measured: choosing on it would tune on what it holds back
        for q in load_jsonl(path):
            if q.get("answer") is None:
                out.append(Asked("oos", q["kind"], None, q["question"], None))
            else:
                out.append(Asked("genre", "answerable", q["document"], q["question"], q["document"]))
    return out


def measure(home: Path | None, user: str, asked_all: list[Asked]) -> list[dict[str, Any]]:
    from graph.grading import holds_the_question
    from storage.documents import ready_documents
    from storage.search import SearchParams, search, similarities
    from storage.users import find_user
    from tunables import Tunables

    runtime = eval_runtime(home)
    shipped = Tunables()
    params = SearchParams.from_tunables(shipped, k=shipped.top_k)
    rows = []
    with runtime.database.connection() as conn:
        owner = find_user(conn, user)
        if owner is None:
            raise SystemExit(f"no user {user!r} under THOTQEN_HOME; ingest the development filings first")
        docs = ready_documents(conn, owner_id=owner)
        for asked in asked_all:
            embedding = runtime.embedder.embed_query(asked.question)
            scopes: list[tuple[str, list[Any] | None]] = [("all", None)]
            # a filing is named without its ".pdf", a genre document by its file name
            if asked.doc_name and (name := next((n for n in (asked.doc_name, f"{asked.doc_name}.pdf") if n in docs),
                                                None)):
                scopes.append(("document", [docs[name]]))
            for scope, ids in scopes:
                hits = search(conn, owner_id=owner, query_text=asked.question, query_embedding=embedding,
                              params=params, document_ids=ids)
                sims = similarities(conn, owner_id=owner, query_embedding=embedding,
                                    child_ids=[h.child_id for h in hits])
                # graph/nodes/grade.py keeps an excerpt below the floor whose statement holds the question
                held = any(holds_the_question(h.parent_text, asked.question) for h in hits)
                rows.append({"set": asked.set, "kind": asked.kind, "company": asked.company, "scope": scope,
                             "held": held,
                             "question": asked.question, "similarities": [round(sims.get(h.child_id, -1.0), 4)
                                                                          for h in hits]})
    return rows


def keeps(row: dict[str, Any], floor: float) -> bool:
    return bool(row.get("held")) or any(s >= floor for s in row["similarities"])


def rewrites(row: dict[str, Any], floor: float) -> bool:
    sims = row["similarities"]
    return bool(sims) and 2 * sum(1 for s in sims if s >= floor) < len(sims)


def choose(rows: list[dict[str, Any]]) -> float:
    """The highest floor that refuses none of the answerable questions (BUDGET): the floor is for
    questions off the documents' subject; one about a year or a line item the filings do not give
    is as near them as an answerable one, and is left to the answerable, choose and verify nodes."""
    answerable = [r for r in rows if r["set"] != "oos"]
    allowed = [f for f in GRID if sum(not keeps(r, f) for r in answerable) <= BUDGET * len(answerable)]
    return max(allowed, default=GRID[0])


def fold_of(rows: list[dict[str, Any]]) -> list[int]:
    companies = sorted({r["company"] or "?" for r in rows if r["set"] != "oos"})
    group = {c: i % FOLDS for i, c in enumerate(companies)}
    oos_questions = sorted({r["question"] for r in rows if r["set"] == "oos"})
    dealt = {q: i % FOLDS for i, q in enumerate(oos_questions)}
    return [dealt[r["question"]] if r["set"] == "oos" else group[r["company"] or "?"] for r in rows]


def scored(rows: list[dict[str, Any]], floors: list[float]) -> dict[str, Any]:
    """Refusals and rewrites of `rows`, each at its own floor (a held-back fold's, or the shipped one)."""
    out: dict[str, Any] = {}
    for label, pick in [("out_of_scope_refused", lambda r: r["set"] == "oos"),
                        ("answerable_refused", lambda r: r["set"] != "oos")]:
        chosen = [(r, f) for r, f in zip(rows, floors, strict=True) if pick(r)]
        out[label] = share(sum(not keeps(r, f) for r, f in chosen), len(chosen))
    by_kind: dict[str, list[tuple[dict[str, Any], float]]] = defaultdict(list)
    for r, f in zip(rows, floors, strict=True):
        by_kind[f"{r['set']} {r['kind']}" if r["set"] == "oos" else r["set"]].append((r, f))
    out["refused_by_kind"] = {k: share(sum(not keeps(r, f) for r, f in v), len(v)) for k, v in sorted(by_kind.items())}
    answerable = [(r, f) for r, f in zip(rows, floors, strict=True) if r["set"] != "oos"]
    out["answerable_rewrite"] = share(sum(rewrites(r, f) for r, f in answerable), len(answerable))
    return out


def folds(rows: list[dict[str, Any]]) -> dict[str, Any]:
    fold = fold_of(rows)
    chosen = [choose([r for r, g in zip(rows, fold, strict=True) if g != k]) for k in range(FOLDS)]
    return {"floors": chosen, "held_back": scored(rows, [chosen[g] for g in fold])}


def report(view: dict[str, Any], note: str) -> str:
    def fmt(s: dict[str, Any]) -> str:
        return f"{s['share']} ({s['k']} of {s['n']})"

    lines = ["# The relevance floor on company-grouped folds", "", note, "",
             "| scope | floor | out-of-scope refused | answerable refused | answerable rounds asking a rewrite |",
             "|---|---|---|---|---|"]
    for scope, v in view["scopes"].items():
        for label, s in [(f"held back (floors {', '.join(map(str, v['folds']['floors']))})", v["folds"]["held_back"]),
                         (f"chosen on all: {v['shipped_floor']}", v["shipped"])]:
            lines.append(f"| {scope} | {label} | {fmt(s['out_of_scope_refused'])} | {fmt(s['answerable_refused'])} | "
                         f"{fmt(s['answerable_rewrite'])} |")
    lines += ["", "Refused by kind (held back, answerable questions across all documents):", "",
              "| kind | refused |", "|---|---|"]
    for kind, s in view["scopes"]["all"]["folds"]["held_back"]["refused_by_kind"].items():
        lines.append(f"| {kind} | {fmt(s)} |")
    lines += ["", "Best excerpt's similarity (median, minimum, maximum) by kind:", "", "| kind | median | min | max |",
              "|---|---|---|---|"]
    for kind, (med, lo, hi) in view["best_similarity"].items():
        lines.append(f"| {kind} | {med} | {lo} | {hi} |")
    lines += ["", "Refused at each floor (across all documents, the shipped floor's neighbours):", "",
              "| floor | answerable refused | out-of-scope refused |", "|---|---|---|"]
    for floor, s in view["by_floor"].items():
        lines.append(f"| {floor} | {fmt(s['answerable_refused'])} | {fmt(s['out_of_scope_refused'])} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--home", type=Path, default=None)
    p.add_argument("--user", default="bench")
    p.add_argument("--name", default="relevance_floor")
    p.add_argument("--results-dir", type=Path, default=None, help=argparse.SUPPRESS)
    p.add_argument("--note", default="")
    p.add_argument("--genre", action="store_true", help="the second genre's questions instead of the filings'")
    p.add_argument("--through", type=int, help="with --genre: the held-back batches up to this one only")
    args = p.parse_args(argv)
    rows = measure(args.home, args.user, genre_questions(args.through) if args.genre else questions())
    scopes: dict[str, Any] = {}
    # out-of-scope questions are asked across all filings in both views; answerable ones within theirs or across all
    for scope in ("document", "all"):
        chosen = [r for r in rows if r["scope"] == scope or (r["set"] == "oos" and r["scope"] == "all")]
        floor = choose(chosen)
        scopes[scope] = {"folds": folds(chosen), "shipped_floor": floor,
                         "shipped": scored(chosen, [floor] * len(chosen))}
    best: dict[str, tuple[float, float, float]] = {}
    groups: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        if r["scope"] == "all" and r["similarities"]:
            groups[f"{r['set']} {r['kind']}" if r["set"] == "oos" else r["set"]].append(max(r["similarities"]))
    for kind, values in sorted(groups.items()):
        best[kind] = (round(statistics.median(values), 3), round(min(values), 3), round(max(values), 3))
    note = (f"{len({r['question'] for r in rows})} questions; the first top_k excerpts of the shipped search; "
            f"{FOLDS} folds. {args.note}").strip()
    across = [r for r in rows if r["scope"] == "all"]
    by_floor = {f: scored(across, [f] * len(across)) for f in SHOWN_FLOORS}
    view = {"scopes": scopes, "best_similarity": best, "by_floor": by_floor,
            "shipped_floor": min(v["shipped_floor"] for v in scopes.values())}
    note += f" Shipped floor (the lower of the scopes'): {view['shipped_floor']}."
    write_result(args.name, {**view, "rows": rows}, report(view, note), directory=args.results_dir)
    print(report(view, note))
    return 0


if __name__ == "__main__":
    sys.exit(main())

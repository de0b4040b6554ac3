"""Answers on documents that are not filings (the second genre set), through the CLI contract.

    THOTQEN_HOME=DIR python evals/genre.py [--name base] [--user genre] [--limit N] [--resume]
        [--questions FILE --out-of-scope FILE]

Documents: evals/genre_docs.py (the documents from Debian packages it lists, ingested for --user). Questions:
evals/data/genre_questions.jsonl (answerable, five kinds) and genre_out_of_scope.jsonl, written
before any product run (held-back batches beside them, each written before the changes it
measures: genre_holdout_1.jsonl with genre_holdout_1_oos.jsonl). Each question goes through
`thotqen ask QUESTION --json --user U`, across all the user's documents (no --document), as the
held-out measurement does; out-of-scope questions are interleaved so a partial run has both. Rows
are appended to --rows as they finish (--resume skips ids already there);
evals/results/genre_<name>.{md,json} hold the figures, overall and per kind:

  answerable right      not refused, and by kind (answer and accept normalised: lower case, a
                        thousands separator or hyphen dropped, spaces collapsed):
                          figure       an `accept` string (the number with its unit) in the answer
                          date         a date of the answer in any common form equals an accept (ISO: a day,
                                       or "YYYY-MM" or "YYYY" for a question asking a month or a year)
                          name         an accept string in the answer (case-insensitive)
                          yesno        the answer starts with the gold yes/no, or (starting with
                                       neither) its first sentence negates for "no" and does not for "yes"
                          explanation  every accept key phrase in the answer (a phrase may be a stem)
  answerable refused    blocked, or the refusal text / a first sentence saying the documents do not
                        answer (scoring.is_refusal_text)
  out-of-scope refused  refused and citing nothing
  right document        the first citation the answer uses is the question's document
  right page            a citation the answer uses is the question's document at its page
  untraced figures      numbers and dates of the answer found in no cited excerpt (its `text` and
                        `evidence`) nor in the question (answers.traced_figures), as answers with one
  latency               p50 / p90 of the whole `thotqen ask` process, seconds
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals import scoring
from evals.answers import traced_figures
from evals.common import RESULTS, append_row, load_jsonl, resumable_rows, write_result
from evals.scoring import is_refusal_text, percentile, share_value

DATA = Path(__file__).parent / "data"
KINDS = ("figure", "date", "name", "yesno", "explanation")
MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                                      "dec"), 1)}
_MONTH = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_DATES = (  # (pattern, group order) -> year, month, day
    (re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+(\d{{4}})\b", re.I), (3, 1, 2)),
    (re.compile(rf"\b{_DAY}(?:\s+of)?\s+{_MONTH},?\s+(\d{{4}})\b", re.I), (3, 2, 1)),
    (re.compile(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b"), (1, 2, 3)),
    (re.compile(rf"\b(\d{{4}})\s+{_MONTH}\s+{_DAY}\b", re.I), (1, 2, 3)),  # "2022 Apr 03", as Vim's help writes
    (re.compile(r"(?<![\d.])(\d{1,2})\.(\d{1,2})\.(\d{4})\b"), (3, 2, 1)),  # "15.02.2015": points, day first
)
_NEGATION = re.compile(r"\b(no|not|never|cannot|none|neither|nor)\b|n't\b", re.I)


def normalise(text: str) -> str:
    text = re.sub(r"(?<=\d)[,\u202f\u00a0'](?=\d{3}\b)", "", text or "")  # 55,000,000 -> 55000000
    text = re.sub(r"(?<=\w)[-\u2010\u2011](?=\w)", " ", text.lower())  # ten-byte -> ten byte
    text = re.sub(r"(?<=\d)(?=[a-z])", " ", text)  # 346mm -> 346 mm
    return re.sub(r"\s+", " ", text.replace("\u2019", "'")).strip()


def contains(answer: str, phrase: str, *, stem: bool = False) -> bool:
    """`phrase` in `answer`, both normalised, not inside a longer word or number (a stem may run on)."""
    p = re.escape(normalise(phrase))
    end = "" if stem else r"(?![\w])"
    # a number is not the tail of another ("91.59" in "291.59"); a name may be qualified ("time.CLOCK_BOOTTIME")
    before = r"(?<![\w.])" if phrase[:1].isdigit() else r"(?<![\w])"
    return re.search(rf"{before}{p}{end}", normalise(answer)) is not None


_MONTH_YEAR = re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?(\d{{4}})\b", re.I)  # "May 2015", "May of 2015"
_YEAR = re.compile(r"(?<![\d.-])(1\d\d\d|20\d\d)(?![\d.-])")  # 1000 to 2099: a calendar's history too


def dates(text: str) -> set[str]:
    """The answer's dates as ISO strings: whole dates, and as precise as a question asking for a month or a
    year needs ("1991-09" for "September 1991", "2012"); an accept says which precision it asks."""
    out = {f"{g.group(2)}-{MONTHS[g.group(1)[:3].lower()]:02d}" for g in _MONTH_YEAR.finditer(text or "")}
    out |= set(_YEAR.findall(text or ""))
    for pattern, (y, m, d) in _DATES:
        for g in pattern.finditer(text or ""):
            month = g.group(m)
            month = int(month) if month.isdigit() else MONTHS[month[:3].lower()]
            try:
                out.add(date(int(g.group(y)), month, int(g.group(d))).isoformat())
            except ValueError:
                continue
    return out


def polarity(answer: str) -> str:
    first = re.split(r"(?<=[.!?])\s|\n", answer.strip(), maxsplit=1)[0]
    start = re.match(r"\W*(yes|no)\b", first, re.I)
    if start:
        return start.group(1).lower()
    return "no" if _NEGATION.search(first) else "yes"


def right(q: dict, answer: str) -> bool:
    kind, accept = q["kind"], q["accept"]
    if kind == "date":
        return bool(dates(answer) & set(accept))
    if kind == "yesno":
        return polarity(answer) == accept[0].lower()
    if kind == "explanation":
        return all(contains(answer, a, stem=True) for a in accept)
    if kind == "figure" and any(rounds_to(answer, a) for a in accept):
        return True  # "291.5938" for an accept of "291.59": the figure, written more precisely
    return any(contains(answer, a) for a in accept)  # figure, name


_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])")


def rounds_to(answer: str, accept: str) -> bool:
    """Whether `answer` writes a number that, rounded to the decimals `accept` shows, is `accept` (a plain
    number with decimals: "291.59" accepts "291.5938", not "291.6" nor "1291.59")."""
    if not re.fullmatch(r"\d+\.\d+", accept):
        return False
    decimals = len(accept.partition(".")[2])
    return any(len(n.partition(".")[2]) > decimals and round(float(n), decimals) == float(accept)
               for n in _NUMBER.findall(normalise(answer)))


def answered_right(q: dict, row: dict) -> bool:
    """A row's answer right for its question: not refused, and right by the question's kind."""
    return not row["refused"] and right(q, row["answer"])


def ask(question: str, user: str, timeout: float) -> tuple[dict, float, str]:
    thotqen = shutil.which("thotqen") or str(Path(sys.executable).parent / "thotqen")
    start = time.perf_counter()
    proc = subprocess.run([thotqen, "ask", question, "--json", "--user", user], capture_output=True, text=True,
                          timeout=timeout, env=os.environ)
    seconds = time.perf_counter() - start
    try:
        out = json.loads(proc.stdout)
    except json.JSONDecodeError:
        out = {"answer": "", "error": f"exit {proc.returncode}: {proc.stderr[-500:]}"}
    return out, seconds, proc.stderr


def score(q: dict, out: dict, seconds: float, stderr: str, refusal_texts: Iterable[str]) -> dict:
    answer = out.get("answer") or ""
    used = scoring.cited_citations(out)
    refused = bool(out.get("blocked")) or is_refusal_text(answer, refusal_texts)
    figures, untraced, _ = traced_figures(out, q["question"])
    first = min(used, key=lambda c: c.get("n") or 0) if used else None
    row = {"id": q["id"], "kind": q["kind"], "document": q.get("document"), "question": q["question"],
           "gold": q.get("answer"), "answer": answer, "refused": refused, "cited": bool(used),
           "citations": [{"n": c.get("n"), "name": c.get("name"), "page": c.get("page"),
                          "page_label": c.get("page_label")} for c in used],
           "figures": figures, "untraced": untraced, "route": out.get("route"), "timings": out.get("timings"),
           "provider": out.get("provider"), "total_s": round(seconds, 2), "error": out.get("error"),
           "model_server": "kept alive by `thotqen model-server`" in stderr,
           # what the check did (graph/claims.py): the draft and the sentences each check removed
           "verification": {k: (out.get("verification") or {}).get(k) for k in ("original", "claims", "dropped")}}
    if q.get("document"):
        pages = {q["page"], *q.get("other_pages", [])}
        row["right"] = answered_right(q, row)
        row["right_document"] = first is not None and first.get("name") == q["document"]
        row["right_page"] = any(c.get("name") == q["document"] and c.get("page") in pages for c in used)
    return row


def _share(rows: list[dict], key: str) -> dict:
    return share_value(sum(1 for r in rows if r.get(key)), len(rows))


def measure(rows: list[dict]) -> dict:
    answerable = [r for r in rows if r.get("document")]
    oos = [r for r in rows if not r.get("document")]
    seconds = [r["total_s"] for r in rows]
    out = {"answerable_right": _share(answerable, "right"), "answerable_refused": _share(answerable, "refused"),
           "oos_refused_no_citation": _share([{"x": r["refused"] and not r["cited"]} for r in oos], "x"),
           "right_document": _share(answerable, "right_document"), "right_page": _share(answerable, "right_page"),
           "answers_with_untraced_figure": _share([{"x": r["untraced"] > 0} for r in rows if not r["refused"]], "x"),
           "untraced_figures": {"k": sum(r["untraced"] for r in rows), "n": sum(r["figures"] for r in rows)},
           "latency_s": {"p50": percentile(seconds, 50), "p90": percentile(seconds, 90)},
           "model_server_used": _share(rows, "model_server")}
    out["per_kind"] = {kind: {"right": _share(rs, "right"), "refused": _share(rs, "refused"),
                              "right_document": _share(rs, "right_document"), "right_page": _share(rs, "right_page")}
                       for kind in KINDS if (rs := [r for r in answerable if r["kind"] == kind])}
    return out


def _cell(s: dict) -> str:
    return f"{s['k']}/{s['n']}" + (f" ({s['value']:.0%})" if s.get("value") is not None else "")


def _where(c: dict) -> str:
    return f"{c['name']} {c['page_label'] or c['page']}"


def report(figs: dict, rows: list[dict], total: int, load: dict, sources: str) -> str:
    md = [f"Second-genre set ({sources}, documents from evals/genre_docs.py): {len(rows)} of "
          f"{total} questions run. Machine: `nproc` {os.cpu_count()}, load average {load['start']} at the start, "
          f"{load['end']} at the end (cores shared with other work).", "",
          "| figure | value |", "|---|---|"]
    for key in ("answerable_right", "answerable_refused", "oos_refused_no_citation", "right_document", "right_page",
                "answers_with_untraced_figure", "model_server_used"):
        md.append(f"| {key.replace('_', ' ')} | {_cell(figs[key])} |")
    md += [f"| untraced figures (of all answer figures) | {figs['untraced_figures']['k']}/"
           f"{figs['untraced_figures']['n']} |",
           f"| latency p50 / p90 s | {figs['latency_s']['p50']} / {figs['latency_s']['p90']} |", "",
           "| kind | right | refused | right document | right page |", "|---|---|---|---|---|"]
    for kind, f in figs["per_kind"].items():
        md.append(f"| {kind} | {_cell(f['right'])} | {_cell(f['refused'])} | {_cell(f['right_document'])} | "
                  f"{_cell(f['right_page'])} |")
    md += ["", "| id | right | refused | cited | s | answer |", "|---|---|---|---|---|---|"]
    for r in rows:
        text = re.sub(r"\s+", " ", r["answer"])[:140].replace("|", "\\|")
        md.append(f"| {r['id']} | {r.get('right', '–')} | {r['refused']} | "
                  f"{', '.join(_where(c) for c in r['citations'][:2])} | "
                  f"{r['total_s']} | {text} |")
    return "\n".join(md)


def items(questions: Path = DATA / "genre_questions.jsonl",
          out_of_scope: Path = DATA / "genre_out_of_scope.jsonl") -> list[dict]:
    """Kinds round-robin, an out-of-scope question after every few: a partial run is a fair sample."""
    by_kind = [[q for q in load_jsonl(questions) if q["kind"] == k] for k in KINDS]
    answerable = [q for i in range(max(map(len, by_kind))) for qs in by_kind if i < len(qs) for q in [qs[i]]]
    oos = load_jsonl(out_of_scope)
    every = max(1, len(answerable) // max(1, len(oos)))
    out: list[dict] = []
    for i, q in enumerate(answerable):
        out.append(q)
        if (i + 1) % every == 0 and oos:
            out.append(oos.pop(0))
    return out + oos


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--name", default="base")
    p.add_argument("--user", default="genre")
    p.add_argument("--limit", type=int)
    p.add_argument("--questions", type=Path, default=DATA / "genre_questions.jsonl",
                   help="answerable questions (e.g. a held-back batch, evals/data/genre_holdout_1.jsonl)")
    p.add_argument("--out-of-scope", type=Path, default=DATA / "genre_out_of_scope.jsonl")
    p.add_argument("--timeout", type=float, default=900, help="seconds one `thotqen ask` may take")
    p.add_argument("--rows", type=Path, help="default evals/results/genre_<name>.rows.jsonl")
    p.add_argument("--resume", action="store_true", help="keep --rows (scored again) and skip the questions it holds")
    p.add_argument("--results-dir", type=Path, default=None, help=argparse.SUPPRESS)  # the gate writes elsewhere
    args = p.parse_args(argv)
    from graph import prompts

    chosen = items(args.questions, args.out_of_scope)[: args.limit]
    rows_path = args.rows or RESULTS / f"genre_{args.name}.rows.jsonl"
    rows = resumable_rows(rows_path, args.resume)
    by_id = {q["id"]: q for q in chosen}
    for r in rows:  # kept rows are scored again by this scorer (a key or scorer corrected after the run)
        if r.get("document") and r["id"] in by_id:
            r["right"] = answered_right(by_id[r["id"]], r)
    if rows:
        rows_path.write_text("".join(json.dumps(r, default=str) + "\n" for r in rows))
    done = {r["id"] for r in rows}
    load = {"start": os.getloadavg()}
    for q in chosen:
        if q["id"] in done:
            continue
        out, seconds, stderr = ask(q["question"], args.user, args.timeout)
        row = score(q, out, seconds, stderr, (prompts.CANNOT_ANSWER, prompts.REFUSAL))
        rows.append(row)
        append_row(rows_path, row)
        print(f"{len(rows)}/{len(chosen)} {q['id']} right={row.get('right')} refused={row['refused']} "
              f"{row['total_s']}s", file=sys.stderr, flush=True)
    load["end"] = os.getloadavg()
    load = {k: " ".join(f"{x:.2f}" for x in v) for k, v in load.items()}
    if done >= {q["id"] for q in chosen}:  # nothing ran: the rows were only scored again
        load = {k: f"not measured (the rows of {rows_path.name} scored again)" for k in load}
    figs = measure(rows)
    write_result(f"genre_{args.name}", {"figures": figs, "load_average": load, "nproc": os.cpu_count(),
                                        "rows_file": str(rows_path), "questions": len(chosen), "rows": rows},
                 report(figs, rows, len(chosen), load, f"{args.questions.name} and {args.out_of_scope.name}"),
                 args.results_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())

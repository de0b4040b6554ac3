"""Every knob of retrieval and the graph, declared once: name, default, bounds, description, env var.

Derived from these classes, never re-declared:
- `settings.Settings` inherits them (a deployment sets them in the environment: the env var is
  the field's second alias, e.g. GRAPH_TOP_K for `top_k`);
- `graph.configuration.Configuration` inherits them (Studio's configuration form, a request's
  `configurable` overrides them per run);
- the `/rag` validation (`api/routes/rag.py`) accepts exactly `Tunables` (per-request, bounds checked);
- `storage.search.SearchParams` takes its defaults and fields from `Tunables`;
- `docs/configuration.md`'s table is `markdown_table()` (a test keeps them equal).
Why a default is what it is: see evals/results/ (linked from docs/configuration.md).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

Mode = Literal["hybrid", "dense", "sparse"]
Fusion = Literal["rrf", "score"]
RerankerName = Literal["auto", "bge", "dense", "llm", "none"]


def tunable(default: Any, description: str, env: str, **bounds: Any) -> Any:
    """A field whose value also comes from the environment variable `env` (case-insensitive)."""
    return Field(default, description=description, validation_alias=AliasChoices(_name_placeholder, env),
                 json_schema_extra={"env": env.upper()}, **bounds)


_name_placeholder = "__name__"  # replaced by each field's own name in `_own_names` below


class _Declared(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        changed = False
        for name, info in cls.model_fields.items():
            alias = info.validation_alias
            if isinstance(alias, AliasChoices) and alias.choices[0] == _name_placeholder:
                info.validation_alias = AliasChoices(name, *alias.choices[1:])
                changed = True
        if changed:
            cls.model_rebuild(force=True)


class Tunables(_Declared):
    """What a deployment sets and a caller may override per request (`/rag`'s `configurable`)."""

    # retrieval: sql/functions/hybrid_search.sql
    retrieve_k: int = tunable(10, "candidates retrieved per round, before the reranker cuts them to top_k",
                              "GRAPH_RETRIEVE_K", ge=1, le=50)
    top_k: int = tunable(3, "excerpts graded and shown to the model", "GRAPH_TOP_K", ge=1, le=20)
    mode: Mode = tunable("hybrid", "both search sides, or one alone for comparisons", "SEARCH_MODE")
    fusion: Fusion = tunable("rrf", "rank fusion (rrf) or alpha-weighted normalised scores (score)", "FUSION")
    dense_weight: float = tunable(0.75, "fusion weight of the dense (vector) side", "DENSE_WEIGHT", ge=0, le=10)
    sparse_weight: float = tunable(1.0, "fusion weight of the full-text side", "SPARSE_WEIGHT", ge=0, le=10)
    heading_weight: float = tunable(1.0, "fusion weight of the statement-heading side (0: off)", "HEADING_WEIGHT",
                                    ge=0, le=10)
    rrf_k: int = tunable(60, "RRF constant of the full-text and heading sides", "RRF_K", ge=1, le=1000)
    dense_rrf_k: int = tunable(100, "RRF constant of the dense side", "DENSE_RRF_K", ge=1, le=1000)
    candidates: int = tunable(100, "candidates per search side before fusion", "CANDIDATES", ge=1, le=500)
    max_df: float = tunable(0.4, "drop question words held by more than this share of the chunks in scope",
                            "MAX_DF", ge=0.01, le=1.0)
    scope_from_question: bool = tunable(
        True, "a question naming some of the documents' companies (and fiscal years) searches only theirs",
        "SCOPE_FROM_QUESTION")
    hyde: bool = tunable(False, "embed a hypothetical answer for the dense search", "GRAPH_HYDE")
    distinct_pages: bool = tunable(False, "keep excerpts from different pages where the candidates allow",
                                   "GRAPH_DISTINCT_PAGES")
    # correction
    grade: bool = tunable(True, "grade excerpts with the LLM (off: every excerpt counts as relevant)",
                          "GRAPH_GRADE")
    relevance_floor: float = tunable(
        0.36, "an excerpt whose cosine similarity to the question (the packaged embedder's) is below this is "
        "not relevant, whatever the grader says (-1: off; chosen on company-grouped folds: "
        "evals/results/relevance_floor.md)", "RELEVANCE_FLOOR", ge=-1.0, le=1.0)
    confirm_floor: float = tunable(
        0.0, "an answer sentence stating a number the question does not is dropped when the model, shown the "
        "cited statement that holds it and the question, gives a P(yes) below this that it answers the question "
        "(graph/confirm.py; 0: off, no call: on the embedded model every floor tried cost right answers for "
        "the out-of-scope ones it refused, evals/results/confirm_floor.md)", "CONFIRM_FLOOR", ge=0.0, le=1.0)
    grade_local: bool = tunable(
        False, "grade with the LLM also when its first link is the embedded local model, whose verdicts rank "
        "evidence no better than a coin (evals/results/grading_threshold.md)", "GRAPH_GRADE_LOCAL")
    choose_local: bool = tunable(
        False, "let the embedded local model pick a lookup's fact when it is the chain's first link; off, it only "
        "says whether any listed fact is the figure asked and code's ranking picks (evals/results/"
        "choose_after_lookup.md: the ranking's first fact holds the reference more often)", "GRAPH_CHOOSE_LOCAL")
    grade_threshold: float = tunable(
        0.5, "an excerpt is relevant when the grader's P(yes) reaches this (where the model gives "
        "probabilities; its sampled word otherwise)", "GRADE_THRESHOLD", ge=0.0, le=1.0)
    max_rounds: int = tunable(2, "extra rounds (rewrite, then web) when no excerpt is relevant",
                              "GRAPH_MAX_ROUNDS", ge=0, le=3)
    web_search: bool = tunable(True, "allow the web-search fallback; a deployment searches the web only with "
                               "TAVILY_API_KEY or WEB_SEARCH=true set (no egress unless asked)", "WEB_SEARCH")
    # prompts
    excerpt_chars: int = tunable(1200, "characters of each parent chunk shown: where its matched children and the "
                                 "question's words are (graph/windows.py)",
                                 "GRAPH_EXCERPT_CHARS", ge=200, le=4000)
    history_turns: int = tunable(3, "chat turns (user + assistant pairs) the model sees", "GRAPH_HISTORY_TURNS",
                                 ge=0, le=10)


class ServerTunables(_Declared):
    """Knobs a deployment (and Studio) sets, but a `/rag` caller may not: they cost or protect."""

    reranker: RerankerName = tunable("auto", "auto (BGE if its weights are present, else the measured fallback), "
                                     "bge, dense, llm or none", "RERANKER")
    guardrail_llm: bool = tunable(False, "ask the LLM too in the guardrail (slow on the local model)",
                                  "GUARDRAIL_LLM")
    screen_chunks: bool = tunable(True, "cut injected instructions out of retrieved text", "SCREEN_CHUNKS")


def names(model: type[BaseModel] = Tunables) -> tuple[str, ...]:
    return tuple(model.model_fields)


def markdown_table() -> str:
    """The configuration table of docs/configuration.md, from the declarations above."""
    rows = ["| variable | default | range | per request | what it does |", "| --- | --- | --- | --- | --- |"]
    for model, per_request in ((Tunables, "yes"), (ServerTunables, "no")):
        for info in model.model_fields.values():
            extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
            low = next((m.ge for m in info.metadata if hasattr(m, "ge")), None)
            high = next((m.le for m in info.metadata if hasattr(m, "le")), None)
            choices = getattr(info.annotation, "__args__", None)
            span = f"{low}–{high}" if low is not None else " / ".join(choices) if choices else ""
            default = str(info.default).lower() if isinstance(info.default, bool) else info.default
            rows.append(f"| `{extra['env']}` | `{default}` | {span} | {per_request} | {info.description} |")
    return "\n".join(rows) + "\n"


DOCS = "docs/configuration.md"
_START, _END = "<!-- tunables:start -->\n", "<!-- tunables:end -->"


def with_table(doc: str) -> str:
    """`doc` with the text between the tunables markers replaced by `markdown_table()`."""
    head, _, rest = doc.partition(_START)
    _, _, tail = rest.partition(_END)
    return head + _START + markdown_table() + _END + tail


if __name__ == "__main__":  # python tunables.py: rewrite the table in docs/configuration.md
    from pathlib import Path

    path = Path(__file__).parent / DOCS
    path.write_text(with_table(path.read_text()))

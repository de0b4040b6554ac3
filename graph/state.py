"""Graph state: a narrow input for callers and a richer internal state.

`typing_extensions.TypedDict` because LangServe (pydantic) rejects `typing.TypedDict` on 3.11.
Every value is JSON-safe (plain dicts and lists) so Studio, checkpointers and LangSmith show it.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, Required

from typing_extensions import TypedDict

Role = Literal["user", "assistant"]


class Turn(TypedDict):
    role: Role
    content: str


class PagePart(TypedDict):
    """A part of a passage the excerpt shows, and the page it is on (a passage may span pages)."""

    page: int
    page_label: str
    boxes: list[list[float]] | None
    text: str


class Excerpt(TypedDict, total=False):
    """One piece of context: a parent chunk of a document (found through its child) or a web page."""

    source: Literal["document", "web"]
    key: str  # "doc:<parent_id>" or "web:<url>": dedupes across rounds
    document_id: str | None
    name: str  # document name or page title
    page: int | None  # 1-based page (or page-like unit: slide, sheet block, section) of the matched child
    page_label: str  # what a citation names: "page 4", "slide 4", "sheet Revenue", "section 2.1"
    ocr: bool  # the page's text was recognised by OCR
    boxes: list[list[float]] | None  # the matched child's line boxes on a PDF page (points), to highlight
    url: str | None  # web pages
    text: str  # what the model sees (screened)
    score: float  # retrieval score
    similarity: float | None  # cosine of the question and the matched child (None: not a document's)
    rerank_score: float
    screened: list[str]  # sentences removed as injected instructions
    parts: list[PagePart]  # the passage's children the text shows: a citation names the page its evidence is on


class Evidence(TypedDict, total=False):
    """The exact row or sentence of a cited source that the answer rests on."""

    text: str
    box: list[float] | None  # [x0, y0, x1, y1] on its PDF page, points from the top-left (None: not placed)
    kind: Literal["row", "sentence"]
    context: str  # a row's section, period and scale ("Operating expenses · 2023 · In thousands")


class Citation(TypedDict, total=False):
    n: int
    document_id: str | None
    name: str
    page: int | None  # the unit's number: GET /api/documents/{id}/pages/{page} shows its text
    page_label: str | None  # "page 4", "slide 4", "sheet Revenue", "section 2.1" (None for web pages)
    ocr: bool
    boxes: list[list[float]] | None
    url: str | None
    text: str
    evidence: list[Evidence]  # what the answer rests on, when it cites this source


class QuestionScope(TypedDict):
    """The documents a question's words point to (storage.document_filter.Scope, ids as strings), with
    the words and the documents it was read for (graph/scope.py)."""

    question: str
    document_ids: list[str] | None  # the documents it was read among (None: all the owner's)
    tiers: list[list[str]] | None  # best first; None: the question names nothing that narrows
    certain: bool


class Readers(TypedDict):
    """Whose documents a run reads, resolved once for the asker it names (graph/readers.py)."""

    user: str
    owner_id: int | None
    workspace_id: int | None
    owners: list[int]


class InputState(TypedDict, total=False):
    """What a caller sends. Ownership is NOT here: it comes from the config (the server's auth)."""

    question: Required[str]
    chat_history: list[Turn]  # earlier turns, oldest first
    chat_id: str  # the caller's chat/thread id, for logs and traces
    document_ids: list[str]  # limit retrieval to these documents (all of the owner's when empty)
    # ... and to those whose own cover page names this company, form or period ("" = any; storage/document_filter.py)
    company: str
    form: str
    period: str


class OutputState(TypedDict, total=False):
    answer: str
    citations: list[Citation]
    cited: list[int]  # the [n] the answer actually uses
    blocked: bool
    block_reason: str
    route: list[str]  # nodes visited, in order
    rounds: int  # extra retrieval rounds taken (rewrite / web)
    provider: str | None  # the LLM link that wrote the answer
    timings: dict[str, float]  # seconds per node (summed when a node runs twice)
    chat_history: list[Turn]  # the history with this turn appended (a checkpointer keeps it)
    standalone_question: str  # the question after condensing (== question without history)
    first_token_s: float | None  # seconds from the start of `generate` to its first streamed token
    llm_calls: list[dict[str, Any]]  # provider metadata of each LLM call (node, link, failures)
    # which figure rests on which fact, verified or not (graph/verify.py VerifyReport as a dict)
    verification: dict[str, Any] | None
    facts: list[dict[str, Any]]  # table cells offered to generation as numbered facts (graph/facts.py)
    calculation: dict[str, Any] | None  # the computed figure and its working (graph/calc.py Result)


class State(InputState, OutputState, total=False):
    query: str  # the current search query (user's words, or the rewrite)
    hyde: str  # the hypothetical answer whose embedding is the dense query
    documents: list[Excerpt]  # this round's candidates (after rerank and screening)
    relevant: list[Excerpt]  # graded relevant, accumulated over rounds
    seen: list[str]  # keys already graded, so a new round brings new text only
    grades: list[dict[str, Any]]  # this round's verdicts, for the trace
    next: NotRequired[Literal["rewrite", "web_search", "generate"]]
    rewritten: bool  # the query was rewritten this question (route: at most once)
    searched_web: bool  # the web was searched this question (route: at most once)
    web_failures: list[Any]  # (backend, reason) when the web search failed
    company_words: list[str]  # words of the scoped documents' company names: they pick no table row
    figure_choice: dict[str, Any] | None  # how a figure answer was composed: {"by": "model"|"calculation", "fact": n}
    unanswerable: str  # why the documents cannot answer (graph/nodes/answerable.py); "" when they may
    question_scope: QuestionScope | None  # read by answerable, reused by retrieve (None: not read)
    reading: dict[str, Any]  # the standalone question read once (graph/reading.py Reading.to_state)
    streamed: str  # the answer's beginning generate sent checked while the model wrote (graph/nodes/early.py)
    early: dict[str, Any]  # the check's update that let `streamed` through
    readers: Readers | None  # the owners this run reads, resolved by answerable (graph/readers.py)


# What `begin` resets for each question: a checkpointer keeps a thread's state between questions.
FRESH: dict[str, Any] = {
    "blocked": False, "block_reason": "", "rounds": 0, "documents": [], "relevant": [], "seen": [], "grades": [],
    "citations": [], "cited": [], "answer": "", "provider": None, "llm_calls": [], "hyde": "", "rewritten": False,
    "searched_web": False, "web_failures": [], "first_token_s": None, "route": [], "timings": {},
    "verification": None, "facts": [], "calculation": None, "unanswerable": "", "company_words": [],
    "figure_choice": None, "question_scope": None, "streamed": "", "early": {},
    "readers": None,
}

"""Checked sentences of the draft, sent while the model still writes.

The check (graph/nodes/verify.py `check`) reads the whole answer: a pointer sentence ("This is
stated in [2].") gives its markers to the sentence before it, the answer as a whole must not
decline and must speak of what was asked, and it must cite something. So a sentence is sent once
the next has begun with a word no pointer sentence holds (verify's `opens_no_pointer`: then what
follows no longer changes its text), so that a two-sentence answer's first goes out a word or two
into the second rather than with it at the end; or else once the draft has gone a whole sentence
past it and checking the draft up to it and up to the next gives the same text for it. The last
sentence goes out when the model's output ends, checked by verify. At each such point the
draft so far is finished as generate finishes the whole (graph/nodes/generate.py `finished`) and
checked with every check of the end; what passes and is cited, past what was sent, is sent as
checked tokens. Nothing is sent for a composed answer or one with a calculation (code writes those
whole), nor after a provider failed mid-answer (the next one starts over), nor past MAX_POINTS
sentences. verify then sends only the rest, and keeps what was sent even if the whole answer's check
would change it (`streamed`, `early`): the answer is then what was sent; sending less, earlier,
never something taken back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graph.citations import MARK
from graph.context import Context
from graph.mechanics import opens_no_pointer
from graph.nodes.verify import Checked, check, pieces
from graph.state import Citation, State
from graph.verify import sentences

# Each point checks the draft so far again (a database read and the figure checks): past this many
# sentences the rest waits for the end, so a long answer costs a bounded number of checks.
MAX_POINTS = 24


class Early:
    def __init__(self, state: State, config: RunnableConfig, runtime: Runtime[Context], citations: list[Citation],
                 write: Callable[[dict[str, Any]], None]) -> None:
        self.state, self.config, self.runtime, self.citations, self.write = state, config, runtime, citations, write
        self.on = bool(citations) and not state.get("figure_choice") and not state.get("calculation")
        self.draft = ""
        self.checked = 0  # the draft's sentences already checked up to
        self.streamed = ""  # what was sent, checked
        self.update: dict[str, Any] = {}  # the check's state update that let `streamed` through
        self.last: tuple[int, Checked | None] | None = None  # the latest check: the next point's first

    def reset(self) -> None:
        """A provider failed mid-answer: the next starts over, and nothing more is sent early."""
        self.on = False

    def sent(self) -> dict[str, Any]:
        """For the state: what was sent and the check that let it through (None sent: nothing)."""
        return {"streamed": self.streamed, "early": self.update} if self.streamed else {}

    def add(self, piece: str) -> None:
        if not self.on:
            return
        self.draft += piece
        spans = sentences(self.draft)
        whole = len(spans) - 1  # the last may still grow: the spans before it are whole
        # the sentence before the growing one may go once that one has begun as no pointer sentence
        # can; else the one before it, once the next is whole and is seen not to change it
        ready = whole if whole and opens_no_pointer(self.draft[spans[-1][0]:]) else whole - 1
        if ready < 1 or ready <= self.checked:
            return
        if ready > MAX_POINTS:
            self.on = False
            return
        self.checked = ready
        upto = self._check(spans[ready - 1][1])
        after = self._check(spans[ready][1]) if ready < whole else upto
        if upto is None or after is None or upto.awaiting or not upto.passed \
                or not upto.answer.startswith(self.streamed):
            return
        if not after.answer.startswith(upto.answer) or upto.answer == self.streamed:
            return  # the next sentence changes it (a pointer's markers) or nothing is new
        if not self.streamed:
            self.write({"sources": upto.sources})
        for token in pieces(upto.answer[len(self.streamed):]):
            self.write({"token": token})
        self.streamed, self.update = upto.answer, upto.update

    def _check(self, end: int) -> Checked | None:
        """The draft up to `end` finished and checked; None when the model cited nothing in it (an
        answer citing nothing is cited by code as a whole: graph/citations.py `cite_uncited`)."""
        from graph.nodes.generate import finished

        if self.last is not None and self.last[0] == end:
            return self.last[1]
        out = None
        if MARK.search(self.draft[:end]):
            answer, cited = finished(self.draft[:end], self.state)
            if cited:
                out = check(cast(State, {**self.state, "answer": answer, "citations": self.citations, "cited": cited}),
                            self.config, self.runtime, confirming=False)
        self.last = (end, out)
        return out

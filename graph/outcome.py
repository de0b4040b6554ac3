"""What a finished run of the graph means for its callers (CLI, chat service, /rag accounting, evals)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from graph.state import Citation

Status = Literal["ok", "blocked", "error"]


@dataclass(frozen=True)
class Outcome:
    answer: str
    citations: list[Citation]
    cited: list[int]
    status: Status
    block_reason: str | None
    provider: str | None
    route: list[str]
    rounds: int
    timings: dict[str, float]
    standalone_question: str | None
    first_token_s: float | None
    input_tokens: int
    output_tokens: int
    llm_calls: list[dict[str, Any]] = field(default_factory=list)
    grades: list[dict[str, Any]] = field(default_factory=list)  # the last round's verdicts
    # which figure rests on which fact, verified or not (graph/nodes/verify.py); None: nothing was checked
    verification: dict[str, Any] | None = None
    calculation: dict[str, Any] | None = None  # the figure code computed, with its working

    @classmethod
    def from_state(cls, out: dict[str, Any]) -> Outcome:
        calls = list(out.get("llm_calls") or [])
        # generate records an error when every provider failed: the answer then says so, uncited
        failed = any(c.get("node") == "generate" and "error" in c for c in calls)
        status: Status = "blocked" if out.get("blocked") else "error" if failed else "ok"
        return cls(
            answer=str(out.get("answer") or ""), citations=list(out.get("citations") or []),
            cited=list(out.get("cited") or []), status=status,
            block_reason=out.get("block_reason") or None if status == "blocked" else None,
            provider=out.get("provider"), route=list(out.get("route") or []), rounds=int(out.get("rounds") or 0),
            timings=dict(out.get("timings") or {}), standalone_question=out.get("standalone_question"),
            first_token_s=out.get("first_token_s"),
            input_tokens=sum(int((c.get("llm_usage") or {}).get("input_tokens", 0) or 0) for c in calls),
            output_tokens=sum(int((c.get("llm_usage") or {}).get("output_tokens", 0) or 0) for c in calls),
            llm_calls=calls, grades=list(out.get("grades") or []), verification=out.get("verification"),
            calculation=out.get("calculation"))

    @property
    def refused(self) -> bool:
        """Answered that the documents do not say: a run that ended well but cites nothing."""
        return self.status == "ok" and not self.cited

    def summary(self) -> dict[str, Any]:
        """The JSON a caller prints or stores (`thotqen ask --json`, a chat message's meta)."""
        return {"answer": self.answer, "citations": self.citations, "cited": self.cited,
                "blocked": self.status == "blocked", "route": self.route, "rounds": self.rounds,
                "provider": self.provider, "timings": self.timings, "verification": self.verification,
                "calculation": self.calculation}

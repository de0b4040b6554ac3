"""Parsing the next file in another process gives exactly the chunks the job would make itself."""

from __future__ import annotations

import hashlib
from pathlib import Path

from evals import pdfs
from ingestion.chunk import chunk_rows
from ingestion.parse import parse_pdf
from ingestion.pipeline import display_title, make_prefetcher

TOPICS = ["Hurricane damage to warehouses", "Quarterly dividend policy", "Capital expenditures by segment"]


def test_prefetched_chunks_equal_the_jobs_own(tmp_path: Path, settings, embedder, db, make_user) -> None:  # noqa: ANN001
    from ingestion.pipeline import run_job, submit_pdf

    data = pdfs.long_report(TOPICS)
    path = tmp_path / "Annual_Report.pdf"
    path.write_bytes(data)
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.7 truncated")
    prefetcher = make_prefetcher(settings, embedder)
    try:
        prefetcher.start(path, display_title(path.name))
        prefetcher.start(bad, "broken")
        digest = hashlib.sha256(data).hexdigest()
        assert prefetcher.take(bad, "whatever") is None  # a failure: the job parses and reports it itself
        assert prefetcher.take(tmp_path / "never-started.pdf", digest) is None
        prepared = prefetcher.take(path, digest)
        assert prepared is not None and prepared.pages == len(TOPICS) * 2
        own = chunk_rows(parse_pdf(data).rows, embedder.count_tokens, title=display_title(path.name),
                         child_tokens=settings.child_tokens, overlap_tokens=settings.child_overlap_tokens,
                         parent_tokens=settings.parent_tokens)
        assert prepared.chunks == own

        prefetcher.start(path, display_title(path.name))
        assert prefetcher.take(path, "0" * 64) is None  # other bytes than the job's: not used

        _, owner = make_user()
        sub = submit_pdf(db, settings, owner_id=owner, name=path.name, data=data)
        outcome = run_job(db, settings, embedder, sub.job_id, prepared=prepared)
        assert outcome.status == "ready" and outcome.pages == prepared.pages
        assert outcome.children == len(own.children)
    finally:
        prefetcher.close()

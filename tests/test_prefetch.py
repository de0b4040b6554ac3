"""Parsing the next file ahead gives exactly what the job would parse itself."""

from __future__ import annotations

import hashlib
from pathlib import Path

from evals import pdfs
from ingestion.pipeline import limits, make_prefetcher
from ingestion.sandbox import extract

TOPICS = ["Hurricane damage to warehouses", "Quarterly dividend policy", "Capital expenditures by segment"]


def test_prefetched_parse_equals_the_jobs_own(tmp_path: Path, settings, embedder, db, make_user) -> None:
    from ingestion.pipeline import run_job, submit_document

    data = pdfs.long_report(TOPICS)
    path = tmp_path / "Annual_Report.pdf"
    path.write_bytes(data)
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.7 truncated")
    prefetcher = make_prefetcher(settings)
    try:
        prefetcher.start(path)
        prefetcher.start(bad)
        digest = hashlib.sha256(data).hexdigest()
        assert prefetcher.take(bad, "whatever") is None  # a failure: the job parses and reports it itself
        assert prefetcher.take(tmp_path / "never-started.pdf", digest) is None
        prepared = prefetcher.take(path, digest)
        assert prepared is not None and prepared.parsed.pages == len(TOPICS) * 2
        own = extract(path, "pdf", limits(settings), timeout_s=settings.ingestion.timeout_s,
                      memory_mb=settings.ingestion.memory_mb)
        assert prepared.parsed.rows == own.rows and prepared.parsed.units == own.units

        prefetcher.start(path)
        assert prefetcher.take(path, "0" * 64) is None  # other bytes than the job's: not used

        _, owner = make_user()
        sub = submit_document(db, settings, owner_id=owner, name=path.name, data=data)
        outcome = run_job(db, settings, embedder, sub.job_id, prepared=prepared)
        assert outcome.status == "ready" and outcome.pages == own.pages and outcome.children > 0
    finally:
        prefetcher.close()

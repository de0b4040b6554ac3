"""Fixtures: a real embedded Postgres in a temp data directory and the real packaged embedder."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# A short path: Postgres unix sockets live in the data directory.
_HOME = Path(tempfile.mkdtemp(prefix="thq-", dir="/tmp"))
os.environ["THOTQEN_HOME"] = str(_HOME)
# One ONNX export of the embedder for the whole run, CLI subprocesses with their own homes included.
os.environ.setdefault("EMBEDDING_EXPORT_DIR", str(_HOME / "models" / "embeddings"))
os.environ.pop("DATABASE_URL", None)
# The relevance floor is chosen on whole filings (evals/results/relevance_floor.md); the tests' few
# synthetic pages, padded with filler, sit nearer it than a filing's best excerpt. Off here, held by
# the tests that set it (tests/graph/test_nodes.py, test_checked_answers.py).
os.environ.setdefault("RELEVANCE_FLOOR", "-1")

from providers.runtime import configure_process  # noqa: E402

configure_process()  # what `thotqen` and the server set at their entry


@pytest.fixture(scope="session")
def home() -> Iterator[Path]:
    yield _HOME
    shutil.rmtree(_HOME, ignore_errors=True)


@pytest.fixture(scope="session")
def settings(home: Path):
    from settings import Settings

    return Settings()


@pytest.fixture(scope="session")
def runtime(settings):
    """The real composition root over the test home: one database and one embedder for the run."""
    from runtime import build_runtime

    rt = build_runtime(settings)
    yield rt
    rt.close()  # before `home` removes the data directory


@pytest.fixture(scope="session")
def db(runtime):
    return runtime.database


@pytest.fixture(scope="session")
def embedder(runtime):
    return runtime.embedder


@pytest.fixture
def bouncer(db) -> Iterator[object]:
    """PgBouncer in transaction mode in front of the test database (tests/test_supabase.py's PgBouncer)."""
    if not shutil.which("pgbouncer"):
        pytest.skip("pgbouncer not installed (.ci/run installs it)")
    from tests.test_supabase import PgBouncer

    workdir = Path(tempfile.mkdtemp(prefix="thq-bouncer-", dir="/tmp"))
    proxy = PgBouncer(db.uri, workdir)
    yield proxy
    proxy.close()
    shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture
def make_user(db):
    """Create a fresh user and return (name, id)."""
    import uuid

    from storage.users import get_or_create_user

    def make(prefix: str = "user") -> tuple[str, int]:
        name = f"{prefix}-{uuid.uuid4().hex[:8]}"
        with db.connection() as conn:
            return name, get_or_create_user(conn, name)

    return make


@pytest.fixture
def ingest(db, settings, embedder):
    """Submit and run a PDF for an owner; returns (submission, outcome or None when reused)."""
    from ingestion.pipeline import run_job, submit_pdf

    def run(owner_id: int, name: str, data: bytes):
        sub = submit_pdf(db, settings, owner_id=owner_id, name=name, data=data)
        outcome = run_job(db, settings, embedder, sub.job_id) if sub.job_id else None
        return sub, outcome

    return run


@pytest.fixture(scope="session")
def model_128(tmp_path_factory) -> str:
    """A second real embedding model: the packaged MiniLM with a fixed random 384->128 projection on top,
    saved as a sentence-transformers folder named minilm-128 (identity minilm-128:128:torch)."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer import modules as models

    from providers.embeddings import packaged_model_path

    torch.manual_seed(7)
    base = SentenceTransformer(packaged_model_path(), device="cpu")
    dense = models.Dense(in_features=384, out_features=128, bias=False, activation_function=torch.nn.Identity())
    path = tmp_path_factory.mktemp("models") / "minilm-128"
    SentenceTransformer(modules=[*base, dense], device="cpu").save(str(path))
    return str(path)


# The tiers by directory (docs/architecture.md, Tests): `pytest -m unit` and the like select one; markers only
# label, so `make test` runs what it ran before.
SYSTEM_DIRS = {"server", "web", "broker"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    tests = Path(__file__).parent
    for item in items:
        if tests not in item.path.parents:
            continue
        area = item.path.relative_to(tests).parts[0]
        tier = "unit" if area == "unit" else "system" if area in SYSTEM_DIRS else "integration"
        item.add_marker(tier)

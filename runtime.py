"""The composition root: every running part of a process is built here, once, from one Settings.

Each entry point builds one `Runtime` with `build_runtime(settings)` and hands it down: the server
(server.py: FastAPI routes get its parts through `Depends`, api/deps.py), the CLI (cli.py), the
Celery worker (`thotqen worker`, jobqueue/app.py) and `langgraph dev` (studio.py). The graph gets
it as LangGraph's runtime context (graph/context.py). Nothing else builds a provider or reads the
environment (tests/test_runtime.py holds the code to that).

A part is built on first use, so `thotqen documents` never loads a model, and at most once per
runtime. Tests pass fakes for any part by keyword; what they leave out is the real thing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from providers import telemetry
from settings import Settings

# The parts' modules are imported where a part is built: a command that uses the database only (`thotqen
# documents`, `keys`, `workspace`) does not import LangChain, PyMuPDF, Celery or the models' libraries,
# which took most of its start-up (evals/results/make_test.md).
if TYPE_CHECKING:
    from celery import Celery

    from answering.processes import AnswerProcesses
    from graph.evidence_store import EvidenceStore
    from identity.security import Tokens
    from ingestion.files import LocalFiles
    from jobqueue import dispatch
    from jobqueue.worker import IngestWorker
    from providers.classifiers.injection import InjectionClassifier
    from providers.classifiers.instruction import InstructionClassifier
    from providers.local_model import KeptAliveServer, LocalServer
    from providers.protocols import ChatChain, DocumentEmbedder, Reranker, WebSearcher
    from storage.db import Database

log = logging.getLogger(__name__)

T = TypeVar("T")


class Runtime:
    """The process's parts, built lazily and once each (a lock per part: a slow model load does not
    hold up the database)."""

    def __init__(self, settings: Settings, *, database: Database | None = None,
                 embedder: DocumentEmbedder | None = None, chain: ChatChain | None = None,
                 reranker: Reranker | None = None, web: WebSearcher | None = None,
                 files: LocalFiles | None = None, guard: InjectionClassifier | None = None,
                 screen: InstructionClassifier | None = None) -> None:
        self.settings = settings
        self._given: dict[str, Any] = {name: part for name, part in {
            "database": database, "embedder": embedder, "chain": chain, "reranker": reranker, "web": web,
            "files": files, "guard": guard, "screen": screen}.items() if part is not None}
        self._built: dict[str, Any] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._locks_lock = threading.Lock()

    # The parts are kept by name, so their type is lost in the dicts: each key is only ever filled by
    # one build function (or the constructor's keyword of that name), whose type the casts restore.
    def _once(self, key: str, build: Callable[[], T]) -> T:
        if key in self._built:
            return cast(T, self._built[key])
        with self._locks_lock:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self._built:
                self._built[key] = build()
            return cast(T, self._built[key])

    def _part(self, name: str, build: Callable[[], T]) -> T:
        return cast(T, self._given[name]) if name in self._given else self._once(name, build)

    # -- the parts ---------------------------------------------------------------------------
    @property
    def database(self) -> Database:
        """Postgres (embedded when DATABASE_URL is unset), migrated, pooled."""
        from storage.db import open_database

        return self._part("database", lambda: open_database(self.settings))

    @property
    def evidence(self) -> EvidenceStore:
        """What the graph's nodes read the documents through (graph/evidence_store.py): over `database`."""
        from storage.evidence_store import PostgresEvidence

        return self._once("evidence", lambda: PostgresEvidence(self.database))

    @property
    def embedder(self) -> DocumentEmbedder:
        return self._part("embedder", self._build_embedder)

    def chain(self, order: str = "") -> ChatChain:
        """The LLM fallback chain for a link order a run asked for ("": the deployment's LLM_ORDER)."""
        from providers.llm.chain import LLMChain

        if "chain" in self._given:
            return cast("ChatChain", self._given["chain"])
        settings = self.settings if not order else self.settings.model_copy(update={"llm_order": order})
        return self._once(f"chain:{order}", lambda: LLMChain(settings, local=self.local_model))

    def reranker(self, name: str = "") -> Reranker:
        """The reranker a run asked for by name ("": the deployment's RERANKER)."""
        from providers.reranker import make_reranker

        if "reranker" in self._given:
            return cast("Reranker", self._given["reranker"])
        name = name or self.settings.reranker
        return self._once(f"reranker:{name}", lambda: make_reranker(
            name, model=self.settings.reranking.model, fallback=self.settings.reranking.fallback,
            local=self.local_model, packaged=lambda: self.packaged_embedder))

    def local_model(self) -> LocalServer | KeptAliveServer:
        """The embedded model's server: the one `thotqen model-server` keeps alive, else started here."""
        from providers.local_model import get_local_server

        return get_local_server(self.settings)

    @property
    def web(self) -> WebSearcher:
        from providers.web_search import WebSearch

        return self._part("web", lambda: WebSearch(self.settings))

    @property
    def files(self) -> LocalFiles:
        """Where uploaded files live: the data directory, or Supabase Storage when configured."""
        from ingestion import files

        return self._part("files", lambda: files.make_file_store(self.settings))

    @property
    def guard(self) -> InjectionClassifier:
        """The guardrail's classifier: is the question an attack? (its Guardian loads on first use)"""
        from providers.classifiers.injection import InjectionClassifier

        return self._part("guard", InjectionClassifier.load)

    @property
    def packaged_embedder(self) -> DocumentEmbedder:
        """The packaged MiniLM, whatever EMBEDDING_MODEL_PATH says: the guardrail's classifier was trained
        on its features and the dense reranker compares with it (the retrieval embedder when it is that model)."""
        from providers.classifiers.injection import gives_trained_features
        from providers.embeddings import build_embedder

        if gives_trained_features(self.embedder):
            return self.embedder
        s = self.settings
        return self._once("packaged_embedder", lambda: telemetry.traced_embedder(build_embedder(
            s.embedding.backend, None, s.embedding.batch_size, None, s.embedding_export_root)))

    @property
    def screen(self) -> InstructionClassifier:
        """The screen's classifier: is a retrieved sentence an instruction?"""
        from providers.classifiers.instruction import InstructionClassifier

        return self._part("screen", InstructionClassifier.load)

    @property
    def tokens(self) -> Tokens:
        """Signs and verifies access tokens (refuses a placeholder secret outside development)."""
        from identity.security import Tokens, resolve_jwt_secret

        return self._once("tokens", lambda: Tokens(self.settings, resolve_jwt_secret(self.settings)))

    @property
    def ingest_worker(self) -> IngestWorker:
        """What runs one ingestion job (the server's threads and Celery tasks both call its `run`)."""
        from jobqueue.worker import IngestWorker

        return self._once("ingest_worker", lambda: IngestWorker(self.database, self.settings, self.files,
                                                                embedder=self.embedder))

    @property
    def jobs(self) -> dispatch.InProcess | dispatch.Celery:
        """Where a queued job goes: the server's own threads, or the Celery broker when one is set."""
        from jobqueue import dispatch

        if self.settings.celery.broker_url:
            return self._once("jobs", lambda: dispatch.Celery(self.settings, self.celery_app, self.database))
        return self._once("jobs", lambda: dispatch.InProcess(self.ingest_worker))

    @property
    def answers(self) -> AnswerProcesses | None:
        """The answer processes the graph's runs go to (answering/processes.py), or None: the runs stay
        on this process's threads (ANSWER_PROCESSES=0, or a runtime handed parts, e.g. a test's fakes,
        which live in this process only). Each process builds its own runtime from these settings,
        on this one's database."""
        from answering.processes import AnswerProcesses

        s = self.settings
        if s.answering.processes == 0 or self._given:
            return None
        return self._once("answers", lambda: AnswerProcesses(
            s.model_copy(update={"database_url": self.database.uri}), entry=ANSWER_PROCESS_ENTRY,
            count=s.answering.processes, per_process=s.answering.per_process, queue=s.answering.queue,
            nice=s.background_nice, max_mb=s.answering.process_max_mb))

    @property
    def celery_app(self) -> Celery:
        """The broker's Celery app, for publishing jobs (a worker builds its own, with tasks: jobqueue/app.py)."""
        from jobqueue.app import make_app

        return self._once("celery_app", lambda: make_app(self.settings))

    def _build_embedder(self) -> DocumentEmbedder:
        from providers.embeddings import build_embedder

        s = self.settings
        log.info("loading the %s embedding model from %s", s.embedding.backend,
                 s.embedding.model_path or "the packaged all-MiniLM-L6-v2")
        # its calls are spans when tracing is on (the wrapper passes everything else through)
        return telemetry.traced_embedder(build_embedder(s.embedding.backend, s.embedding.model_path,
                                                        s.embedding.batch_size, None, s.embedding_export_root))

    def warm(self) -> None:
        """Build what a question needs that is heavy to build: the server calls it before it serves,
        because the first questions of a burst built these together, holding the interpreter lock
        for seconds while every other request waited (evals/results/burst.md): the guardrail's
        models (its Guardian, the packaged embedder), the screen's and the LLM chain's SDK clients."""
        steps: list[tuple[str, Callable[[], object]]] = [
            ("the guardrail", lambda: self.guard.assess("start-up", self.packaged_embedder)),
            ("the screen", lambda: self.screen.is_instruction("start-up")),
            ("the LLM links", lambda: self.chain().prepare())]
        for what, step in steps:
            try:
                step()
            except Exception as exc:  # built lazily then, as before: the first question says why
                log.warning("could not build %s ahead of the first question: %s", what, exc)

    def close(self) -> None:
        """Release what holds resources (the connection pool, the answer processes); parts not built
        are not built now."""
        answers = self._built.get("answers")
        if answers is not None:
            answers.close()
        database = self._built.get("database")
        if database is not None:
            database.close()


def build_runtime(settings: Settings | None = None, **parts: Any) -> Runtime:
    """The one place a process's parts are made; `settings` None reads the environment. Tracing is
    installed here, once per process, before any part opens a connection (providers/telemetry.py)."""
    settings = settings if settings is not None else Settings()
    telemetry.configure(settings)
    return Runtime(settings, **parts)


def _answer_runtime(settings: Settings) -> Runtime:
    """An answer process's runtime: the server's settings, the question path built before it serves."""
    from providers import logs
    from providers.runtime import configure_process

    configure_process()
    logs.configure(settings)  # the server's LOG_FORMAT and LOG_LEVEL (providers/logs.py)
    rt = build_runtime(settings)
    with telemetry.untraced():  # its warm-up's statements were each a trace of one span; the server's start-up is one
        rt.embedder  # noqa: B018 - built now, not under the first question
        rt.warm()
    return rt


def answer_process() -> None:
    """The entry point of an answer process (answering/processes.py starts it with ANSWER_PROCESS_ENTRY)."""
    from answering.processes import process_main

    process_main(_answer_runtime)


ANSWER_PROCESS_ENTRY = "from runtime import answer_process; answer_process()"

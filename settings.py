"""Settings read from the environment (and an optional `.env`), documented in the README."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    # Data directory: embedded Postgres, stored PDFs, assembled models.
    thotqen_home: Path = Field(default=Path(".thotqen"))
    # External Postgres (e.g. a Supabase direct connection string). Unset: embedded Postgres.
    database_url: str | None = None
    db_pool_size: int = 10

    # Embeddings: a local path to a sentence-transformers model; unset: the packaged MiniLM.
    embedding_model_path: str | None = None
    embedding_batch_size: int = 64

    # Chunking (MiniLM truncates at 256 word pieces, so children stay under it).
    child_tokens: int = 220
    child_overlap_tokens: int = 40
    parent_tokens: int = 1500

    # Retrieval
    search_k: int = 5
    rrf_k: int = 60
    dense_weight: float = 1.0
    sparse_weight: float = 0.5
    candidates: int = 50

    # Jobs
    job_max_attempts: int = 3

    default_user: str = "local"

    @property
    def home(self) -> Path:
        return self.thotqen_home.expanduser().resolve()

    @property
    def embedded(self) -> bool:
        return not self.database_url


@lru_cache
def get_settings() -> Settings:
    return Settings()

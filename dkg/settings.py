"""Typed settings, read from the environment and an optional ``.env`` at run time."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """All configuration of the platform in one object.

    Values come from ``DKG_*`` environment variables (the Neo4j connection also from the
    conventional ``NEO4J_URI``, ``NEO4J_USERNAME``, ``NEO4J_PASSWORD``, ``NEO4J_DATABASE``)
    and from a ``.env`` file in the working directory. Secrets are :class:`SecretStr` so
    they never print.
    """

    model_config = SettingsConfigDict(
        env_prefix="DKG_",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
    )

    state_dir: Path = Field(default=Path(".dkg"), description="Folder for service data, jars, runs.")

    # --- Neo4j -----------------------------------------------------------------------
    neo4j_uri: str | None = Field(
        default=None,
        validation_alias=AliasChoices("NEO4J_URI", "DKG_NEO4J_URI"),
        description="Use this server instead of starting a local one.",
    )
    neo4j_username: str = Field(
        default="neo4j", validation_alias=AliasChoices("NEO4J_USERNAME", "DKG_NEO4J_USERNAME")
    )
    neo4j_password: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("NEO4J_PASSWORD", "DKG_NEO4J_PASSWORD"),
        description="Password of an external server; the local one generates its own.",
    )
    neo4j_database: str = Field(
        default="neo4j", validation_alias=AliasChoices("NEO4J_DATABASE", "DKG_NEO4J_DATABASE")
    )
    neo4j_retry_s: float = Field(default=30.0, gt=0, description="How long the driver retries a transaction "
                                 "that failed transiently (Prefect's task retries come on top).")
    neo4j_version: str = "5.26.30"
    neo4j_host: str = "127.0.0.1"
    neo4j_port: int = Field(default=7687, ge=1, le=65535)
    neo4j_heap: str = "1g"
    neo4j_pagecache_mib: int = Field(default=256, ge=16)
    neo4j_tx_timeout_s: int = Field(default=120, ge=1)
    neo4j_tx_log_retention: str = Field(
        default="512M size", pattern=r"^(?:true|false|\d+[kKmMgG]? (?:files|size|txs|entries|hours|days))$",
        description="How much transaction log the local server keeps (Neo4j's "
                    "db.tx_log.rotation.retention_policy); Neo4j's own default keeps two days of every load.")

    # --- CoreNLP ---------------------------------------------------------------------
    corenlp_url: str | None = Field(
        default=None, description="Use this CoreNLP server instead of starting a local one."
    )
    corenlp_version: str = "4.5.10"
    corenlp_port: int = Field(default=9000, ge=1, le=65535)
    corenlp_memory: str = "3g"
    corenlp_threads: int = Field(default=2, ge=1)
    corenlp_timeout_ms: int = Field(default=30000, ge=1000)
    corenlp_parse_maxlen: int = Field(default=80, ge=10)

    # --- QA dataset, models ----------------------------------------------------------
    qa_dir: Path | None = Field(default=None, description="QA datasets and models (default: <state>/qa).")
    cache_dir: Path | None = Field(default=None, description="Caches of CoreNLP parses and OCR pages, shared by "
                                   "every worker (default: <state>/cache).")
    qa_max_test_items: int | None = Field(default=None, ge=1, description="Evaluate a trained model on a fixed "
                                          "sample of this many test items (default: the whole test split).")
    qa_runtime: Literal["numpy", "torch"] = Field(
        default="numpy", description="What decodes questions when answering: numpy (no torch imported; a cold "
        "`dkg ask` in ~2 s) or torch (transformers' generate, what training uses). Both write the same queries.")

    # --- web guideline RAG chatbot -----------------------------------------------------
    llm_base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint; none: extractive.")
    llm_model: str = "gpt-4o-mini"
    llm_api_key: SecretStr | None = Field(default=None, description="Key for the LLM endpoint.")
    llm_timeout_s: float = Field(default=60.0, gt=0, description="Time-out of one LLM request (connect, read).")
    llm_retries: int = Field(default=1, ge=0, description="Retries after a failed LLM request: an answer waits at "
                             "most (retries + 1) × timeout per LLM call before the fixed refusal.")
    rag_threshold: float = Field(default=0.2, ge=0.0, le=1.0, description="Cosine similarity a page must reach.")
    rag_query: Literal["keywords", "keywords+question"] = Field(
        default="keywords",
        description="What is matched against the pages: the two keywords (the protocol) or the keywords and the "
                    "question's processed words (better recall on short passages).")
    rag_max_chars: int = Field(default=4096, ge=256, description="Reference text cut to this many characters.")
    rag_mode: Literal["best", "protocol"] = Field(
        default="best",
        description="The web chatbot's method: the paper's protocol (two keywords, page TF-IDF, cosine ≥ threshold) "
                    "or the best mode (passages, BM25 with word pairs, the site's aliases, a scope check).")
    pdf_max_bytes: int = Field(default=200_000_000, ge=1000, description="Larger PDF files are refused unread.")
    pdf_max_pages: int = Field(default=1000, ge=1, description="PDFs with more pages are refused.")
    pdf_max_page_stream_bytes: int = Field(default=64_000_000, ge=10_000, description="A page whose content "
                                           "streams inflate past this is refused (PDF bombs).")
    ocr_cache: bool = Field(default=True, description="Remember Tesseract's words per image (keyed on the "
                            "pixels, mode and Tesseract's version) under <state>/cache/ocr.")
    ocr_max_pixels: int = Field(default=120_000_000, ge=1_000_000, description="A page that would render to "
                                "more pixels than this for OCR is refused (about 60 × 60 in at 200 dpi).")
    web_timeout_s: float = Field(default=15.0, gt=0)
    web_retries: int = Field(default=3, ge=0)
    web_max_bytes: int = Field(default=5_000_000, ge=1000, description="Larger pages are skipped.")
    web_delay_s: float = Field(default=0.2, ge=0.0, description="Pause between requests to one site.")
    web_max_pages: int = Field(default=2000, ge=1)

    # --- attribute registry --------------------------------------------------------------
    registry_file: Path | None = Field(default=None, description="The attribute registry (default: "
                                       "<state>/registry/attributes.json).")
    auto_approve_attributes: bool = Field(default=False, description="Approve attributes a new guideline brings "
                                          "without asking (make demo, tests, non-interactive use); off: the build "
                                          "pauses for a data engineer's decision in the Prefect UI.")
    approval_timeout_s: int = Field(default=86400, ge=1, description="How long a build waits paused for that "
                                    "decision; then it fails with the reason and loads nothing.")

    # --- HTTP service (dkg serve) --------------------------------------------------------
    api_keys: SecretStr | None = Field(default=None, description="Comma-separated API keys; when set, every /v1 "
                                       "route but /v1/health needs one (header X-API-Key or Bearer).")
    serve_max_body: int = Field(default=16_384, ge=256, description="Larger request bodies are refused (413).")
    serve_rate: float = Field(default=10.0, ge=0.0, description="Requests per second one client may sustain "
                              "(a token bucket; 0: no limit).")
    serve_burst: int = Field(default=60, ge=1, description="Requests one client may send at once before the rate "
                             "applies.")
    serve_timeout_s: float = Field(default=30.0, gt=0, description="An answer that takes longer gets 504.")
    serve_reload_s: float = Field(default=5.0, gt=0, description="How often the service looks for a newly "
                                  "promoted model, a changed graph or a re-crawled site.")
    serve_cors_origins: str = Field(default="", description="Comma-separated origins allowed by CORS (none: "
                                    "closed).")
    serve_log_questions: bool = Field(default=False, description="Write question text into the access log.")
    serve_cache: int = Field(default=2048, ge=0, description="Answers kept per loaded model and graph (0: none).")

    # --- orchestration ------------------------------------------------------------------
    watch_cron: str = Field(default="0 2 * * *", description="When the served version watcher polls (UTC cron).")
    watch_sources: Path = Field(default=Path("conf/sources.yaml"), description="Sources the watcher polls.")

    # --- scale-out ---------------------------------------------------------------------
    dask_address: str | None = Field(default=None, description="Dask scheduler for page/sentence fan-out.")
    dask_workers: int = Field(default=0, ge=0, description="Start a LocalCluster of this many workers (0: off).")

    # --- production topology (`dkg cluster up`) ----------------------------------------
    cluster_dir: Path | None = Field(default=None, description="The cluster's folder (default: <state>/cluster).")
    cluster_api_port: int = Field(default=4200, description="Port of the cluster's `prefect server start`.")
    cluster_pg_port: int = Field(default=5433, description="Port of the cluster's PostgreSQL (Prefect's database).")
    cluster_pg_data: Path | None = Field(default=None, description="PostgreSQL data folder (default: in the "
                                         "state folder; as root, a folder the postgres user owns).")
    cluster_pg_bin: Path = Field(default=Path("/usr/lib/postgresql/15/bin"), description="PostgreSQL's programs.")
    cluster_workers: int = Field(default=2, ge=1, description="`prefect worker start` processes.")
    cluster_worker_limit: int = Field(default=2, ge=1, description="Flow runs each worker runs at once.")
    cluster_dask_port: int = Field(default=8786, description="Port of the cluster's `dask scheduler`.")
    cluster_dask_workers: int = Field(default=2, ge=0, description="`dask worker` processes (0: no Dask).")
    cluster_deploy: bool = Field(default=True, description="`cluster up` deploys prefect.yaml's deployments.")

    # --- tools and start-up ----------------------------------------------------------
    java_cmd: str = "java"
    maven_cmd: str = "mvn"
    service_start_timeout_s: float = Field(default=240.0, gt=0)

    @field_validator("neo4j_uri", "corenlp_url", mode="before")
    @classmethod
    def _blank_is_none(cls, value: object) -> object:
        if isinstance(value, str) and not value.strip():
            return None
        return value

    @property
    def state_path(self) -> Path:
        """The state folder as an absolute path."""
        return self.state_dir.expanduser().resolve()

    @property
    def cache_path(self) -> Path:
        """Where parse and OCR caches are kept."""
        return (self.cache_dir or self.state_path / "cache").expanduser().resolve()

    @property
    def qa_path(self) -> Path:
        """Where QA datasets (and the models trained on them) are kept."""
        return (self.qa_dir or self.state_path / "qa").expanduser().resolve()

    @property
    def uses_external_neo4j(self) -> bool:
        """True when ``NEO4J_URI`` points at a server we must not start."""
        return self.neo4j_uri is not None

    @property
    def uses_external_corenlp(self) -> bool:
        """True when ``DKG_CORENLP_URL`` points at a server we must not start."""
        return self.corenlp_url is not None

    @property
    def bolt_uri(self) -> str:
        """The Bolt URI to connect to (external or local)."""
        return self.neo4j_uri or f"bolt://{self.neo4j_host}:{self.neo4j_port}"

    @property
    def corenlp_endpoint(self) -> str:
        """The CoreNLP server URL (external or local)."""
        return (self.corenlp_url or f"http://127.0.0.1:{self.corenlp_port}").rstrip("/")


def load_settings(**overrides: object) -> Settings:
    """Read settings now (never at import time).

    Args:
        **overrides: field values that win over the environment (used by tests and the CLI).

    Returns:
        A validated :class:`Settings`.
    """
    return Settings(**overrides)  # type: ignore[arg-type]


def current_settings() -> Settings:
    """The settings of the environment as it is now, read once per distinct environment.

    For hot paths (a scanned page asks several times): reading them costs milliseconds each time. The
    environment and the working folder (where ``.env`` is read) are the key, so a changed variable is
    seen at the next call. Treat the result as read-only.
    """
    key = (os.getcwd(), tuple(sorted(os.environ.items())))
    return _settings_for(key)


@functools.lru_cache(maxsize=8)
def _settings_for(key: tuple[str, tuple[tuple[str, str], ...]]) -> Settings:  # the key only tells environments apart
    return load_settings()

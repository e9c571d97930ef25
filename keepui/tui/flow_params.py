"""The flow screen's params editor: `KEY=VALUE` text to run params and back."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable
from typing import Any

from keepui_engine import UsageError, parse_flow_params

THRESHOLDS = ("margin_high", "margin_low", "entropy_high", "entropy_low", "lineage_strong")
"""The params the editor shows (any other `KEY=VALUE` typed there is passed on too)."""
PARAMS_TITLE = "Invalid flow params"


def is_number(value: object) -> bool:
    """An int or a float (not a bool)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def params_text(params: dict[str, Any], budget: int) -> str:
    """`margin_high=0.15 … budget=5`: a run's thresholds as the params editor holds them."""
    words = [
        f"{key}={shlex.quote(v if isinstance(v, str) else json.dumps(v))}"
        for key in THRESHOLDS
        if (v := params.get(key)) is not None
    ]
    return " ".join([*words, f"budget={budget}"])


def parse_params(
    text: str, numeric: Iterable[str] = THRESHOLDS
) -> tuple[dict[str, Any], int | None]:
    """Params and budget from the editor's `KEY=VALUE` words (quote a value with spaces).

    Args:
        text: What the editor holds, e.g. `margin_high=0.2 budget=8 query="auth flow"`.
        numeric: Params that must be numbers.

    Returns:
        The params (numbers, lists and booleans typed as in `keepui flow -p`) and the budget,
        None when the text does not set one.

    Raises:
        UsageError: A word is not KEY=VALUE, a quote is open, or a number is not a number.
    """
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise UsageError(f"flow params {text!r}: {exc}; close the quote.", PARAMS_TITLE) from None
    for word in words:
        key, sep, _ = word.partition("=")
        if not sep or not key.strip():
            raise UsageError(
                f"{word!r}: write each param as KEY=VALUE, separated by spaces "
                "(e.g. margin_high=0.2 budget=8).",
                PARAMS_TITLE,
            )
    params = parse_flow_params(words)
    budget = params.pop("budget", None)
    if budget is not None and not (isinstance(budget, int) and is_number(budget) and budget > 0):
        raise UsageError(
            f"budget={budget}: give a whole number of ticks, 1 or more (e.g. budget=5).",
            PARAMS_TITLE,
        )
    for key in numeric:
        if key in params and not is_number(params[key]):
            raise UsageError(f"{key}={params[key]}: give a number, e.g. {key}=0.2.", PARAMS_TITLE)
    return params, budget

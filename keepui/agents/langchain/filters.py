"""LangGraph's search filters and namespace match conditions, evaluated on stored values."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.store.base import MatchCondition

OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def matches(value: Mapping[str, Any], conditions: Mapping[str, Any] | None) -> bool:
    """Whether a value passes a SearchOp filter: every field's condition must hold.

    A condition is a plain value (equality; a dict without `$` keys matches the fields it
    names, a list matches element by element) or a dict of operators (`$eq`, `$ne`, `$gt`,
    `$gte`, `$lt`, `$lte`), all of which must hold.

    Raises:
        ValueError: An operator other than those.
    """
    if not conditions:
        return True
    return all(_compare(value.get(field), wanted) for field, wanted in conditions.items())


def _compare(actual: Any, wanted: Any) -> bool:
    """LangGraph's JSONB-like comparison of one field with one condition."""
    if isinstance(wanted, Mapping):
        if any(str(k).startswith("$") for k in wanted):
            return all(_apply(actual, op, operand) for op, operand in wanted.items())
        if not isinstance(actual, Mapping):
            return False
        return all(_compare(actual.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list | tuple):
        return (
            isinstance(actual, list | tuple)
            and len(actual) == len(wanted)
            and all(_compare(a, w) for a, w in zip(actual, wanted, strict=True))
        )
    return bool(actual == wanted)


def _apply(actual: Any, op: str, operand: Any) -> bool:
    """One operator. Ordering compares numbers (and numeric strings) as numbers, other
    strings as strings; a missing field or values of other kinds never satisfy it (where
    LangGraph's InMemoryStore raises)."""
    if op == "$eq":
        return bool(actual == operand)
    if op == "$ne":
        return bool(actual != operand)
    if op not in OPERATORS:
        raise ValueError(f"unsupported filter operator {op!r}; use one of {', '.join(OPERATORS)}.")
    pair = _ordered(actual, operand)
    if pair is None:
        return False
    a, b = pair
    if op == "$gt":
        return bool(a > b)
    if op == "$gte":
        return bool(a >= b)
    if op == "$lt":
        return bool(a < b)
    return bool(a <= b)


def _ordered(a: Any, b: Any) -> tuple[Any, Any] | None:
    """The two values in a form that orders them, or None when they do not compare."""
    if a is None or b is None:
        return None
    try:
        return float(a), float(b)
    except (TypeError, ValueError):
        pass
    if isinstance(a, str) and isinstance(b, str):
        return a, b
    return None


def namespace_matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    """Whether a namespace starts (prefix) or ends (suffix) with a path; `*` matches any label."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise ValueError(f"unsupported match type {condition.match_type!r}: prefix or suffix.")
    return all(p == "*" or label == p for label, p in pairs)

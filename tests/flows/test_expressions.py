"""The `when:` language: CEL-style operators, missing names, templates, and what it refuses."""

from __future__ import annotations

import pytest

from keepui_engine.core.errors import FlowError
from keepui_engine.flows.expressions import MISSING, evaluate, render
from keepui_engine.flows.expressions import test as holds

CTX = {
    "params": {"query": "auth", "margin_high": 0.15, "tags": ["a=1"], "facets": ["b=2", "c=3"]},
    "search": {"margin": 0.2, "count": 3, "results": [{"id": "x"}]},
    "budget": {"remaining": 2},
}


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("search.margin > params.margin_high", True),
        ("search.margin > params.margin_high && budget.remaining > 2", False),
        ("search.margin < 0.1 || budget.remaining > 0", True),
        ("!params.query", False),
        ("!params.missing", True),
        ("search.count != 3", False),
        ("size(params.facets) > 1", True),
        ("'b=2' in params.facets", True),
        ("params.nothing > 1", False),  # missing compares false, never raises
        ("params.query == 'a && b'", False),  # operators inside strings are left alone
        ("nosuch.deep.path == null", False),
    ],
)
def test_predicates(expr: str, expected: bool) -> None:
    assert holds(expr, CTX) is expected


def test_values_and_functions() -> None:
    assert evaluate("params.facets[0:1]", CTX) == ["b=2"]
    assert evaluate("union(params.tags, params.facets[0:1], params.tags)", CTX) == ["a=1", "b=2"]
    assert evaluate("params.facets[5]", CTX) is MISSING
    assert evaluate("params.baseline or search.results", CTX) == [{"id": "x"}]
    assert evaluate("budget.remaining + 1", CTX) == 3


def test_templates_keep_type_when_whole_and_interpolate_when_mixed() -> None:
    assert render("{search.results}", CTX) == [{"id": "x"}]
    assert render({"q": "{params.query}", "n": ["{search.count}"]}, CTX) == {
        "q": "auth",
        "n": [3],
    }
    assert render("margin {search.margin} for {params.query}", CTX) == "margin 0.2 for auth"
    assert render("{params.absent}", CTX) is None
    assert render("x{params.absent}y", CTX) == "xy"


@pytest.mark.parametrize(
    "expr",
    [
        "__import__('os')",
        "params.__class__",
        "(lambda: 1)()",
        "open('x')",
        "[x for x in params]",
        "params.query.upper()",
        "a = 1",
    ],
)
def test_refuses_anything_but_the_small_language(expr: str) -> None:
    with pytest.raises(FlowError):
        evaluate(expr, CTX)

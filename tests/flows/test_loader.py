"""Parsing state docs: the shipped ones load, and malformed ones name what is wrong."""

from __future__ import annotations

import pytest

from keepui_engine.core.errors import FlowError
from keepui_engine.flows.loader import builtin_names, builtin_text, parse


def test_every_shipped_doc_parses_with_a_description() -> None:
    names = builtin_names()
    assert {"query-resolve", "query-branch", "query-explore", "find-deep"} <= set(names)
    for name in names:
        doc = parse(builtin_text(name) or "", name)
        assert doc.rules and doc.description, name


def test_rule_forms() -> None:
    doc = parse(
        """
match: all
rules:
  - {id: a, do: find, with: {query: x}}
post:
  - {when: "a.count > 0", then: {state: other, with: {n: 1}}}
  - return: {status: stopped, with: {reason: r}}
""",
        "t",
    )
    assert doc.match == "all" and doc.rules[0].args == {"query": "x"}
    assert doc.post[0].then == "other" and doc.post[0].then_with == {"n": 1}
    assert doc.post[1].returns == "stopped" and doc.post[1].return_with == {"reason": "r"}


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("match: [", "not valid YAML"),
        ("- a\n- b", "must be a mapping"),
        ("match: sometimes\nrules: [{return: done}]", "match must be"),
        ("rules: []", "must be a list of rules"),
        ("rules: [{when: x}]", "needs `do:`, `then:` or `return:`"),
        ("rules: [{do: find, frobnicate: 1}]", "unknown key"),
        ("rules: [{then: a, return: done}]", "not both"),
        ("rules: [{return: finished}]", "return status"),
        ("rules: [{when: 'a ===', return: done}]", "cannot parse"),
        ("rules: [{return: done}]\npost: [{return: done}]", "only follows"),
    ],
)
def test_malformed_docs_name_the_problem(text: str, needle: str) -> None:
    with pytest.raises(FlowError) as info:
        parse(text, "broken")
    assert needle in info.value.message and "broken" in info.value.message

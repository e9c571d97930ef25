"""A Mermaid `stateDiagram-v2` of state docs and their transitions, as keep draws its flows."""

from __future__ import annotations

import re

from keepui_engine.flows.model import FlowDoc

# What starts each flow from outside, shown on the edge from [*].
ENTRIES = {
    "after-write": "put()",
    "find-deep": "find(deep)",
    "get-context": "get()",
    "query-resolve": "query",
}
_SLUG = re.compile(r"[^A-Za-z0-9]+")


def node(name: str) -> str:
    """A Mermaid state id for a doc name (`query-resolve` -> `query_resolve`)."""
    return _SLUG.sub("_", name).strip("_")


def _label(text: str | None) -> str:
    """An edge label: one line, no colon (Mermaid reads `:` as the label separator)."""
    return " ".join((text or "").split()).replace(":", "∶")


def transitions(docs: list[FlowDoc]) -> list[tuple[str, str, str]]:
    """(from, to, condition) of every `then:` and every non-error `return:` of the docs; a
    return goes to `NAME_STATUS` (plus `_REASON` when it stops with a reason)."""
    out: list[tuple[str, str, str]] = []
    for doc in docs:
        for rule in (*doc.rules, *doc.post):
            if rule.then:
                out.append((node(doc.name), node(rule.then), _label(rule.when)))
            elif rule.returns and rule.returns != "error":
                reason = (rule.return_with or {}).get("reason")
                end = f"{node(doc.name)}_{rule.returns}"
                if rule.returns == "stopped" and isinstance(reason, str) and "{" not in reason:
                    end += "_" + node(reason)
                out.append((node(doc.name), end, _label(rule.when)))
    return out


def mermaid(docs: list[FlowDoc]) -> str:
    """The diagram: end states declared with their labels, then entries, then transitions."""
    edges = transitions(docs)
    names = {node(d.name) for d in docs}
    lines = ["stateDiagram-v2"]
    for end in sorted({to for _, to, _ in edges if to not in names}):
        owner = next(n for n in sorted(names, key=len, reverse=True) if end.startswith(n + "_"))
        rest = end[len(owner) + 1 :]
        status, _, reason = rest.partition("_")
        label = status + (f"∶ {reason.replace('_', ' ')}" if reason else "")
        lines.append(f"    {end} : {label}")
    lines.append("")
    seen: set[tuple[str, str, str]] = set()
    for doc in sorted(docs, key=lambda d: d.name):
        n = node(doc.name)
        if doc.name in ENTRIES:
            lines.append(f"    [*] --> {n} : {ENTRIES[doc.name]}")
        for edge in edges:
            if edge[0] == n and edge not in seen:
                seen.add(edge)
                lines.append(f"    {edge[0]} --> {edge[1]}" + (f" : {edge[2]}" if edge[2] else ""))
    return "\n".join(lines) + "\n"

"""after-write: the `.state/after-write` doc decides what background work a write queues.

At write time (in the put's transaction) the doc runs once per written version, through the
storage-free flow runtime, with facts about the write as its params; its `do:` actions queue
tasks that the queue worker runs later: `summarize` (a summary task) and `links` (URLs and
`[[id]]` mentions in the text become `references` edges). The store's `.state/after-write`
wins over the shipped one (which reproduces what a put queued before: a summary for a long new
text); a stored doc that does not parse is ignored for the shipped one.
"""

from __future__ import annotations

import functools
import re
from datetime import datetime
from typing import TYPE_CHECKING, Any

from keepui_engine.core.errors import FlowError
from keepui_engine.store.tables import documents, pending

if TYPE_CHECKING:
    from keepui_engine.flows.model import FlowDoc
    from keepui_engine.ops.ports import Operations
    from keepui_engine.store.tables.documents import Row

NAME = "after-write"
DOC_ID = ".state/after-write"
ACTIONS = {"summarize": "summarize", "links": "links"}
ACTION_ARGS = {"summarize": ("id", "version"), "links": ("id", "version")}
LINK = re.compile(r"\[\[([^\[\]\n]{1,512})\]\]|(https?://[^\s<>\"')\]]+)")


def has_links(text: str | None) -> bool:
    """Whether a text mentions a URL or a `[[id]]`."""
    return bool(text) and LINK.search(text or "") is not None


def mentions(text: str) -> list[tuple[str, bool]]:
    """What a text mentions, in order: (id, True) for `[[id]]`, (url, False) for a URL
    (trailing punctuation dropped)."""
    out: list[tuple[str, bool]] = []
    for m in LINK.finditer(text):
        explicit = m.group(1) is not None
        target = (m.group(1) or m.group(2) or "").strip()
        if not explicit:
            target = target.rstrip(".,;:!?")
        if target and all(target != t for t, _ in out):
            out.append((target, explicit))
    return out


@functools.lru_cache(maxsize=8)
def _parse(text: str) -> FlowDoc:
    from keepui_engine.flows.loader import parse

    return parse(text, NAME)


def load(engine: Operations) -> FlowDoc:
    """The store's after-write doc, or the shipped one."""
    from keepui_engine.flows.loader import builtin_doc

    head = documents.heads(engine.store.con, [DOC_ID]).get(DOC_ID)
    if head is not None and head.text:
        try:
            return _parse(head.text)
        except FlowError:
            pass
    doc = builtin_doc(NAME)
    assert doc is not None
    return doc


def check(doc: FlowDoc) -> FlowDoc:
    """Raise FlowError for a rule that runs an action after-write does not have."""
    for n, rule in enumerate((*doc.rules, *doc.post), 1):
        if rule.do is None:
            continue
        known = ACTION_ARGS.get(rule.do)
        if known is None:
            raise FlowError(
                f"{DOC_ID}, rule {rule.id or n}: after-write can run "
                f"{', '.join(sorted(ACTIONS))}, not {rule.do!r}."
            )
        unknown = sorted(set(rule.args) - set(known))
        if unknown:
            raise FlowError(
                f"{DOC_ID}, rule {rule.id or n}: {rule.do} reads {', '.join(known)}, "
                f"not {', '.join(unknown)}."
            )
    return doc


def facts(row: Row, before: Row | None, needs_summary: bool) -> dict[str, Any]:
    """What the doc's rules test about one write."""
    return {
        "id": row.id,
        "version": row.version,
        "needs_summary": needs_summary,
        "text_changed": before is None or before.content_hash != row.content_hash,
        "tags_changed": before is None or before.tags != row.tags,
        "long": len((row.text or "").strip()) > 0 and len(row.text or "") > 500,
        "has_links": not row.id.startswith(".") and has_links(row.text),  # not system docs
        "source": row.sys.get("_source"),
        "content_type": row.sys.get("_content_type"),
        "query": None,
    }


def run(engine: Operations, writes: list[tuple[Row, Row | None, bool]], now: datetime) -> None:
    """Run the after-write doc for each (new row, previous head, needs summary) and queue what
    its actions ask for (inside the caller's transaction)."""
    if not writes:
        return
    from keepui_engine.flows.runtime import run_flow

    doc = load(engine)
    con = engine.store.con

    def act(action: str, args: dict[str, Any]) -> dict[str, Any]:
        task = ACTIONS.get(action)
        if task is None:
            raise FlowError(f"after-write can run {', '.join(sorted(ACTIONS))}, not {action!r}.")
        version = args.get("version")
        tid = pending.enqueue(
            con, task, str(args["id"]), None if version is None else int(version), {}, now
        )
        return {"queued": tid, "task": task}

    for row, before, summary in writes:
        run_flow(
            doc,
            facts(row, before, summary),
            budget=1,
            load_flow=lambda name: doc,
            run_action=act,
        )

"""after-write as a state doc, the links task, and flow write actions (fake embedder)."""

from __future__ import annotations

from keepui_engine import Workbench
from keepui_engine.flows import loader
from keepui_engine.queue.after_write import mentions

LONG = "A long note about the release. " * 40  # longer than summary_max_chars


def queued(wb: Workbench) -> dict[str, int]:
    counts = wb.pending()["counts"]
    return {task: states.get("queued", 0) for task, states in counts.items()}


def test_the_shipped_doc_queues_what_a_put_queued_before(wb: Workbench) -> None:
    wb.put("short", id="s")
    assert queued(wb) == {}
    wb.put(LONG, id="long")
    assert queued(wb) == {"summarize": 1}
    wb.put(LONG, id="long", summary="my own summary")  # a user's summary: nothing queued
    assert queued(wb) == {"summarize": 1}


def test_an_edited_after_write_doc_changes_what_is_queued(wb: Workbench) -> None:
    shipped = loader.builtin_text("after-write")
    assert shipped is not None
    quiet = shipped.replace('when: "params.needs_summary"', 'when: "params.needs_summary && false"')
    wb.put(quiet, id=".state/after-write")
    wb.put(LONG, id="long")
    assert queued(wb) == {}


def test_mentions_become_references_edges(wb: Workbench) -> None:
    wb.put("The target note", id="target")
    wb.put("See [[target]], [[missing one]] and https://example.org/page.", id="src")
    assert queued(wb) == {"links": 1}
    wb.drain()
    assert wb.get("src").edges == {"references": ["missing one", "target"]}
    assert wb.get("target").edges == {"referenced_by": ["src"]}
    assert wb.get("missing one").text == ""  # a stub for the [[id]] that named nothing
    wb.put("Now only [[target]]", id="src")
    wb.drain()
    assert wb.get("src").edges == {"references": ["target"]}
    wb.delete("src", purge=True)
    assert wb.get("target").edges == {}


def test_mentions_parse_ids_and_urls() -> None:
    text = "a [[x y]] b https://e.org/p?q=1). and [[x y]] again, http://h/."
    assert mentions(text) == [("x y", True), ("https://e.org/p?q=1", False), ("http://h/", False)]


FILER = """\
match: sequence
rules:
  - id: search
    do: find
    with: {query: "{params.query}", limit: 3}
  - id: file
    do: put
    with: {text: "Looked up {params.query}", id: lookup, tags: ["type=lookup"]}
  - id: mark
    do: tag
    with: {id: a, tags: ["seen=yes"]}
  - id: again
    do: get
    with: {id: a}
  - id: redo
    do: summarize
    with: {id: a}
  - return: {status: done, with: {reason: filed, seen: "{again.tags}"}}
"""


def test_write_actions_apply_after_the_tick(wb: Workbench) -> None:
    wb.put("OAuth2 tokens for the gateway", id="a")
    result = wb.run_flow("filer", {"query": "tokens"}, doc=FILER)
    assert result.status == "done"
    assert "seen" not in result.data["seen"]  # the tag is applied after the tick
    assert [a["action"] for a in result.applied] == ["put", "tag", "summarize"]
    assert all("result" in a for a in result.applied)
    assert wb.get("lookup").tags["type"] == "lookup"
    assert wb.get("a").tags["seen"] == "yes"
    assert queued(wb).get("summarize") == 1


def test_a_failed_write_action_is_reported_not_raised(wb: Workbench) -> None:
    doc = FILER.replace("with: {id: a, tags", "with: {id: nosuch, tags")
    wb.put("OAuth2 tokens for the gateway", id="a")
    result = wb.run_flow("filer", {"query": "tokens"}, doc=doc)
    failed = [a for a in result.applied if "error" in a]
    assert [a["action"] for a in failed] == ["tag"] and "nosuch" in failed[0]["error"]

"""Contextual summarization: which related summaries an LLM summarizer gets (+20% per tag)."""

from __future__ import annotations

from keepui_engine import PutSpec, Workbench
from keepui_engine.work.context import rank


def test_each_extra_shared_tag_adds_twenty_percent() -> None:
    similarity = {"a": 0.50, "b": 0.45, "c": 0.40, "d": 0.90}
    shared = {"a": 1, "b": 2, "c": 3, "d": 0}
    got = rank(similarity, shared)
    assert [i for i, _ in got] == ["c", "b", "a"]  # d shares no tag: never context
    assert dict(got) == {"a": 0.50, "b": 0.45 * 1.2, "c": 0.40 * 1.4}
    many = {f"x{i}": 0.1 * i for i in range(10)}
    assert len(rank(many, dict.fromkeys(many, 1))) == 5


def test_context_comes_from_items_sharing_a_user_tag(wb: Workbench) -> None:
    from keepui_engine.work.context import context_for

    wb.put_many(
        [
            PutSpec("tides and boats in the harbour", id="me", tags=["topic=sea", "kind=note"]),
            PutSpec("tides boats harbour wall", id="close", tags=["topic=sea"], summary="S-close"),
            PutSpec("mountain glacier", id="far", tags=["topic=sea", "kind=note"], summary="S-far"),
            PutSpec("tides and boats again", id="untagged", summary="S-untagged"),
        ]
        + [
            PutSpec(f"sea note {i}", id=f"n{i}", tags=["topic=sea"], summary=f"S{i}")
            for i in range(6)
        ]
    )
    engine = wb._engine  # noqa: SLF001 - the engine-side selection is what is tested
    assert engine is not None
    got = context_for(engine.store.con, engine.store.index, "me")
    assert len(got) == 5 and "S-untagged" not in got
    assert "S-close" in got
    wb.put("a note with no tags", id="lonely")
    assert context_for(engine.store.con, engine.store.index, "lonely") == []

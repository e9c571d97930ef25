"""Search history persisted in the store, and comparing result lists (fake embedder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from keepui_engine import (
    FindQuery,
    SearchRecord,
    UsageError,
    Workbench,
    compare_results,
    open_workbench,
)


def test_record_and_list_newest_first(wb: Workbench) -> None:
    first = wb.record_search(FindQuery("storage", ["topic=db"], 5, mode="bm25"), ["a", "b"])
    second = wb.record_search(FindQuery("search"), [])
    assert second.id > first.id
    history = wb.searches()
    assert [r.id for r in history] == [second.id, first.id]
    assert history[1].q == FindQuery("storage", ["topic=db"], 5, mode="bm25")
    assert history[1].ids == ["a", "b"]
    assert history[1].at.endswith("Z") or "T" in history[1].at
    assert wb.searches(limit=1) == [history[0]]
    assert SearchRecord.from_dict(history[1].to_dict()) == history[1]


def test_history_persists_across_opens(store_dir: Path) -> None:
    with open_workbench(store_dir, own=True) as bench:
        bench.record_search(FindQuery("kept"), ["x"])
    with open_workbench(store_dir, own=True) as bench:
        assert [r.q.query for r in bench.searches()] == ["kept"]


def test_history_over_the_socket(store_dir: Path) -> None:
    owner = open_workbench(store_dir, own=True)
    try:
        owner.serve()
        client = open_workbench(store_dir)
        rec = client.record_search(FindQuery("remote", since="P7D"), ["a"])
        assert rec.q.since == "P7D"
        assert owner.searches()[0] == rec
        assert client.searches() == owner.searches()
    finally:
        owner.close()


def test_bad_limit(wb: Workbench) -> None:
    with pytest.raises(UsageError):
        wb.searches(limit=0)


def test_compare_results() -> None:
    cmp = compare_results(["a", "b", "c", "d"], ["b", "a", "c", "e"])
    assert cmp.entered == ["e"]
    assert cmp.left == ["d"]
    assert cmp.moved == [("b", 2, 1), ("a", 1, 2)]
    assert cmp.kept == ["c"]
    assert compare_results([], []).entered == []

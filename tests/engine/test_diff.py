"""Version diffs as data: line alignment, word spans, tags, offsets and the facade."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support import make_fake_store

from keepui_engine import NotFound, VersionDiff, Workbench, open_workbench
from keepui_engine.ops.diff import (
    PAIR_CELLS,
    PAIR_WORK,
    diff_lines,
    diff_texts,
    pair_lines,
    word_spans,
)


@pytest.fixture
def compared(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per pair of lines compared for pairing (the diff's work, counted)."""
    import keepui_engine.ops.diff as diff_module

    calls: list[int] = []
    similar = diff_module._similar

    def counting(matcher: Any) -> float | None:
        calls.append(1)
        return similar(matcher)

    monkeypatch.setattr(diff_module, "_similar", counting)
    return calls


@pytest.fixture
def store_dir(backend_dir: Path) -> Path:
    """The tests here that use store_dir or wb run on DuckDB and on PostgreSQL."""
    return backend_dir


def test_word_spans_mark_only_the_changed_words() -> None:
    left, right = word_spans("the quick brown fox", "the slow brown fox jumps")
    assert [("the quick brown fox"[a:b]) for a, b in left] == ["quick"]
    assert [("the slow brown fox jumps"[a:b]) for a, b in right] == ["slow", " jumps"]


def test_identical_lines_have_no_spans() -> None:
    assert word_spans("same line", "same line") == ([], [])


def test_rows_align_equal_change_delete_insert() -> None:
    rows = diff_lines(["a", "b one", "c", "d"], ["a", "b two", "c", "e", "f"])
    kinds = [(r.kind, r.left_no, r.right_no) for r in rows]
    assert kinds == [
        ("equal", 1, 1),
        ("change", 2, 2),
        ("equal", 3, 3),
        ("delete", 4, None),  # `d` and `e` have nothing in common: no edit of one another
        ("insert", None, 4),
        ("insert", None, 5),
    ]
    change = rows[1]
    assert change.left == "b one" and change.right == "b two"
    assert change.left_spans == [[2, 5]] and change.right_spans == [[2, 5]]
    assert rows[5].left == "" and rows[5].right == "f"


def test_a_replaced_block_pairs_lines_by_similarity_not_position() -> None:
    old = ["# Notes", "Section 3", "Body of section three."]
    new = ["# Notes", "New paragraph added in version 4", "Section 3 revised", "Body of section 3."]
    rows = diff_lines(old, new)
    assert [(r.kind, r.left, r.right) for r in rows] == [
        ("equal", "# Notes", "# Notes"),
        ("insert", "", "New paragraph added in version 4"),
        ("change", "Section 3", "Section 3 revised"),
        ("change", "Body of section three.", "Body of section 3."),
    ]
    assert (rows[1].right_no, rows[2].left_no, rows[2].right_no) == (2, 2, 3)
    assert rows[2].left_spans == [] and rows[2].right_spans == [[9, 17]]  # " revised"
    assert rows[1].left_spans == rows[1].right_spans == []  # an added line has no word marks


def test_unrelated_lines_stand_alone_removed_then_added() -> None:
    rows = diff_lines(
        ["keep", "Section 3", "end"], ["keep", "New paragraph added in version 4", "end"]
    )
    assert [(r.kind, r.left_no, r.right_no) for r in rows] == [
        ("equal", 1, 1), ("delete", 2, None), ("insert", None, 2), ("equal", 3, 3),
    ]  # fmt: skip


def test_pairing_keeps_order_and_the_best_total() -> None:
    old = ["alpha beta gamma", "one two three four", "red green blue"]
    new = ["red green blue yellow", "one two three four five", "something else entirely"]
    # `red green blue` is like the first new line, but pairing it would leave out the better
    # pair of `one two three four`, which comes before it
    assert pair_lines(old, new) == [(1, 1)]
    # crossed pairs cannot both be taken: the closer one is
    assert pair_lines(["a b c d", "w x y z"], ["w x y z", "a b c d ! ! !"]) == [(1, 0)]
    assert pair_lines(["v1"], ["v3"]) == [(0, 0)]  # short lines compare by characters too
    assert pair_lines(["apple"], ["apples"]) == [(0, 0)]
    assert pair_lines(["d"], ["e"]) == [] and pair_lines([], ["x"]) == []


def test_a_large_block_pairs_by_position_within_its_bound(compared: list[int]) -> None:
    n = 200  # 200 x 200 pairs: past PAIR_CELLS, so line k meets only line k
    assert n * n > PAIR_CELLS
    old = [f"row {k} of the old table, cell a" for k in range(n)]
    new = [
        "a new first line, nothing like the others",
        *(f"row {k} of the old table, cell b" for k in range(n)),
    ]
    pairs = pair_lines(old, new)
    # shifted by one, line k faces row k - 1: still similar, so pairs, but off by one (the
    # price of the bound); an exhaustive search would have paired row k with row k
    assert pairs[:2] == [(1, 1), (2, 2)] and len(pairs) == n - 1
    assert len(compared) <= n  # line k against line k only: linear, not n x n
    small = pair_lines(old[:20], new[:21])
    assert small == [(k, k + 1) for k in range(20)]  # within the bound: by similarity


def test_long_lines_bound_the_work_too() -> None:
    words = " ".join(f"w{k}" for k in range(800))
    old = [words, words + " tail"]
    new = [words + " new", words]
    assert len(words.split()) * 2 * len(words.split()) * 2 > PAIR_WORK
    assert pair_lines(old, new) == [(0, 0), (1, 1)]  # by position: past PAIR_WORK


def test_pure_deletion_and_insertion() -> None:
    rows = diff_texts("keep\ndrop me\nkeep too", "keep\nkeep too\nnew line")
    assert [r.kind for r in rows] == ["equal", "delete", "equal", "insert"]
    assert rows[1].left_no == 2 and rows[1].right_no is None
    assert rows[3].right_no == 3


def test_empty_texts() -> None:
    assert diff_texts("", "") == []
    assert [r.kind for r in diff_texts("", "one\ntwo")] == ["insert", "insert"]


def test_version_diff_defaults_to_previous_vs_current(wb: Workbench) -> None:
    wb.put("line one\nline two\nline three", id="doc", tags=["topic=a"])
    wb.put("line one\nline 2\nline three\nline four", id="doc", tags=["topic=b"])
    diff = wb.diff("doc")
    assert isinstance(diff, VersionDiff)
    assert (diff.left_version, diff.right_version) == (1, 2)
    assert (diff.left_offset, diff.right_offset) == (1, 0)
    assert (diff.added, diff.removed, diff.changed) == (1, 0, 1)
    assert [r.kind for r in diff.tags] == ["change"]
    assert diff.tags[0].left == "topic=a" and diff.tags[0].right == "topic=b"
    assert VersionDiff.from_dict(diff.to_dict()) == diff


def test_version_diff_offsets_and_addresses(wb: Workbench) -> None:
    for text in ("v1", "v2", "v3"):
        wb.put(text, id="doc")
    oldest_vs_current = wb.diff("doc", -1, 0)
    assert (oldest_vs_current.left_version, oldest_vs_current.right_version) == (1, 3)
    assert wb.diff("doc@V{2}").left_version == 1
    backwards = wb.diff("doc", 0, 2)
    assert backwards.rows[0].left == "v3" and backwards.rows[0].right == "v1"
    same = wb.diff("doc", 1, 1)
    assert [r.kind for r in same.rows] == ["equal"] and same.changed == 0


def test_version_diff_not_found(wb: Workbench) -> None:
    wb.put("only one", id="solo")
    with pytest.raises(NotFound, match="only one version"):
        wb.diff("solo")
    with pytest.raises(NotFound):
        wb.diff("missing")
    wb.put("now two", id="solo")
    with pytest.raises(NotFound, match="version"):
        wb.diff("solo", 5, 0)


def test_diff_through_the_socket(store_dir: Path) -> None:
    owner = open_workbench(store_dir, own=True)
    try:
        owner.put("alpha\nbeta", id="doc")
        owner.put("alpha\ngamma", id="doc")
        owner.serve()
        client = open_workbench(store_dir)
        assert client.diff("doc") == owner.diff("doc")
    finally:
        owner.close()


def test_diff_of_two_5000_line_texts_compares_only_changed_lines(compared: list[int]) -> None:
    """The work grows with the changes, not the length: each line pair compared for pairing
    is one inside a changed block (a speed claim for benchmarks, a bound on work here)."""
    left = [f"line {i} of the long document with some words" for i in range(5000)]
    right = list(left)
    for i in range(0, 5000, 50):
        right[i] = right[i].replace("some", "other")
    del right[100:110]
    right[2000:2000] = ["inserted line"] * 5
    rows = diff_lines(left, right)
    assert sum(r.kind == "change" for r in rows) >= 90
    assert len(compared) <= 200  # 100 one-line changes (and the blocks beside the cuts)


def test_summary_only_store_diffs_summaries(tmp_path: Path) -> None:
    store = make_fake_store(tmp_path / "s", keep_content=False)
    with open_workbench(store, own=True) as bench:
        bench.put("first words", id="d")
        bench.put("second words", id="d")
        diff = bench.diff("d")
    assert diff.rows[0].kind == "change" and diff.rows[0].right == "second words"

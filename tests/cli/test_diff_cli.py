"""`keepui diff`: unified text, one JSON document, version arguments and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from keepui.cli import main
from keepui.cli.diff import parse_version, unified
from keepui_engine import UsageError, open_workbench
from keepui_engine.ops.diff import diff_texts


@pytest.fixture
def store_dir(backend_dir: Path) -> Path:
    """The tests here that use store_dir run on DuckDB and on PostgreSQL."""
    return backend_dir


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exit_info.value.code or 0), out, err


@pytest.fixture
def store(store_dir: Path) -> Path:
    with open_workbench(store_dir, own=True) as wb:
        wb.put("line one\nline two\nline three", id="doc", tags=["topic=a"])
        wb.put("line one\nline 2\nline three\nline four", id="doc", tags=["topic=b"])
        wb.put("line one\nline 2\nline three\nline four\nline five", id="doc", tags=["topic=b"])
        wb.put("alone", id="solo")
    return store_dir


def test_default_is_previous_vs_current(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "diff", "doc", "--store", str(store))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("--- doc@V{1}\tv2\t") and lines[1].startswith("+++ doc\tv3\t")
    assert "tags:" not in out
    assert lines[2:] == ["@@ -2,3 +2,4 @@", " line 2", " line three", " line four", "+line five"]


def test_explicit_versions_and_tags(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "diff", "doc", "-1", "0", "--store", str(store))
    assert code == 0
    assert "tags:\n-topic=a\n+topic=b\n" in out
    assert "-line two\n+line 2\n" in out
    code, same, _ = run(capsys, "diff", "doc@V{2}", "--store", str(store))
    code2, explicit, _ = run(capsys, "diff", "doc", "2", "0", "--store", str(store))
    assert code == code2 == 0 and same == explicit
    code, by_name, _ = run(capsys, "diff", "doc", "doc@V{2}", "V{0}", "--store", str(store))
    assert code == 0 and by_name == explicit


def test_json_is_one_document(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "diff", "doc", "2", "1", "--json", "--store", str(store))
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc["schema"] == 1 and doc["id"] == "doc"
    assert (doc["left_version"], doc["right_version"]) == (1, 2)
    assert (doc["added"], doc["removed"], doc["changed"]) == (1, 0, 1)
    change = next(r for r in doc["rows"] if r["kind"] == "change")
    assert change["left"] == "line two" and change["right"] == "line 2"
    assert change["left_spans"] == [[5, 8]] and change["right_spans"] == [[5, 6]]
    assert [r["kind"] for r in doc["tags"]] == ["change"]


def test_no_differences_note(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "diff", "doc", "0", "0", "--store", str(store))
    assert code == 0 and "@@" not in out and "no differences" in err


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["diff", "missing"], 2),
        (["diff", "solo"], 2),
        (["diff", "doc", "9", "0"], 2),
        (["diff", "doc", "abc"], 1),
        (["diff", "doc", "other@V{1}"], 1),
        (["diff", "doc", "--context", "-1"], 1),
        (["diff"], 1),
    ],
)
def test_errors(
    store: Path, capsys: pytest.CaptureFixture[str], args: list[str], code: int
) -> None:
    got, out, err = run(capsys, *args, "--store", str(store))
    assert got == code and out == ""
    assert err.startswith("Error:") and "Traceback" not in err


def test_parse_version_forms() -> None:
    assert parse_version(None, "d") is None
    assert [parse_version(x, "d") for x in ("1", "-1", "V{2}", "@V{3}", "d@V{4}", "v{0}")] == [
        1,
        -1,
        2,
        3,
        4,
        0,
    ]
    with pytest.raises(UsageError):
        parse_version("x@V{1}", "d")


def test_unified_hunks_keep_context_apart() -> None:
    left = [f"l{i}" for i in range(20)]
    right = list(left)
    right[1], right[18] = "changed 1", "changed 18"
    lines = unified(diff_texts("\n".join(left), "\n".join(right)), context=2)
    assert [x for x in lines if x.startswith("@@")] == ["@@ -1,4 +1,4 @@", "@@ -17,4 +17,4 @@"]
    assert unified(diff_texts("", "new"), 3) == ["@@ -0,0 +1,1 @@", "+new"]

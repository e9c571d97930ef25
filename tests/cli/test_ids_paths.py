"""Ids and paths through the real CLI: address syntax refused in ids, a put file's path accepted
where an id is, and a store's own files never put (issue 22, points 5-7)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support import make_fake_store


def cli(store: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m keepui ARGS --store STORE` in `cwd`, output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "keepui", *args, "--store", str(store)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def ok(store: Path, *args: str, cwd: Path | None = None) -> str:
    got = cli(store, *args, cwd=cwd)
    assert got.returncode == 0, got.stderr
    return got.stdout


def got_json(store: Path, *args: str, cwd: Path | None = None) -> Any:
    return json.loads(ok(store, *args, "--json", cwd=cwd))


@pytest.mark.parametrize("bad", ["keys@V{1}", "keys@P{2}", "keys@v{-1}", "a@V{1}b"])
def test_put_refuses_an_id_holding_address_syntax(store_dir: Path, bad: str) -> None:
    ok(store_dir, "put", "first", "-i", "keys")
    ok(store_dir, "put", "second", "-i", "keys")
    got = cli(store_dir, "put", "a shadow", "-i", bad)
    assert got.returncode == 1, got.stderr
    assert f"id {bad!r} contains" in got.stderr and "reads as an address" in got.stderr
    assert "Choose an id without @V{ or @P{" in got.stderr
    assert "other characters are allowed except quotes" in got.stderr
    assert got_json(store_dir, "get", "keys@V{1}")["text"] == "first"  # not shadowed
    assert [i["id"] for i in got_json(store_dir, "list")["items"]] == ["keys"]


def test_put_file_with_an_address_id_is_refused(store_dir: Path, tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_text("a file put under a bad id\n")
    got = cli(store_dir, "put", str(note), "-i", "note@V{1}")
    assert got.returncode == 1 and "'note@V{1}' contains '@V{'" in got.stderr


def test_tag_refuses_a_version_address(store_dir: Path) -> None:
    ok(store_dir, "put", "first", "-i", "keys")
    ok(store_dir, "put", "second", "-i", "keys")
    got = cli(store_dir, "tag", "keys@V{1}", "-t", "status=old")
    assert got.returncode == 1, got.stderr
    assert "'keys@V{1}' is the address of a version or part of 'keys'" in got.stderr
    assert "give 'keys'" in got.stderr and "ids cannot contain @V{ or @P{" in got.stderr
    assert "status" not in got_json(store_dir, "get", "keys")["tags"]


def test_import_refuses_an_address_id_with_its_line(store_dir: Path, tmp_path: Path) -> None:
    lines = [{"text": "fine", "id": "fine"}, {"text": "bad", "id": "keys@P{1}"}]
    dump = tmp_path / "in.jsonl"
    dump.write_text("".join(json.dumps(x) + "\n" for x in lines))
    got = cli(store_dir, "import", str(dump))
    assert got.returncode == 1, got.stderr
    assert "line 2: id 'keys@P{1}' contains '@P{'" in got.stderr
    assert "Choose an id without @V{ or @P{" in got.stderr and "nothing was imported" in got.stderr
    assert cli(store_dir, "get", "fine").returncode == 2


def test_commands_take_the_path_of_a_put_file(store_dir: Path, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "x.md").write_text("# Plan\n\nThe first plan.\n")
    put = got_json(store_dir, "put", "docs/x.md", cwd=tmp_path)
    uri = str(put["id"])
    assert uri == (docs / "x.md").resolve().as_uri()
    (docs / "x.md").write_text("# Plan\n\nThe second plan.\n")
    ok(store_dir, "put", str(docs / "x.md"))
    assert got_json(store_dir, "get", "./docs/x.md", cwd=tmp_path)["id"] == uri
    assert "second plan" in str(got_json(store_dir, "get", str(docs / "x.md"))["text"])
    assert "first plan" in str(got_json(store_dir, "get", "x.md@V{1}", cwd=docs)["text"])
    diff = ok(store_dir, "diff", "docs/x.md", cwd=tmp_path)
    assert "-The first plan." in diff and "+The second plan." in diff
    tagged = got_json(store_dir, "tag", "../docs/x.md", "-t", "status=read", cwd=docs)
    assert tagged["id"] == uri and tagged["version"] == 3
    analyzed = ok(store_dir, "analyze", "./docs/x.md", cwd=tmp_path)
    assert uri in analyzed
    reverted = got_json(store_dir, "del", "docs/x.md", cwd=tmp_path)
    assert (reverted["id"], reverted["action"], reverted["version"]) == (uri, "reverted", 2)


def test_a_path_not_put_names_the_file_id_it_tried(store_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "y.md").write_text("never put\n")
    for arg in ["./docs/y.md", "docs/gone.pdf"]:
        got = cli(store_dir, "get", arg, cwd=tmp_path)
        assert got.returncode == 2, got.stderr
        tried = (tmp_path / arg).resolve().as_uri()
        assert f"no document with id {arg!r}, nor with {tried!r}" in got.stderr
    plain = cli(store_dir, "get", "no-such-id", cwd=tmp_path)
    assert plain.returncode == 2 and "file://" not in plain.stderr


def test_put_dir_leaves_out_the_store_it_holds(tmp_path: Path) -> None:
    docs = make_fake_store(tmp_path / "docs")  # --store is the documents folder
    (docs / "a.md").write_text("alpha notes\n")
    (docs / "sub").mkdir()
    (docs / "sub" / "b.txt").write_text("beta notes\n")
    inner = make_fake_store(docs / "sub" / "old-store")  # another store, below the folder
    (inner / "c.txt").write_text("a file inside another store\n")
    for _ in range(2):  # the second time the store's lock, queue and vectors exist too
        got = cli(docs, "put", str(docs))
        assert got.returncode == 0, got.stderr
        assert got.stderr.count("  skipped ") == 2 and "FAILED" not in got.stderr
        assert f"skipped {docs}: holds a keepui store: its files (keepui.*" in got.stderr
        assert f"skipped {inner}: a keepui store (never put)" in got.stderr
    ids = [i["id"] for i in got_json(docs, "list", "--all", "--sort", "id")["items"]]
    assert ids == [(docs / "a.md").as_uri(), (docs / "sub" / "b.txt").as_uri()]


def test_put_dir_skips_the_store_inside_it(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    store = make_fake_store(root / "store")
    (root / "n.md").write_text("a note\n")
    got = cli(store, "put", str(root), "--json")
    assert got.returncode == 0, got.stderr
    report = json.loads(got.stdout)
    assert [e["source"] for e in report["skipped"]] == [str(store)]
    assert [e["id"] for e in report["indexed"]] == [(root / "n.md").as_uri()]

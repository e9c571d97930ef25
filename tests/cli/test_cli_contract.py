"""The CLI contract through real subprocesses: JSON shapes, stdout vs stderr, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support import run_cli as run


@pytest.fixture
def store_dir(backend_dir: Path) -> Path:
    """The tests here that use store_dir run on DuckDB and on PostgreSQL."""
    return backend_dir


HIT_KEYS = {
    "id",
    "version",
    "score",
    "similarity",
    "decay",
    "summary",
    "tags",
    "created",
    "updated",
}


def test_put_get_find_round_trip(store_dir: Path) -> None:
    put = run(store_dir, "put", "Decided to store notes in DuckDB", "-t", "topic=storage")
    assert put.returncode == 0, put.stderr
    doc_id = put.stdout.strip()
    assert doc_id.startswith("%") and "version 1" in put.stderr
    got = run(store_dir, "get", doc_id, "--json")
    assert got.returncode == 0 and got.stderr == ""
    item = json.loads(got.stdout)
    assert item["schema"] == 1 and item["text"] == "Decided to store notes in DuckDB"
    assert item["tags"]["topic"] == "storage" and item["tags"]["_source"] == "inline"
    found = run(store_dir, "find", "notes in DuckDB", "--json")
    assert found.returncode == 0, found.stderr
    doc = json.loads(found.stdout)
    assert doc["schema"] == 1 and doc["query"] == "notes in DuckDB"
    assert set(doc["hits"][0]) >= HIT_KEYS and doc["hits"][0]["id"] == doc_id


def test_find_output_modes(store_dir: Path) -> None:
    for i in range(3):
        assert run(store_dir, "put", f"note about rivers {i}", "-i", f"r{i}").returncode == 0
    nl = run(store_dir, "find", "rivers", "--nl", "-n", "2")
    lines = nl.stdout.strip().splitlines()
    assert len(lines) == 2 and all(set(json.loads(x)) >= HIT_KEYS for x in lines)
    ids = run(store_dir, "find", "rivers", "--ids")
    assert sorted(ids.stdout.split()) == ["r0", "r1", "r2"]
    human = run(store_dir, "find", "rivers")
    assert human.returncode == 0 and "r0" in human.stdout and "sim" in human.stdout
    both = run(store_dir, "find", "rivers", "--json", "--ids")
    assert both.returncode == 1 and "Error" in both.stderr
    assert json.loads(both.stdout)["error"]["kind"] == "usage"


def test_versions_history_tag_and_del(store_dir: Path) -> None:
    assert run(store_dir, "put", "first", "-i", "doc").returncode == 0
    assert run(store_dir, "put", "second", "-i", "doc").returncode == 0
    tagged = run(store_dir, "tag", "doc", "-t", "status=done", "--json")
    assert json.loads(tagged.stdout) == {
        "schema": 1,
        "id": "doc",
        "version": 3,
        "action": "updated",
    }
    hist = json.loads(run(store_dir, "get", "doc", "--history", "--json").stdout)
    assert [v["change"] for v in hist["versions"]] == ["tags", "text", "created"]
    assert json.loads(run(store_dir, "get", "doc", "-V", "-1", "--json").stdout)["text"] == "first"
    assert json.loads(run(store_dir, "get", "doc@V{1}", "--json").stdout)["text"] == "second"
    reverted = json.loads(run(store_dir, "del", "doc", "--json").stdout)
    assert reverted["action"] == "reverted" and reverted["version"] == 2
    purged = json.loads(run(store_dir, "del", "doc", "--purge", "--json").stdout)
    assert purged["action"] == "purged"
    assert run(store_dir, "get", "doc").returncode == 2


def test_list_and_stats(store_dir: Path) -> None:
    run(store_dir, "put", "alpha", "-i", "a", "-t", "k=v")
    run(store_dir, "put", "beta", "-i", "b")
    listed = json.loads(run(store_dir, "list", "--json", "--sort", "id").stdout)
    assert [i["id"] for i in listed["items"]] == ["a", "b"] and listed["schema"] == 1
    assert [
        i["id"] for i in json.loads(run(store_dir, "list", "-t", "k", "--json").stdout)["items"]
    ] == ["a"]
    stats = json.loads(run(store_dir, "stats", "--json").stdout)
    assert (stats["items"], stats["versions"], stats["vectors"]) == (2, 2, 2)
    assert stats["store_bytes"] > 0 and stats["schema"] == 1


def test_stdin_and_text_files(store_dir: Path, tmp_path: Path) -> None:
    piped = run(store_dir, "put", "-", "-i", "piped", stdin="read from standard input\n")
    assert piped.returncode == 0 and piped.stdout.strip() == "piped"
    note = tmp_path / "meeting.md"
    note.write_text("# Meeting\nWe chose usearch.\n")
    first = run(store_dir, "put", str(note), "--json")
    doc = json.loads(first.stdout)
    assert doc["id"] == note.resolve().as_uri() and doc["action"] == "created"
    assert json.loads(run(store_dir, "put", str(note), "--json").stdout)["action"] == "unchanged"
    item = json.loads(run(store_dir, "get", doc["id"], "--json").stdout)
    assert item["tags"]["_content_type"] == "text/markdown"
    binary = tmp_path / "blob.bin"
    binary.write_bytes(b"\x81\x8d\x90\x9d\xff" * 10)
    bad = run(store_dir, "put", str(binary))
    assert bad.returncode == 1 and "UTF-8" in bad.stderr and bad.stdout == ""


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (("get", "missing"), 2, "missing"),
        (("del", "missing"), 2, "missing"),
        (("put", "x", "-t", "_created=now"), 1, "system tags"),
        (("put", "x", "-t", "bad key=1"), 1, "tag key"),
        (("find",), 1, "Missing argument"),
        (("find", "q", "--since", "yesterday-ish"), 1, "--since"),
        (("find", "q", "-n", "0"), 1, "--limit"),
        (("list", "--sort", "size"), 1, "--sort"),
        (("get", "x", "--bogus"), 1, "--bogus"),
        (("put", ""), 1, "empty"),
    ],
)
def test_errors_exit_codes_and_messages(
    store_dir: Path, args: tuple[str, ...], code: int, needle: str
) -> None:
    result = run(store_dir, *args)
    assert result.returncode == code, result.stderr
    assert result.stdout == ""
    assert needle in result.stderr and "Traceback" not in result.stderr


def test_broken_config_is_a_clear_error(store_dir: Path) -> None:
    (store_dir / "keepui.toml").write_text("[embedding]\nprovider = 3\n")
    result = run(store_dir, "stats")
    assert result.returncode == 2 and "keepui.toml" in result.stderr and "provider" in result.stderr


def test_store_env_var_and_default_toml(tmp_path: Path) -> None:
    store = tmp_path / "via-env"
    env = {
        "KEEPUI_STORE": str(store),
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "KEEPUI_NO_SERVER": "1",  # no owner left behind (tests/cli/test_owner.py has those)
    }

    def keepui(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "keepui", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    missing = keepui("stats", "--json")  # reading never creates a store
    assert missing.returncode == 2 and not store.exists()
    assert f"no store at {store}" in missing.stderr
    assert json.loads(missing.stdout)["error"]["kind"] == "store"
    made = keepui("put", "--text", "first note", "--json")
    assert made.returncode == 0, made.stderr
    result = keepui("stats", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["items"] == 1
    toml = (store / "keepui.toml").read_text()
    assert "half_life_days = 30" in toml and toml.count("#") > 5


def test_global_store_option_and_version(store_dir: Path) -> None:
    put = subprocess.run(
        [sys.executable, "-m", "keepui", "--store", str(store_dir), "put", "hi", "-i", "g"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert put.returncode == 0 and put.stdout.strip() == "g"
    assert json.loads(run(store_dir, "get", "g", "--json").stdout)["text"] == "hi"
    version = subprocess.run(
        [sys.executable, "-m", "keepui", "--version"], capture_output=True, text=True, timeout=60
    )
    assert version.returncode == 0 and version.stdout.startswith("keepui ")


def test_model_change_then_reindex(store_dir: Path, backend: str) -> None:
    if backend == "postgres":
        pytest.skip("a PostgreSQL store's settings live in its settings table, not keepui.toml")
    assert run(store_dir, "put", "some text", "-i", "m").returncode == 0
    toml = store_dir / "keepui.toml"
    toml.write_text(
        toml.read_text().replace('provider = "fake"', 'provider = "sentence-transformers"')
    )
    refused = run(store_dir, "find", "text")
    assert refused.returncode == 2 and "reindex" in refused.stderr
    redone = run(store_dir, "reindex", "--json")
    assert redone.returncode == 0, redone.stderr
    assert json.loads(redone.stdout)["vectors"] == 1
    assert json.loads(run(store_dir, "find", "some text", "--json").stdout)["hits"][0]["id"] == "m"


def test_unusable_store_paths_are_clear_errors(tmp_path: Path) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("not a directory")
    result = run(a_file, "put", "x")
    assert result.returncode == 2 and str(a_file) in result.stderr and "--store" in result.stderr
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "keepui.duckdb").write_text("garbage")
    result = run(broken, "stats")
    assert result.returncode == 2 and "keepui.duckdb" in result.stderr
    assert "Traceback" not in result.stderr


def test_large_unicode_file_and_ids(store_dir: Path, tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_text("é漢字🙂 " * 50_000, encoding="utf-8")
    put = json.loads(run(store_dir, "put", str(big), "--json").stdout)
    item = json.loads(run(store_dir, "get", put["id"], "--json").stdout)
    assert len(item["text"]) == len(big.read_text(encoding="utf-8"))
    assert len(item["summary"]) <= 500 and item["tags"]["_content_length"] == len(item["text"])
    assert run(store_dir, "put", "ünïcödé note", "-i", "ünï/cöde:1").returncode == 0
    assert (
        json.loads(run(store_dir, "get", "ünï/cöde:1", "--json").stdout)["text"] == "ünïcödé note"
    )


def test_find_explain_shows_every_component(store_dir: Path) -> None:
    for i, text in enumerate(["lazy fox dozes", "quick fox runs", "slow turtle walks"]):
        assert run(store_dir, "put", text, "-i", f"a{i}").returncode == 0
    result = run(store_dir, "find", "lazy fox", "--mode", "hybrid", "--explain")
    assert result.returncode == 0, result.stderr
    for column in ("dense", "bm25", "fused", "decay", "final"):
        assert column in result.stdout
    assert "a0" in result.stdout and "hybrid search" in result.stdout
    both = run(store_dir, "find", "fox", "--explain", "--json")
    assert both.returncode == 1


def test_bare_keepui_outside_a_terminal_prints_help_and_tui_refuses(store_dir: Path) -> None:
    bare = subprocess.run(
        [sys.executable, "-m", "keepui"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert bare.returncode == 0 and "Usage" in bare.stdout
    tui = run(store_dir, "tui")
    assert tui.returncode == 1 and "terminal" in tui.stderr

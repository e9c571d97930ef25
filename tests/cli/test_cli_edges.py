"""Inputs that must never become data, and errors scripts can read (issue 11, points 1-4, 6, 7).

Every test runs the real `keepui` in a subprocess on a fake-embedder store.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support import make_fake_store
from support import run_cli as run


@pytest.fixture
def store_dir(backend_dir: Path) -> Path:
    """The tests here that use store_dir run on DuckDB and on PostgreSQL."""
    return backend_dir


HINT = "(to store this text as a note, use --text)"


@pytest.mark.parametrize(
    "source", ["nonexistent.txt", "./x.pdf", "no/such/dir/x.md", "~/notes.md", ".hidden"]
)
def test_a_missing_path_is_an_error_not_a_note(tmp_path: Path, source: str) -> None:
    # DuckDB only: the path is refused before anything is written, the same on both backends
    store_dir = make_fake_store(tmp_path / "store")
    got = run(store_dir, "put", source)
    assert got.returncode == 2 and got.stdout == ""
    assert f"no such file: {source} {HINT}" in got.stderr
    as_json = run(store_dir, "put", source, "--json")
    error = json.loads(as_json.stdout)["error"]
    assert as_json.returncode == 2
    assert error == {
        "kind": "not_found",
        "message": f"no such file: {source}",
        "hint": "to store this text as a note, use --text",
    }
    listed = run(store_dir, "list", "--json")
    assert json.loads(listed.stdout)["items"] == []  # nothing was stored


def test_text_forces_a_note_and_sentences_with_slashes_stay_notes(store_dir: Path) -> None:
    forced = run(store_dir, "put", "--text", "nonexistent.txt", "--json")
    assert forced.returncode == 0, forced.stderr
    got = json.loads(run(store_dir, "get", json.loads(forced.stdout)["id"], "--json").stdout)
    assert got["text"] == "nonexistent.txt"
    short = run(store_dir, "put", "-T", "~/notes.md", "-i", "tilde")
    assert short.returncode == 0 and short.stdout.strip() == "tilde"
    sentence = run(store_dir, "put", "We chose TCP/IP over a serial link")
    assert sentence.returncode == 0, sentence.stderr
    both = run(store_dir, "put", "a", "--text", "b")
    assert both.returncode == 1 and "not both" in both.stderr


def test_file_uri_of_a_missing_file_is_an_error(store_dir: Path, tmp_path: Path) -> None:
    got = run(store_dir, "put", f"file://{tmp_path}/gone.md", "--json")
    assert got.returncode == 2 and "no such file" in got.stderr.lower()
    assert json.loads(got.stdout)["error"]["kind"] == "not_found"


@pytest.mark.parametrize(
    "args",
    [
        ["find", "anything"],
        ["get", "x"],
        ["list"],
        ["stats"],
        ["diff", "x"],
        ["flow", "-q", "anything"],
        ["pending"],
        ["tag", "x", "-t", "a=b"],
        ["del", "x"],
        ["analyze", "x"],
        ["tui"],
    ],
)
def test_reading_a_mistyped_store_creates_nothing(tmp_path: Path, args: list[str]) -> None:
    typo = tmp_path / "no-such-store"
    got = run(typo, *args)
    assert got.returncode == 2, got.stderr
    assert (
        f"no store at {typo} (create one with keepui put, or check --store / KEEPUI_STORE)"
        in got.stderr
    )
    assert not typo.exists()
    if args[0] != "tui":
        error = json.loads(run(typo, *args, "--json").stdout)["error"]
        assert error["kind"] == "store" and error["message"] == f"no store at {typo}"


def test_writes_still_create_a_store(tmp_path: Path) -> None:
    store = make_fake_store(tmp_path / "fresh")
    (store / "keepui.toml").rename(tmp_path / "keepui.toml")
    store.rmdir()
    made = run(store, "put", "--text", "the first note")
    assert made.returncode == 0 and (store / "keepui.duckdb").exists(), made.stderr


def test_unknown_flow_params_and_action_arguments_name_the_known_ones(
    store_dir: Path, tmp_path: Path
) -> None:
    run(store_dir, "put", "--text", "a note about flows")
    bad = run(store_dir, "flow", "-q", "flows", "-p", "nosuchparam=1")
    assert bad.returncode == 1
    assert "nosuchparam" in bad.stderr and "margin_high" in bad.stderr
    assert (
        json.loads(run(store_dir, "flow", "-q", "x", "-p", "nope=1", "--json").stdout)["error"][
            "kind"
        ]
        == "usage"
    )
    good = run(store_dir, "flow", "-q", "flows", "-p", "margin_high=0.3")
    assert good.returncode == 0, good.stderr
    doc = tmp_path / "mine.yaml"
    doc.write_text(
        "rules:\n  - id: s\n    do: find\n    with: {query: '{params.query}', "
        "limit: '{params.mine}', colour: red}\n  - return: done\n"
    )
    wrong_arg = run(store_dir, "flow", "mine", "-f", str(doc), "-q", "x")
    assert wrong_arg.returncode == 1 and "colour" in wrong_arg.stderr
    assert "query, tags, limit" in wrong_arg.stderr
    doc.write_text(doc.read_text().replace(", colour: red", ""))
    own_param = run(store_dir, "flow", "mine", "-f", str(doc), "-q", "x", "-p", "mine=2")
    assert own_param.returncode == 0, own_param.stderr  # a param the doc reads is known


def test_malformed_version_and_part_addresses_are_usage_errors(store_dir: Path) -> None:
    run(store_dir, "put", "--text", "one", "-i", "d")
    run(store_dir, "put", "--text", "two", "-i", "d")
    for address in ("d@V{x}", "d@V{}", "d@P{two}"):
        got = run(store_dir, "get", address)
        assert got.returncode == 1, (address, got.stderr)
        assert "Invalid input" in got.stderr
    assert run(store_dir, "get", "d@V{5}").returncode == 2  # well formed, but no such version
    diff = run(store_dir, "diff", "d", "7")
    assert diff.returncode == 2 and "A = 7" in diff.stderr and "-V" not in diff.stderr
    diff_b = run(store_dir, "diff", "d", "1", "-9")
    assert diff_b.returncode == 2 and "B = -9" in diff_b.stderr
    assert run(store_dir, "diff", "d", "x").returncode == 1


def test_nl_errors_and_usage_errors_are_json_too(store_dir: Path) -> None:
    missing = run(store_dir, "get", "nope", "--json")
    assert missing.returncode == 2
    doc = json.loads(missing.stdout)
    assert doc["schema"] == 1 and doc["error"]["kind"] == "not_found"
    assert "Error:" in missing.stderr and "nope" in missing.stderr
    nl = run(store_dir, "find", "x", "--since", "yesterday", "--nl")
    assert nl.returncode == 1 and json.loads(nl.stdout)["error"]["kind"] == "usage"
    usage = run(store_dir, "find", "--json")  # the query is missing
    assert usage.returncode == 1 and json.loads(usage.stdout)["error"]["kind"] == "usage"
    plain = run(store_dir, "get", "nope")
    assert plain.stdout == ""  # without --json stdout stays empty


COMMANDS = [
    "put", "get", "find", "list", "tag", "del", "stats", "reindex",
    "eval", "serve", "pending", "analyze", "flow", "diff", "tui",
]  # fmt: skip


@pytest.mark.parametrize("command", COMMANDS)
def test_help_is_readable(tmp_path: Path, command: str) -> None:
    # DuckDB only: --help never opens the store, so a PostgreSQL run would test nothing more
    got = run(make_fake_store(tmp_path / "store"), command, "--help")
    assert got.returncode == 0, got.stderr
    text = got.stdout
    assert "<bool>" not in text and "<str>" not in text and "<list" not in text
    assert not re.search(r"\[default:\s+\]|\[default:  \w", text), text
    if command != "eval":  # eval's --store is its scratch store
        assert "Store directory [default: ~/.keepui]" in re.sub(r"\s+", " ", text)
    if command in ("put", "get", "find", "flow", "diff"):
        assert "Examples:" in text and "keepui " + command in text
    if command == "find":
        assert "[default: [search] fusion]" in re.sub(r"\s+", " ", text)

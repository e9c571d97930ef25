"""`keepui context|reflect|now|export|import` as real subprocesses (fake embedder)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import make_fake_store, run_cli

NOTES = [
    (
        "keys",
        "API keys rotate monthly for internal services. Rotation is automated by the "
        "vault job. Old keys stay valid for a day.",
        "topic=auth",
    ),
    (
        "oauth",
        "OAuth2 tokens for the API gateway expire after one hour. Refresh tokens last thirty days.",
        "topic=auth",
    ),
    (
        "bread",
        "Sourdough bread needs a long fermentation. Bake it in a hot covered pot.",
        "topic=food",
    ),
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = make_fake_store(tmp_path_factory.mktemp("agents") / "store")
    for doc, text, tag in NOTES:
        assert run_cli(path, "put", text, "-i", doc, "-t", tag).returncode == 0
    return path


def js(result: object) -> dict:
    assert result.returncode == 0, result.stderr  # type: ignore[attr-defined]
    return json.loads(result.stdout)  # type: ignore[attr-defined]


def test_context_json_has_the_contract_fields(store: Path) -> None:
    doc = js(run_cli(store, "context", "API keys tokens", "--json", "--min-score", "0"))
    assert doc["schema"] == 1 and doc["query"] == "API keys tokens"
    assert {"passages", "tokens", "budget", "dropped"} <= set(doc) and doc["budget"] == 2048
    first = doc["passages"][0]
    assert set(first) >= {"id", "matched", "text", "score", "tokens"}
    assert doc["tokens"] == sum(p["tokens"] for p in doc["passages"]) <= doc["budget"]


def test_context_text_ends_each_passage_with_its_source(store: Path) -> None:
    result = run_cli(store, "context", "API keys tokens", "--min-score", "0", "--max-tokens", "40")
    assert result.returncode == 0, result.stderr
    blocks = result.stdout.strip().split("\n\n")
    assert blocks and all(b.splitlines()[-1].startswith("[Source: ") for b in blocks)
    assert len(result.stdout.split()) <= 40


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("context", "x", "--max-tokens", "0"), 1, "--max-tokens 0"),
        (("context", "x", "--top-k", "0"), 1, "--top-k 0"),
        (("reflect", "x", "--kind", "essay"), 1, "choose one of summary, key-points"),
        (("now", "--scope", " "), 1, "--scope needs a name"),
    ],
)
def test_bad_arguments_are_usage_errors(store: Path, args: tuple, code: int, message: str) -> None:
    result = run_cli(store, *args, "--json")
    assert result.returncode == code
    assert message in result.stderr and json.loads(result.stdout)["error"]["kind"] == "usage"


def test_reflect_stores_back_with_its_sources(tmp_path: Path, store: Path) -> None:
    doc = js(
        run_cli(
            store,
            "reflect",
            "how do keys and tokens work",
            "--kind",
            "key-points",
            "--store-back",
            "--json",
        )
    )
    assert doc["method"] == "extractive" and 3 <= len(doc["points"]) <= 5
    assert all(p["source"] in doc["sources"] for p in doc["points"])
    assert all(line.startswith("- ") for line in doc["text"].splitlines())
    got = js(run_cli(store, "get", doc["stored"], "--json"))
    assert got["tags"]["type"] == "reflection" and got["tags"]["query"] == (
        "how do keys and tokens work"
    )
    sources = got["tags"]["source"]
    assert sorted(sources if isinstance(sources, list) else [sources]) == sorted(doc["sources"])
    shown = run_cli(store, "get", doc["stored"]).stdout
    assert "source:" in shown and "type: reflection" in shown


def test_now_is_empty_first_then_versioned(tmp_path: Path) -> None:
    store = make_fake_store(tmp_path / "s")
    first = js(run_cli(store, "now", "--json"))
    assert (first["id"], first["text"], first["version"]) == ("now", "", 0)
    assert run_cli(store, "now", "Reviewing the auth design").returncode == 0
    assert run_cli(store, "now", "Next: rotate keys").stdout.strip() == "Next: rotate keys"
    assert run_cli(store, "now").stdout.strip() == "Next: rotate keys"
    history = js(run_cli(store, "get", "now", "--history", "--json"))
    assert [v["summary"] for v in history["versions"]] == [
        "Next: rotate keys",
        "Reviewing the auth design",
    ]
    scoped = js(run_cli(store, "now", "Indexing papers", "--scope", "agent-7", "--json"))
    assert scoped["id"] == "now:agent-7" and run_cli(store, "now").stdout.strip() == (
        "Next: rotate keys"
    )


def test_now_on_a_missing_store_is_empty_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "nothing-here"
    assert js(run_cli(missing, "now", "--json"))["version"] == 0
    assert not missing.exists()


def test_export_import_round_trip_through_pipes(store: Path, tmp_path: Path) -> None:
    dump = run_cli(store, "export", "-", "--include-versions", "--include-parts")
    assert dump.returncode == 0, dump.stderr
    target = make_fake_store(tmp_path / "copy")
    result = run_cli(target, "import", "-", "--json", stdin=dump.stdout)
    assert js(result)["counts"] == {"created": len(dump.stdout.splitlines()) - 1}
    again = run_cli(target, "export", "-", "--include-versions", "--include-parts")
    assert again.stdout == dump.stdout
    for query in ("keys", "bread oven"):
        a = run_cli(store, "find", query, "--ids").stdout
        assert a and a == run_cli(target, "find", query, "--ids").stdout


def test_export_to_a_file_and_a_malformed_import(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "dump.jsonl"
    count = js(run_cli(store, "export", str(out), "--json"))["items"]
    lines = out.read_text().splitlines()
    assert count == len(lines) - 1 >= 3
    lines.insert(2, "{oops")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    target = make_fake_store(tmp_path / "t")
    result = run_cli(target, "import", str(bad), "--json")
    assert result.returncode == 1 and "line 3" in result.stderr
    assert json.loads(result.stdout)["error"]["kind"] == "usage"
    assert js(run_cli(target, "stats", "--json"))["items"] == 0
    skipped = js(run_cli(target, "import", str(bad), "--skip-bad", "--json"))
    assert skipped["bad_count"] == 1 and skipped["counts"] == {"created": count}
    missing = run_cli(target, "import", str(tmp_path / "none.jsonl"))
    assert missing.returncode == 2 and "no such file" in missing.stderr
    assert run_cli(store, "export", "-", "--json").returncode == 1

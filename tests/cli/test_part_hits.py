"""What a find gives back, through real subprocesses: part hits say which part and where,
same-text versions give the current one, and hits with no evidence are hidden."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import run_cli as run

from keepui_engine.providers.fake import FakeEmbedder


@pytest.fixture
def store_dir(backend_dir: Path) -> Path:
    """The tests here that use store_dir run on DuckDB and on PostgreSQL."""
    return backend_dir


def words(n: int, stem: str) -> str:
    return " ".join(f"{stem}{i % 7}" for i in range(n))


LONG = "\n\n".join(
    [
        "# Harbour\n" + words(200, "boat") + " lighthouse keeper",
        "# Mountains\n" + words(200, "peak") + " glacier crevasse",
        "# Kitchen\n" + words(200, "pan") + " sourdough starter",
    ]
)


def ok(store: Path, *args: str, stdin: str | None = None) -> str:
    result = run(store, *args, stdin=stdin)
    assert result.returncode == 0, result.stderr
    return result.stdout


def doc(store: Path, *args: str) -> dict[str, Any]:
    return json.loads(ok(store, *args, "--json"))  # type: ignore[no-any-return]


def test_a_part_hit_names_its_part_in_json_nl_explain_and_get(store_dir: Path) -> None:
    ok(store_dir, "put", "-", "-i", "atlas", stdin=LONG)
    ok(store_dir, "put", "a note about something else entirely", "-i", "other")
    hit = doc(store_dir, "find", "glacier crevasse", "--mode", "bm25")["hits"][0]
    assert hit["id"] == "atlas" and hit["matched"] == "atlas@P{2}" and hit["version"] == 0
    part = hit["part"]
    assert (part["index"], part["title"]) == (2, "Mountains")
    assert part["excerpt"].startswith("…") and part["excerpt"].endswith("glacier crevasse")
    line = ok(store_dir, "find", "glacier crevasse", "--mode", "bm25", "--nl").splitlines()[0]
    assert json.loads(line)["part"] == part
    explained = ok(store_dir, "find", "glacier crevasse", "--mode", "bm25", "--explain")
    start, end = LONG.index("# Mountains"), LONG.index("# Kitchen") - 2
    place = f"section 2, chars {start}-{end}"
    assert "2 Mountains" in explained and f"#1 atlas@P{{2}} ({place}): …" in explained
    assert "glacier crevasse" in explained
    item = doc(store_dir, "get", "atlas@P{2}")
    assert item["part"] == {
        "index": 2,
        "count": 3,
        "title": "Mountains",
        "kind": "heading",
        "position": place,
        "span": [start, end],
    }
    assert "glacier crevasse" in item["text"] and doc(store_dir, "get", "atlas")["part"] is None
    whole = doc(store_dir, "find", "something else entirely", "--mode", "bm25")["hits"][0]
    assert whole["matched"] == "other" and whole["part"] is None


def test_the_same_text_in_an_archived_version_gives_the_current_one(store_dir: Path) -> None:
    ok(store_dir, "put", "apples and pears from the orchard", "-i", "fruit")
    ok(store_dir, "tag", "fruit", "-t", "season=autumn")
    assert doc(store_dir, "get", "fruit")["versions"] == 2
    for mode in ("dense", "bm25", "hybrid"):
        hit = doc(store_dir, "find", "apples pears orchard", "--mode", mode)["hits"][0]
        assert (hit["matched"], hit["version"], hit["tags"]["season"]) == ("fruit", 0, "autumn")


def unrelated(query: str) -> str:
    """A word whose fake vector points away from the query's (negative cosine)."""
    fake = FakeEmbedder()
    q = fake.embed([query])[0]
    return next(w for w in (f"w{i}" for i in range(500)) if fake.embed([w])[0] @ q < -0.2)


def test_a_hit_with_no_evidence_is_hidden_counted_and_named_by_why(store_dir: Path) -> None:
    ok(store_dir, "put", "the lighthouse keeper", "-i", "near")
    ok(store_dir, "put", unrelated("lighthouse keeper"), "-i", "far")
    for fusion in ("score", "rrf"):
        found = doc(store_dir, "find", "lighthouse keeper", "--fusion", fusion)
        assert [h["id"] for h in found["hits"]] == ["near"]
        assert found["hidden"]["no_evidence"] == 1
        assert any("no evidence" in n for n in found["notes"])
    why = doc(store_dir, "find", "lighthouse keeper", "--why", "far")
    assert why["removed_by"] == "no_evidence" and why["rank"] is None
    assert why["channels"]["bm25"] is None and why["channels"]["dense"]["score"] < 0

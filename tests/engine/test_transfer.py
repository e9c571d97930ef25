"""Export and import through the facade (fake embedder): lossless round trips and bad input."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from support import make_fake_store

from keepui_engine import PutSpec, UsageError, Workbench, open_workbench


@pytest.fixture
def store_dir(backend_dir: Path) -> Path:
    """The tests here that use store_dir or wb run on DuckDB and on PostgreSQL."""
    return backend_dir


LONG = "\n\n".join(
    f"# Section {n}\n" + " ".join(f"word{n}x{i}" for i in range(300)) + "." for n in range(4)
)


def export_text(wb: Workbench, **include: bool) -> str:
    buf = io.StringIO()
    wb.export(buf.write, **include)
    return buf.getvalue()


def seed(wb: Workbench) -> None:
    wb.put("First draft of the plan", id="plan", tags=["topic=plan"])
    wb.put("Second draft of the plan", id="plan", tags=["topic=plan", "owner=ann"])
    wb.tag("plan", tags=["status=done"])
    wb.put(LONG, id="handbook", tags=["kind=long", "kind=manual"])
    wb.put("Sourdough bread notes", tags=["topic=food"])
    wb.put("*.tmp", id=".ignore")
    wb.put('Ünïcödé text, quotes " and tabs\there', id="odd id/with:chars")


@pytest.fixture
def source(wb: Workbench) -> Workbench:
    seed(wb)
    return wb


def fresh(tmp_path: Path, name: str = "b") -> Workbench:
    return open_workbench(make_fake_store(tmp_path / name), own=True)


ALL = {"versions": True, "parts": True, "system": True, "vectors": True}


@pytest.mark.parametrize(
    "include",
    [{}, {"versions": True}, {"parts": True}, ALL],
    ids=["plain", "versions", "parts", "everything"],
)
def test_export_import_export_is_byte_identical(
    source: Workbench, tmp_path: Path, include: dict[str, bool]
) -> None:
    first = export_text(source, **include)
    with fresh(tmp_path) as other:
        report = other.import_lines(io.StringIO(first))
        assert report.counts == {"created": report.items}
        assert export_text(other, **include) == first


def test_the_header_and_items(source: Workbench) -> None:
    lines = export_text(source, **ALL).splitlines()
    header = json.loads(lines[0])
    assert header["format"] == "keepui-export" and header["format_version"] == 1
    assert header["model"] == source.stats().model and header["items"] == len(lines) - 1 == 5
    items = {json.loads(x)["id"]: json.loads(x) for x in lines[1:]}
    plan = items["plan"]
    assert [v["version"] for v in plan["versions"]] == [1, 2] and plan["version"] == 3
    assert plan["tags"] == {"owner": ["ann"], "status": ["done"], "topic": ["plan"]}
    assert items["handbook"]["tags"]["kind"] == ["long", "manual"]
    assert [p["title"] for p in items["handbook"]["parts"]][:2] == ["Section 0", "Section 1"]
    assert plan["content_hash"] in plan["vectors"]
    assert ".ignore" in items
    plain = export_text(source).splitlines()
    assert ".ignore" not in plain[1] and json.loads(plain[0])["items"] == 4
    assert "versions" not in json.loads(plain[1])


def test_history_parts_and_search_survive(source: Workbench, tmp_path: Path) -> None:
    dump = export_text(source, **ALL)
    with fresh(tmp_path) as other:
        other.import_lines(io.StringIO(dump))
        assert [v.change for v in other.history("plan")] == [
            v.change for v in source.history("plan")
        ]
        assert other.get("plan@V{2}").text == "First draft of the plan"
        assert [p.title for p in other.parts("handbook")] == [
            p.title for p in source.parts("handbook")
        ]
        for query in ("plan draft", "word2x7", "bread"):
            assert [h.matched for h in other.find(query).hits] == [
                h.matched for h in source.find(query).hits
            ]


def test_a_bad_line_is_named_and_nothing_is_applied(tmp_path: Path, source: Workbench) -> None:
    good = export_text(source).splitlines()
    broken = [*good[:2], '{"id": "x", "text": ', *good[2:]]
    with fresh(tmp_path) as other:
        other.put("already here", id="keep")
        with pytest.raises(UsageError, match=r"line 3: not JSON") as err:
            other.import_lines(io.StringIO("\n".join(broken)))
        assert "nothing was imported" in err.value.message
        assert [i.id for i in other.list_items()] == ["keep"]
        report = other.import_lines(io.StringIO("\n".join(broken)), skip_bad=True)
        assert report.bad == [{"line": 3, "error": report.bad[0]["error"]}]
        assert report.counts["created"] == 4
        with pytest.raises(UsageError, match="--skip-bad goes with --mode merge"):
            other.import_lines(io.StringIO(""), mode="replace", skip_bad=True)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"id": "a"}', '"text" is missing'),
        ('{"text": "t", "tags": {"k": 3}}', "values must be non-empty strings"),
        ('{"text": "t", "version": 0}', '"version" must be'),
        ('{"text": "t", "updated": "yesterday"}', "not an ISO-8601 time"),
        ('{"text": "t", "id": "a`b"}', "contains"),
        ('["a list"]', "must be a JSON object"),
        ('{"text": "t", "id": "x"}\n{"text": "u", "id": "x"}', "already came on line 1"),
        ('{"format": "keepui-export", "format_version": 9}', "format_version 9"),
    ],
)
def test_bad_items_say_what_is_wrong(wb: Workbench, line: str, problem: str) -> None:
    with pytest.raises(UsageError, match="line [12]: ") as err:
        wb.import_lines(io.StringIO(line))
    assert problem in err.value.message


def test_plain_jsonl_notes_import(wb: Workbench) -> None:
    lines = ['{"text": "a note from elsewhere", "tags": {"src": "x"}}', "", '{"text": "b"}']
    report = wb.import_lines(io.StringIO("\n".join(lines)))
    assert report.counts == {"created": 2} and report.model is None
    assert wb.find("note from elsewhere").hits[0].tags["src"] == "x"


def test_merge_and_replace(source: Workbench, tmp_path: Path) -> None:
    dump = export_text(source, versions=True)
    with fresh(tmp_path) as other:
        other.put("My own plan", id="plan", tags=["topic=mine", "local=yes"])
        report = other.import_lines(io.StringIO(dump))
        assert report.counts == {"created": 3, "merged": 1}
        history = other.history("plan")
        assert len(history) == 2 and other.get("plan").text == "Second draft of the plan"
        assert "local" not in other.get("plan").tags  # the file's tags, exactly
        again = other.import_lines(io.StringIO(dump))
        assert again.counts == {"unchanged": 4}
        report = other.import_lines(io.StringIO(dump), mode="replace")
        assert report.counts == {"replaced": 4}
        assert len(other.history("plan")) == 3  # the file's history, not the store's


def test_vectors_of_another_model_reembed_on_the_queue(source: Workbench, tmp_path: Path) -> None:
    lines = export_text(source, vectors=True).splitlines()
    header = json.loads(lines[0])
    header["model"] = "another-model"
    dump = "\n".join([json.dumps(header), *lines[1:]])
    with fresh(tmp_path) as other:
        report = other.import_lines(io.StringIO(dump))
        assert report.reembed and report.model == "another-model"
        queue = other.pending()
        assert queue["counts"]["embed"]["queued"] >= 1, queue
        before = other.find("Sourdough bread", mode="dense").hits
        assert not any(h.summary.startswith("Sourdough") for h in before)
        other.drain()
        hits = other.find("Sourdough bread", mode="dense").hits
        assert hits and hits[0].summary.startswith("Sourdough")


def test_bm25_scores_after_a_round_trip_do_not_depend_on_write_order(
    wb: Workbench, tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    # 300 notes, then 60 more: the BM25 base holds the first batch and a tail the rest, with
    # statistics of their own. Export folds the tail in, import ends the same way, so every
    # BM25 score (and so every ranking) is the same on both sides.
    words = ["river", "stone", "bread", "flour", "cloud", "rain", "iron", "glass", "salt"]

    def note(i: int) -> str:
        return " ".join(words[(i * k) % len(words)] for k in range(1, 2 + i % 7)) + f" n{i}"

    wb.put_many([PutSpec(note(i), id=f"n{i:03}") for i in range(300)])
    wb.put_many([PutSpec(note(i), id=f"n{i:03}") for i in range(300, 360)])
    queries = ["river stone", "bread flour salt", "glass rain", "iron"]
    dump = export_text(wb, versions=True, vectors=True)
    target = fresh(tmp_path)
    if backend == "postgres":  # round trip on the same backend
        import pg_support

        target.close()
        url = pg_support.fresh_database(request.getfixturevalue("pg_server"))
        target = open_workbench(pg_support.make_pg_store(tmp_path / "pg_b", url), own=True)
    with target as other:
        other.import_lines(io.StringIO(dump))
        for query in queries:
            mine = [(h.id, h.scores["bm25"]) for h in wb.find(query, mode="bm25", limit=50).hits]
            theirs = other.find(query, mode="bm25", limit=50).hits
            assert [(h.id, h.scores["bm25"]) for h in theirs] == pytest.approx(mine)
            assert [h.id for h in other.find(query, limit=20).hits] == [
                h.id for h in wb.find(query, limit=20).hits
            ]

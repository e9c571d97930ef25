"""Documents, versions, tags and deletion through the Workbench facade (fake embedder)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support import make_fake_store

from keepui_engine import NotFound, PutSpec, UsageError, Workbench, open_workbench


@pytest.fixture
def store_dir(backend_dir: Path) -> Path:
    """Every test here runs on DuckDB and on PostgreSQL (see conftest.backend)."""
    return backend_dir


def test_anonymous_id_is_content_addressed(wb: Workbench) -> None:
    first = wb.put("the same words")
    again = wb.put("the same words")
    assert re.fullmatch(r"%[0-9a-f]{12}", first.id)
    assert first.action == "created" and first.version == 1
    assert again.id == first.id and again.action == "unchanged" and again.version == 1
    assert len(wb.history(first.id)) == 1


def test_changed_text_and_tags_make_versions(wb: Workbench) -> None:
    wb.put("draft one", id="note")
    assert wb.put("draft two", id="note").version == 2
    assert wb.put("draft two", id="note", tags=["status=done"]).version == 3
    assert wb.put("draft two", id="note", tags=["status=done"]).action == "unchanged"
    changes = [v.change for v in wb.history("note")]
    assert changes == ["tags", "text", "created"]
    assert wb.get("note").text == "draft two"
    assert wb.get("note", 1).text == "draft two" and wb.get("note", 1).tags.get("status") is None
    assert wb.get("note@V{2}").text == "draft one"
    assert wb.get("note@V{-1}").text == "draft one"
    assert wb.get("note", -2).text == "draft two"
    item = wb.get("note@V{1}")
    assert (item.offset, item.version, item.versions) == (1, 2, 3)


def test_version_out_of_range_is_not_found(wb: Workbench) -> None:
    wb.put("only one", id="solo")
    with pytest.raises(NotFound, match="1 version"):
        wb.get("solo", 1)
    with pytest.raises(NotFound):
        wb.get("missing")


def test_an_id_holding_address_syntax_is_refused(wb: Workbench) -> None:
    wb.put("base text", id="odd")
    wb.put("base text v2", id="odd")
    for bad in ("odd@V{1}", "odd@P{2}", "x@v{1}"):
        with pytest.raises(UsageError, match="reads as an address"):
            wb.put("a document literally named with a suffix", id=bad)
    assert wb.get("odd@V{1}").text == "base text"  # the address still reaches version 1


def test_tags_are_validated_casefolded_and_multivalued(wb: Workbench) -> None:
    wb.put("tagged", id="t", tags=["Topic=Search", "topic=ranking", "project=atlas"])
    tags = wb.get("t").tags
    assert tags["topic"] == ["Search", "ranking"] and tags["project"] == "atlas"
    assert tags["_content_hash"] and tags["_created"].endswith("Z")
    for bad in ["_created=x", "1abc=x", "a b=c", "=x"]:
        with pytest.raises(UsageError):
            wb.put("tagged", id="t", tags=[bad])
    wb.tag("t", tags=["status=open"], remove=["project"])
    tags = wb.get("t").tags
    assert "project" not in tags and tags["status"] == "open"
    wb.put("tagged", id="t", tags=["topic="])
    assert "topic" not in wb.get("t").tags
    with pytest.raises(UsageError):
        wb.tag("t")


def test_bad_ids_and_empty_text_are_refused(wb: Workbench) -> None:
    for bad in ["", " lead", "semi;colon", 'q"uote']:
        with pytest.raises(UsageError):
            wb.put("text", id=bad)
    with pytest.raises(UsageError, match="empty"):
        wb.put("   ")
    assert wb.stats().items == 0


def test_del_reverts_then_deletes_and_purge_removes_history(wb: Workbench) -> None:
    wb.put("v1 text", id="d")
    wb.put("v2 text", id="d")
    reverted = wb.delete("d")
    assert (reverted.action, reverted.version) == ("reverted", 1)
    assert wb.get("d").text == "v1 text" and len(wb.history("d")) == 1
    assert wb.delete("d").action == "deleted"
    with pytest.raises(NotFound):
        wb.get("d")
    wb.put("p1 alpha", id="p")
    wb.put("p2 beta", id="p")
    purged = wb.delete("p", purge=True)
    assert (purged.action, purged.removed_versions) == ("purged", 2)
    assert wb.find("alpha").hits == [] and wb.stats().vectors == 0
    with pytest.raises(NotFound):
        wb.delete("p")


def test_revert_drops_the_reverted_version_from_search(wb: Workbench) -> None:
    wb.put("zebra stripes", id="z")
    wb.put("giraffe necks", id="z")
    assert wb.find("giraffe").hits[0].matched == "z"
    wb.delete("z")
    hits = wb.find("giraffe necks").hits
    assert all(h.similarity < 0.99 for h in hits)
    assert wb.find("zebra stripes").hits[0].matched == "z"


def test_summary_only_mode_keeps_no_text(tmp_path) -> None:  # type: ignore[no-untyped-def]
    store = make_fake_store(tmp_path / "s", keep_content=False, summary_max_chars=20)
    with open_workbench(store, own=True) as bench:
        bench.put("a fairly long text that will be truncated for its summary", id="x")
        item = bench.get("x")
        assert item.text is None
        assert item.summary.endswith("…") and len(item.summary) <= 20
        assert bench.find("truncated summary").hits[0].id == "x"


def test_put_many_batches_and_repeats_within_a_batch(wb: Workbench) -> None:
    specs = [PutSpec(f"note number {i}", id=f"n{i}") for i in range(50)]
    specs.append(PutSpec("note number 0 revised", id="n0"))
    results = wb.put_many(specs)
    assert [r.action for r in results[:2]] == ["created", "created"]
    assert results[-1].version == 2 and results[-1].action == "updated"
    assert wb.stats().items == 50 and wb.stats().versions == 51


def test_list_sorts_filters_and_prefixes(wb: Workbench) -> None:
    wb.put("one", id="a-1", tags=["kind=x"])
    wb.put("two", id="a-2")
    wb.put("three", id="b-1", tags=["kind=y"])
    assert [i.id for i in wb.list_items(sort="id")] == ["a-1", "a-2", "b-1"]
    assert [i.id for i in wb.list_items(sort="updated")][0] == "b-1"
    assert [i.id for i in wb.list_items("a-", sort="id")] == ["a-1", "a-2"]
    assert [i.id for i in wb.list_items(tags=["kind"], sort="id")] == ["a-1", "b-1"]
    assert [i.id for i in wb.list_items(tags=["kind=y"])] == ["b-1"]
    assert len(wb.list_items(limit=2)) == 2
    with pytest.raises(UsageError):
        wb.list_items(sort="size")


def test_client_mode_takes_the_lock_per_call(store_dir, backend) -> None:  # type: ignore[no-untyped-def]
    if backend == "postgres":
        pytest.skip("PostgreSQL has no store lock: every process connects itself")
    client = open_workbench(store_dir)
    client.put("client written", id="c")
    assert not client.owns_store
    with open_workbench(store_dir) as other:
        assert other.get("c").text == "client written"
    assert not (store_dir / "keepui.sock").exists()

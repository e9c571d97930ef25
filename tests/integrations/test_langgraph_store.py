"""KeepuiStore: ids, tags and records as keepui sees them, deletes, index, search, async, CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import GetOp, ListNamespacesOp, PutOp, SearchOp
from support import make_fake_store, run_cli

from keepui.agents.langchain import KeepuiStore
from keepui_engine import NotFound, Workbench, open_workbench


@pytest.fixture
def store_dir(backend_dir: Path) -> Path:
    """The tests here that use store_dir (through wb) run on DuckDB and on PostgreSQL."""
    return backend_dir


NS = ("alice", "travel")


@pytest.fixture
def store(wb: Workbench) -> KeepuiStore:
    return KeepuiStore(wb, namespace_keys=("user", "project"))


def words(n: int, stem: str) -> str:
    return " ".join(f"{stem}{i % 7}" for i in range(n))


def test_values_round_trip_exactly_under_awkward_names(store: KeepuiStore, wb: Workbench) -> None:
    value: dict[str, Any] = {
        "text": "Ünïcode — “quotes” and \\ backslashes",
        "n": 3,
        "f": 0.1 + 0.2,
        "flag": False,
        "none": None,
        "nested": {"list": [1, "two", {"three": [3.0]}], "empty": {}},
    }
    odd = ("a b", "semi;colon", 'q"uote', "x@V{1}", "50%", "sl/ash")
    for ns, key in [(NS, "k"), (odd, "key@P{1}"), (("x" * 700,), "y" * 700), (NS, "")]:
        store.put(ns, key, value)
        got = store.get(ns, key)
        assert got is not None and got.value == value
        assert (got.namespace, got.key) == (ns, key)
        assert got.created_at.tzinfo is not None and got.created_at.utcoffset() == UTC.utcoffset(
            None
        )
        doc_id = store.layout.doc_id(ns, key)
        assert wb.get(doc_id).id == doc_id  # a valid keepui id, not read as an address
    assert store.layout.doc_id(NS, "k") == "langgraph/alice/travel/k"
    assert store.layout.doc_id(("x" * 700,), "y" * 700).startswith("langgraph/#")


def test_items_are_tagged_by_namespace_and_embed_their_strings(
    store: KeepuiStore, wb: Workbench
) -> None:
    store.put((*NS, "2026", "june"), "trip", {"text": "Flight to Lisbon", "seats": 2})
    item = wb.get("langgraph/alice/travel/2026/june/trip")
    user_tags = {k: v for k, v in item.tags.items() if not k.startswith("_")}
    assert user_tags == {
        "lg_collection": "langgraph",
        "user": "alice",
        "project": "travel",
        "ns2": "2026",
        "ns3": "june",
        "lg_key": "trip",
    }
    assert item.text == "Flight to Lisbon"
    assert json.loads(item.summary)["value"] == {"text": "Flight to Lisbon", "seats": 2}


def test_overwrite_is_a_new_version_and_keeps_created_at(store: KeepuiStore, wb: Workbench) -> None:
    store.put(NS, "pref", {"seat": "window"})
    first = store.get(NS, "pref")
    store.put(NS, "pref", {"seat": "window"})  # the same value: nothing changes
    assert len(wb.history("langgraph/alice/travel/pref")) == 1
    store.put(NS, "pref", {"seat": "aisle"})
    second = store.get(NS, "pref")
    assert first is not None and second is not None
    assert second.value == {"seat": "aisle"}
    assert second.created_at == first.created_at and second.updated_at > first.updated_at
    for found in (store.search(NS)[0], store.search(NS, query="aisle seat")[0]):
        assert (found.created_at, found.updated_at) == (second.created_at, second.updated_at)
    assert len(wb.history("langgraph/alice/travel/pref")) == 2


def test_delete_purges_every_version(store: KeepuiStore, wb: Workbench) -> None:
    for seat in ("window", "aisle", "middle"):
        store.put(NS, "pref", {"seat": seat, "text": "seat preference"})
    store.delete(NS, "pref")
    assert store.get(NS, "pref") is None
    assert store.search(NS) == []
    assert store.search(NS, query="seat preference") == []
    assert store.list_namespaces() == []
    with pytest.raises(NotFound):
        wb.history("langgraph/alice/travel/pref")
    store.delete(NS, "never-stored")  # no error


def test_index_false_is_returned_unscored_after_the_scored(store: KeepuiStore) -> None:
    store.put(NS, "secret", {"text": "passport number kept here"}, index=False)
    store.put(NS, "open", {"text": "passport renewal in May"})
    found = store.search(NS, query="passport")
    assert [(i.key, i.score is None) for i in found] == [("open", False), ("secret", True)]
    assert [i.key for i in store.search(NS, query="passport", limit=1)] == ["open"]
    assert [i.key for i in store.search(NS, query="passport", offset=1)] == ["secret"]
    strict = KeepuiStore(store.workbench, namespace_keys=("user", "project"), min_score=0.0)
    assert [i.key for i in strict.search(NS, query="passport")] == ["open"]
    assert {i.key for i in store.search(NS)} == {"secret", "open"}
    assert store.get(NS, "secret") is not None
    store.put(NS, "secret", {"text": "passport number kept here"})  # indexed again
    found = store.search(NS, query="passport")
    assert {i.key for i in found} == {"secret", "open"} and all(i.score for i in found)


def test_index_paths_choose_what_is_embedded(store: KeepuiStore, wb: Workbench) -> None:
    value = {"title": "Harbour walk", "body": {"notes": ["gulls", "ferries"]}, "n": 1}
    store.put(NS, "walk", value, index=["title", "body.notes[*]"])
    assert wb.get("langgraph/alice/travel/walk").text == "Harbour walk\ngulls\nferries"
    parts = wb.parts("langgraph/alice/travel/walk")
    assert [(p.kind, p.title) for p in parts] == [
        ("field", "title"),
        ("field", "body.notes[*]"),
        ("field", "body.notes[*]"),
    ]
    assert [p.text for p in parts] == ["Harbour walk", "gulls", "ferries"]
    assert wb.get("langgraph/alice/travel/walk@P{2}").text == "gulls"
    store.put(NS, "count", {"n": 1})  # no text at all: the JSON is embedded
    assert wb.get("langgraph/alice/travel/count").text == '{"n": 1}'
    store.put(NS, "untitled", {"n": 2}, index=["title"])  # no text at its paths: unscored
    found = store.search(NS, query="harbour gulls")
    assert found[0].key == "walk" and found[-1].key == "untitled" and found[-1].score is None


def test_each_indexed_field_scores_on_its_own(wb: Workbench) -> None:
    store = KeepuiStore(wb, index_fields=["a", "b", "c"], search_mode="dense")
    store.put(NS, "one", {"a": "lighthouse keeper", "b": "rye bread", "z": "glacier"})
    store.put(NS, "two", {"a": "orchestra cello", "b": "tram timetable", "c": "lighthouse keeper"})
    store.put(NS, "three", {"a": "orchestra cello", "b": "rye bread"})
    found = store.search(NS, query="lighthouse keeper")
    assert {i.key for i in found[:2]} == {"one", "two"}
    assert found[0].score == found[1].score == 1.0  # a dense score is the best field's cosine
    assert found[2].key == "three" and found[2].score is not None and found[2].score < 1.0
    glacier = {i.key: i.score for i in store.search(NS, query="glacier")}
    assert glacier["one"] is not None and glacier["one"] < 1.0  # "z" is not indexed
    assert len(store.search(NS, query="lighthouse keeper", limit=2)) == 2
    close = KeepuiStore(wb, min_score=0.99, search_mode="dense")
    assert {i.key for i in close.search(NS, query="lighthouse keeper")} == {"one", "two"}


def test_items_with_weak_evidence_fill_the_limit(store: KeepuiStore) -> None:
    store.put(NS, "tea", {"text": "green tea with mint"})
    store.put(NS, "bus", {"text": "night bus timetable"})
    store.put(NS, "fern", {"text": "fern spores"})
    found = store.search(NS, query="green tea")
    assert found[0].key == "tea" and {i.key for i in found} == {"tea", "bus", "fern"}
    assert found[0].score is not None and all(
        i.score is not None and 0 <= i.score < found[0].score for i in found[1:]
    )
    assert len(store.search(NS, query="green tea", limit=2)) == 2
    strict = KeepuiStore(store.workbench, namespace_keys=("user", "project"), min_score=0.2)
    assert [i.key for i in strict.search(NS, query="green tea")] == ["tea"]


def test_only_a_workbench_makes_a_store(tmp_path: Path) -> None:
    for wrong in (tmp_path, str(tmp_path), None):
        with pytest.raises(TypeError, match=r"KeepuiStore\.from_store\(path\)"):
            KeepuiStore(wrong)  # type: ignore[arg-type]


def test_namespaces_are_isolated(store: KeepuiStore) -> None:
    store.put(("alice",), "m", {"text": "likes pizza"})
    store.put(("bob",), "m", {"text": "likes pizza"})
    store.put(("alice", "sub"), "m", {"text": "likes pizza"})
    assert {i.namespace for i in store.search(("alice",), query="pizza")} == {
        ("alice",),
        ("alice", "sub"),
    }
    assert [i.namespace for i in store.search(("bob",))] == [("bob",)]
    assert store.get(("carol",), "m") is None
    other = KeepuiStore(store.workbench, collection="elsewhere")
    assert other.search(()) == [] and other.list_namespaces() == []
    other.put(("alice",), "m", {"text": "another app"})
    assert store.get(("alice",), "m").value == {"text": "likes pizza"}  # type: ignore[union-attr]


def test_query_search_overfetches_past_filtered_hits(store: KeepuiStore) -> None:
    for i in range(60):
        store.put(NS, f"m{i}", {"text": f"pizza night number {i}", "n": i % 20})
    found = store.search(NS, query="pizza night", filter={"n": 7}, limit=2)
    assert len(found) == 2 and all(i.value["n"] == 7 for i in found)
    assert all(i.score is not None for i in found)
    rest = store.search(NS, query="pizza night", filter={"n": 7}, limit=5, offset=2)
    assert len(rest) == 1 and rest[0].key not in {i.key for i in found}
    page = store.search(NS, filter={"n": {"$gte": 18}}, limit=10)
    assert sorted(i.value["n"] for i in page) == [18, 18, 18, 19, 19, 19]


def test_hits_come_back_with_their_current_value(store: KeepuiStore, wb: Workbench) -> None:
    sections = [("Harbour", "boat", "lighthouse keeper"), ("Mountains", "peak", "glacier crevasse")]
    sections.append(("Kitchen", "pan", "sourdough starter"))
    long_value = {"text": "\n\n".join(f"# {t}\n{words(200, s)} {end}" for t, s, end in sections)}
    store.put(NS, "atlas", long_value)
    by_words = KeepuiStore(wb, namespace_keys=("user", "project"), search_mode="bm25")
    assert wb.find("glacier crevasse", mode="bm25").hits[0].matched.endswith("@P{2}")
    hits = by_words.search(NS, query="glacier crevasse")
    assert [h.key for h in hits] == ["atlas"] and hits[0].value == long_value
    store.put(NS, "food", {"text": "rye bread recipe"})
    before = store.search(NS, query="rye bread")[0]
    assert before.key == "food" and before.score is not None
    store.put(NS, "food", {"text": "tomato soup recipe"})
    after = next(h for h in store.search(NS, query="rye bread") if h.key == "food")
    assert after.value == {"text": "tomato soup recipe"}
    assert after.score is not None and after.score < before.score  # the old value is not searched


def test_batch_runs_in_order(store: KeepuiStore) -> None:
    results = store.batch(
        [
            PutOp(NS, "a", {"v": 1}),
            PutOp(NS, "a", {"v": 2}),
            GetOp(NS, "a"),
            PutOp(NS, "a", None),
            GetOp(NS, "a"),
            PutOp(("bob",), "b", {"v": 3}),
            SearchOp((), None, 10, 0, None),
            ListNamespacesOp(None, None, 10, 0),
        ]
    )
    assert results[:2] == [None, None]
    assert results[2].value == {"v": 2}  # type: ignore[union-attr]
    assert results[3:5] == [None, None]
    assert [i.key for i in results[6]] == ["b"]  # type: ignore[union-attr]
    assert results[7] == [("bob",)]


def test_bad_filter_and_bad_keys_are_refused(wb: Workbench) -> None:
    store = KeepuiStore(wb)
    store.put(NS, "a", {"n": 1})
    with pytest.raises(ValueError, match="operator"):
        store.search(NS, filter={"n": {"$in": [1]}})
    for keys in [("1user",), ("user", "USER"), ("lg_key",), ("ns1",)]:
        with pytest.raises(ValueError):
            KeepuiStore(wb, namespace_keys=keys)
    KeepuiStore(wb, namespace_keys=("ns0", "Project"))  # its own position; case-folded


async def test_async_methods(store: KeepuiStore) -> None:
    await store.aput(NS, "a", {"text": "async pizza", "n": 1})
    await store.aput(("bob",), "b", {"text": "async chess", "n": 2})
    got = await store.aget(NS, "a")
    assert got is not None and got.value["n"] == 1
    found = await store.asearch((), query="pizza")
    assert [i.key for i in found] == ["a", "b"]  # "b" has no evidence: after, lower
    assert found[0].score is not None and found[1].score is not None
    assert found[0].score > found[1].score
    assert await store.alist_namespaces(prefix=("bob",)) == [("bob",)]
    results = await store.abatch([GetOp(("bob",), "b"), PutOp(("bob",), "b", None)])
    assert results[0].value["n"] == 2 and results[1] is None  # type: ignore[union-attr]
    await store.adelete(NS, "a")
    assert await store.aget(NS, "a") is None and await store.aget(("bob",), "b") is None


def test_items_are_visible_to_the_cli_through_a_serving_store(tmp_path: Path) -> None:
    # DuckDB only: a PostgreSQL store has no serving socket (every process connects directly)
    store_dir = make_fake_store(tmp_path / "store")
    with KeepuiStore.from_store(store_dir, namespace_keys=("user",)) as owner:
        assert owner.workbench.owns_store  # and serves: the CLI below goes through it
        owner.put(("alice",), "m1", {"text": "Alice likes pizza margherita"})
        owner.put(("alice", "work"), "m2", {"text": "Alice reviews the pizza budget"})
        owner.put(("bob",), "m1", {"text": "Bob likes pizza too"})
        client = KeepuiStore.from_store(store_dir, namespace_keys=("user",))
        assert not client.workbench.owns_store
        assert client.get(("alice",), "m1").value["text"].startswith("Alice")  # type: ignore[union-attr]
        listed = run_cli(store_dir, "list", "-t", "user=alice", "--json")
        assert listed.returncode == 0, listed.stderr
        ids = {i["id"] for i in json.loads(listed.stdout)["items"]}
        assert ids == {"langgraph/alice/m1", "langgraph/alice/work/m2"}
        found = run_cli(store_dir, "find", "pizza", "-t", "user=alice", "-t", "ns1", "--json")
        assert found.returncode == 0, found.stderr
        assert [h["id"] for h in json.loads(found.stdout)["hits"]] == ["langgraph/alice/work/m2"]
        client.close()
    with open_workbench(store_dir) as wb:  # released: a plain client sees the same
        assert KeepuiStore(wb, namespace_keys=("user",)).list_namespaces(max_depth=1) == [
            ("alice",),
            ("bob",),
        ]


def test_import_without_the_extra_names_it() -> None:
    code = (
        "import sys; sys.modules['langgraph.store.base'] = None\n"
        "try:\n    import keepui.agents.langchain\nexcept ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "pip install 'keepui[langchain]'" in out.stdout, out.stderr

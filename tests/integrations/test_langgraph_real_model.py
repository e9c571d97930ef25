"""KeepuiStore with the real default model: a memory is found by meaning, not by shared words."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from keepui.agents.langchain import KeepuiRetriever, KeepuiStore
from keepui_engine import open_workbench

pytestmark = pytest.mark.model

MEMORIES = {
    ("alice", "prefs"): {
        "diet": {"text": "Alice is vegetarian and never eats meat or fish.", "since": 2019},
        "travel": {"text": "Alice prefers window seats on long flights.", "since": 2021},
        "music": {"text": "Alice plays the cello in an amateur orchestra.", "since": 2015},
    },
    ("bob", "prefs"): {
        "diet": {"text": "Bob loves barbecue and grilled steak.", "since": 2020},
        "travel": {"text": "Bob always takes the night train instead of flying.", "since": 2018},
    },
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeepuiStore]:
    path: Path = tmp_path_factory.mktemp("real") / "store"
    with open_workbench(path, own=True) as wb:
        memory = KeepuiStore(wb, namespace_keys=("user", "kind"))
        for ns, items in MEMORIES.items():
            for key, value in items.items():
                memory.put(ns, key, value)
        yield memory


@pytest.mark.parametrize(
    ("prefix", "query", "expected"),
    [
        (("alice",), "what food should I cook for her dinner", "diet"),
        (("alice",), "which musical instrument", "music"),
        (("alice",), "booking an airplane ticket", "travel"),
        (("bob",), "does he enjoy meat", "diet"),
        (("bob",), "how does he get around on trips", "travel"),
    ],
)
def test_search_finds_the_memory_by_meaning(
    store: KeepuiStore, prefix: tuple[str, ...], query: str, expected: str
) -> None:
    hits = store.search(prefix, query=query, limit=3)
    assert hits[0].key == expected
    assert all(h.namespace[0] == prefix[0] for h in hits)
    assert hits[0].value == MEMORIES[(prefix[0], "prefs")][expected]


def test_filters_apply_to_semantic_results(store: KeepuiStore) -> None:
    hits = store.search((), query="favourite food", filter={"since": {"$gte": 2020}})
    assert {(h.namespace[0], h.key) for h in hits} <= {("bob", "diet"), ("alice", "travel")}
    assert hits[0].key == "diet" and hits[0].namespace == ("bob", "prefs")


def test_the_retriever_by_meaning_within_a_user(store: KeepuiStore) -> None:
    retriever = KeepuiRetriever(workbench=store.workbench, k=2, filter_tags=["user=alice"])
    docs = retriever.invoke("string instrument hobby")
    assert docs[0].page_content == "Alice plays the cello in an amateur orchestra."
    assert docs[0].metadata["id"] == "langgraph/alice/prefs/music"


def test_an_overwritten_memory_is_searched_by_its_new_value(store: KeepuiStore) -> None:
    memory = KeepuiStore(store.workbench, namespace_keys=("user", "kind"), collection="rewrite")
    ns, query = ("alice", "prefs"), "who never eats meat or fish?"
    memory.put(ns, "diet", {"text": "Alice is vegetarian and never eats meat or fish."})
    memory.put(ns, "music", {"text": "Alice plays the cello in an amateur orchestra."})
    before = memory.search(ns, query=query)
    assert before[0].key == "diet" and before[0].score is not None
    memory.put(ns, "diet", {"text": "Alice now eats steak and grilled salmon every week."})
    after = {h.key: h for h in memory.search(ns, query=query)}
    assert after["diet"].value["text"].startswith("Alice now eats steak")
    score = after["diet"].score
    assert score is not None and score < before[0].score - 0.1  # the old value no longer counts


def test_weak_memories_fill_the_limit_unless_min_score(store: KeepuiStore) -> None:
    hits = store.search(("alice",), query="which musical instrument", limit=3)
    assert [h.key for h in hits][0] == "music" and len(hits) == 3
    # hybrid: no shared word, so half of a cosine of about 0.47; the others share nothing
    strict = KeepuiStore(store.workbench, namespace_keys=("user", "kind"), min_score=0.1)
    found = strict.search(("alice",), query="which musical instrument")
    assert [h.key for h in found] == ["music"]

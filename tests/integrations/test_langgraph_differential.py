"""KeepuiStore against LangGraph's own InMemoryStore: random op sequences, the same answers.

Each seed runs a few hundred operations (puts with overwrites and None-deletes, gets,
searches with namespace prefixes and filters, list_namespaces with prefix, suffix and
max_depth) on both stores and compares every answer. Searches have no `query` here (the
reference has no embedder, so ranking is not comparable); result order may differ, so a
search is compared as a set of (namespace, key) with values, and a page by its size.

Two known differences of the reference are allowed for:
- Its range operators cast both sides to float, raising on non-numeric strings and on missing
  fields, so $gt/$gte/$lt/$lte are generated on the int field every value has.
- Its namespaces live in a defaultdict: a get on a namespace, or deleting its last item,
  leaves an empty namespace that list_namespaces reports. Only namespaces that hold an item
  count (as in LangGraph's Postgres store).
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from langgraph.store.base import BaseStore, Item
from langgraph.store.memory import InMemoryStore

from keepui.agents.langchain import KeepuiStore
from keepui_engine import Workbench

NAMESPACES = [
    ("users",),
    ("users", "alice"),
    ("users", "alice", "notes"),
    ("users", "bob"),
    ("users", "bob", "notes"),
    ("teams", "core"),
    ("teams", "core", "users"),
    ("odd label", "a/b", "x@V{1}"),
]
KEYS = ["k1", "k2", "k3", "pref/theme", "key with spaces", "x@P{2}", "q'uote"]
COLOURS = ["red", "green", "blue"]
RANGE_OPS = ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"]
ALL = 10_000


def random_value(rng: random.Random) -> dict[str, Any]:
    value: dict[str, Any] = {
        "n": rng.randint(0, 9),
        "colour": rng.choice(COLOURS),
        "text": " ".join(rng.choice(["memo", "likes", "pizza", "chess", "rain"]) for _ in "abc"),
    }
    if rng.random() < 0.5:
        value["opt"] = rng.choice(["x", "y"])
    if rng.random() < 0.3:
        value["nested"] = {"depth": rng.randint(0, 2), "tags": ["t", rng.choice("ab")]}
    return value


def random_filter(rng: random.Random) -> dict[str, Any] | None:
    filters: dict[str, Any] = {}
    if rng.random() < 0.6:
        op = rng.choice([*RANGE_OPS, "plain"])
        bound = rng.randint(0, 9)
        filters["n"] = bound if op == "plain" else {op: bound}
        if rng.random() < 0.3:  # a range: two operators on one field
            filters["n"] = {"$gte": min(bound, 4), "$lte": max(bound, 5)}
    if rng.random() < 0.4:
        field = rng.choice(["colour", "opt"])
        wanted = rng.choice([*COLOURS, "x", "y"])
        filters[field] = rng.choice([wanted, {"$eq": wanted}, {"$ne": wanted}])
    if rng.random() < 0.1:
        filters["nested"] = {"depth": rng.randint(0, 2)}
    return filters or None


def random_path(rng: random.Random) -> tuple[str, ...]:
    ns = rng.choice(NAMESPACES)
    path = list(ns[: rng.randint(1, len(ns))])
    if rng.random() < 0.3:
        path[rng.randrange(len(path))] = "*"
    return tuple(path)


def live_namespaces(ref: InMemoryStore, **conditions: Any) -> list[tuple[str, ...]]:
    """The reference's namespaces under the conditions, without its empty ones."""
    listed = ref.list_namespaces(**conditions, limit=ALL)
    return [ns for ns in listed if any(it.namespace == ns for it in ref.search(ns, limit=ALL))]


def same_item(mine: Item | None, ref: Item | None) -> None:
    if ref is None:
        assert mine is None
        return
    assert mine is not None
    assert (mine.namespace, mine.key, mine.value) == (ref.namespace, ref.key, ref.value)
    assert mine.created_at.tzinfo is not None and mine.updated_at >= mine.created_at


def check_search(mine: BaseStore, ref: BaseStore, rng: random.Random) -> None:
    prefix = rng.choice([(), *NAMESPACES])[: rng.randint(0, 3)]
    conditions = random_filter(rng)
    full_ref = ref.search(prefix, filter=conditions, limit=ALL)
    full_mine = mine.search(prefix, filter=conditions, limit=ALL)
    as_set = {(it.namespace, it.key, repr(it.value)) for it in full_ref}
    assert {(it.namespace, it.key, repr(it.value)) for it in full_mine} == as_set
    offset, limit = rng.randint(0, 4), rng.randint(1, 5)
    page_ref = ref.search(prefix, filter=conditions, limit=limit, offset=offset)
    page_mine = mine.search(prefix, filter=conditions, limit=limit, offset=offset)
    assert len(page_mine) == len(page_ref)
    assert [(i.namespace, i.key) for i in page_mine] == [
        (i.namespace, i.key) for i in full_mine[offset : offset + limit]
    ]


def check_list_namespaces(mine: BaseStore, ref: InMemoryStore, rng: random.Random) -> None:
    conditions: dict[str, Any] = {}
    if rng.random() < 0.5:
        conditions["prefix"] = random_path(rng)
    if rng.random() < 0.4:
        conditions["suffix"] = tuple(reversed(random_path(rng)))
    depth = rng.choice([None, None, 1, 2, 3])
    expected = live_namespaces(ref, **conditions)
    if depth is not None:
        expected = sorted({ns[:depth] for ns in expected})
    offset, limit = rng.choice([(0, ALL), (0, 2), (1, 3), (2, 100)])
    got = mine.list_namespaces(**conditions, max_depth=depth, limit=limit, offset=offset)
    assert got == expected[offset : offset + limit]


def run_sequence(mine: BaseStore, ref: InMemoryStore, seed: int, steps: int) -> None:
    rng = random.Random(seed)
    for _ in range(steps):
        roll = rng.random()
        ns, key = rng.choice(NAMESPACES), rng.choice(KEYS)
        if roll < 0.45:
            value = random_value(rng)
            mine.put(ns, key, value)
            ref.put(ns, key, value)
        elif roll < 0.55:
            mine.delete(ns, key)
            ref.delete(ns, key)
        elif roll < 0.7:
            same_item(mine.get(ns, key), ref.get(ns, key))
        elif roll < 0.88:
            check_search(mine, ref, rng)
        else:
            check_list_namespaces(mine, ref, rng)
    for ns in NAMESPACES:  # the end state, item by item
        for key in KEYS:
            same_item(mine.get(ns, key), ref.get(ns, key))


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_random_sequences_match_in_memory_store(wb: Workbench, seed: int) -> None:
    mine = KeepuiStore(wb, namespace_keys=("scope", "owner"))
    run_sequence(mine, InMemoryStore(), seed, steps=160)


def test_a_client_of_a_serving_owner_matches_too(wb: Workbench) -> None:
    from keepui_engine import open_workbench

    wb.serve(worker=False)
    client = open_workbench(wb.store)
    assert not client.owns_store
    run_sequence(KeepuiStore(client), InMemoryStore(), seed=99, steps=60)

"""The find pipeline: similarity, tag and time filters, decay, version lifting, caching."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from support import make_fake_store

from keepui_engine import FindQuery, PutSpec, StoreError, UsageError, Workbench, open_workbench
from keepui_engine.ops import engine as engine_mod
from keepui_engine.providers.fake import FakeEmbedder


@pytest.fixture
def store_dir(backend_dir: Path) -> Path:
    """The tests here that use store_dir or wb run on DuckDB and on PostgreSQL."""
    return backend_dir


def _at(monkeypatch: pytest.MonkeyPatch, when: datetime) -> None:
    monkeypatch.setattr(engine_mod, "_now", lambda: when)


def test_exact_text_ranks_first_with_separate_score_fields(wb: Workbench) -> None:
    wb.put("apples and pears", id="fruit")
    wb.put("engines and gears", id="machines")
    result = wb.find("apples and pears", mode="dense")
    top = result.hits[0]
    assert top.id == "fruit" and top.similarity == pytest.approx(1.0, abs=1e-5)
    assert 0.99 < top.decay <= 1.0 and top.score == pytest.approx(top.similarity * top.decay)
    assert result.method == "exact" and result.searched == 2


def test_tag_filters_and_across_keys(wb: Workbench) -> None:
    wb.put("alpha report", id="a", tags=["project=atlas", "status=open"])
    wb.put("alpha report two", id="b", tags=["project=atlas"])
    wb.put("alpha report three", id="c", tags=["project=zeus", "status=open"])
    ids = lambda **kw: sorted(h.id for h in wb.find("alpha report", **kw).hits)  # noqa: E731
    assert ids(tags=["project=atlas"]) == ["a", "b"]
    assert ids(tags=["project=atlas", "status=open"]) == ["a"]
    assert ids(tags=["status"]) == ["a", "c"]
    assert ids(tags=["project=nope"]) == []
    assert wb.find("alpha", tags=["project=nope"]).notes


def test_time_filters_use_timestamps_not_days(
    wb: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = datetime.utcnow()
    _at(monkeypatch, now - timedelta(hours=3))
    wb.put("morning standup notes", id="early")
    _at(monkeypatch, now - timedelta(minutes=10))
    wb.put("morning standup notes later", id="late")
    got = {h.id for h in wb.find("morning standup", since="PT1H").hits}
    assert got == {"late"}
    got = {h.id for h in wb.find("morning standup", until="PT1H").hits}
    assert got == {"early"}
    stamp = (now - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S")
    assert {h.id for h in wb.find("standup", since=stamp).hits} == {"late"}
    with pytest.raises(UsageError, match="--since"):
        wb.find("x", since="last tuesday")


def test_recency_decay_halves_at_the_half_life(
    wb: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    _at(monkeypatch, datetime.utcnow() - timedelta(days=30))
    wb.put("identical text", id="old")
    monkeypatch.undo()
    wb.put("identical text", id="new")
    hits = wb.find("identical text", dedup=False).hits
    assert [h.id for h in hits] == ["new", "old"]
    assert hits[1].decay == pytest.approx(0.5, rel=1e-3)
    assert hits[1].similarity == pytest.approx(hits[0].similarity, abs=1e-6)
    for mode in ("dense", "hybrid"):  # decay=False: relevance alone (the LangGraph adapter)
        plain = wb.find_query(FindQuery("identical text", dedup=False, mode=mode, decay=False))
        assert [h.decay for h in plain.hits] == [1.0, 1.0]


def test_decay_disabled_by_half_life_zero(tmp_path) -> None:  # type: ignore[no-untyped-def]
    store = make_fake_store(tmp_path / "s", half_life_days=0)
    with open_workbench(store, own=True) as bench:
        bench.put("timeless", id="t")
        assert bench.find("timeless").hits[0].decay == 1.0


def test_version_hits_lift_to_their_document(wb: Workbench) -> None:
    wb.put("first draft about volcanoes", id="doc")
    wb.put("final text about glaciers", id="doc")
    now = wb.find("first draft about volcanoes", mode="dense").hits
    assert [(h.id, h.matched, h.archived) for h in now] == [("doc", "doc", None)]
    assert wb.find("draft volcanoes", mode="bm25").hits == []
    hits = wb.find("first draft about volcanoes", history=True).hits
    assert len(hits) == 1 and hits[0].id == "doc"
    assert hits[0].version == 1 and hits[0].matched == "doc@V{1}"
    assert hits[0].summary == "first draft about volcanoes"
    assert hits[0].archived == {"version": 1, "of": 2, "text_differs": True}


def test_limit_and_bad_queries(wb: Workbench) -> None:
    wb.put_many([PutSpec(f"common words item {i}", id=f"i{i}") for i in range(30)])
    assert len(wb.find("common words", limit=7).hits) == 7
    with pytest.raises(UsageError):
        wb.find("  ")
    with pytest.raises(UsageError):
        wb.find("x", limit=0)


def test_embedding_cache_and_content_hash_dedup(store_dir) -> None:  # type: ignore[no-untyped-def]
    fake = FakeEmbedder()
    with open_workbench(store_dir, own=True, embedder=fake) as bench:
        bench.put("shared content", id="one")
        bench.put("shared content", id="two")
        assert fake.texts_embedded == 1
        bench.find("a repeated query")
        bench.find("a repeated query")
        assert fake.texts_embedded == 2
    fake2 = FakeEmbedder()
    with open_workbench(store_dir, own=True, embedder=fake2) as bench:
        bench.find("a repeated query")
        assert fake2.texts_embedded == 0


def test_model_change_needs_explicit_reindex(store_dir) -> None:  # type: ignore[no-untyped-def]
    with open_workbench(store_dir, own=True) as bench:
        bench.put("indexed with the fake model")

    class Other(FakeEmbedder):
        name = "another-model"

    with pytest.raises(StoreError, match="reindex"):
        open_workbench(store_dir, own=True, embedder=Other())


def test_hnsw_path_above_the_exact_limit(tmp_path) -> None:  # type: ignore[no-untyped-def]
    store = make_fake_store(tmp_path / "s", exact_max_vectors=500)
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(400)]
    texts = [" ".join(rng.choice(words, 8)) + f" uniq{i}" for i in range(3000)]
    with open_workbench(store, own=True) as bench:
        bench.put_many([PutSpec(t, id=f"d{i}") for i, t in enumerate(texts)])
        assert list(store.glob("vectors.*.hnsw"))
        for i in (5, 1500, 2999):
            result = bench.find(texts[i], limit=5)
            assert result.method == "hnsw"
            assert result.hits[0].id == f"d{i}"
        filtered = bench.find(texts[10], tags=["none"], limit=5)
        assert filtered.hits == []


def test_reindex_after_a_model_change(store_dir) -> None:  # type: ignore[no-untyped-def]
    with open_workbench(store_dir, own=True) as bench:
        bench.put("first version text", id="r")
        bench.put("second version text", id="r")

    class Other(FakeEmbedder):
        name = "another-model"

    client = open_workbench(store_dir, embedder=Other(dim=32))
    with pytest.raises(StoreError, match="reindex"):
        client.find("x")
    stats = client.reindex()
    assert (stats.model, stats.dim, stats.vectors) == ("another-model", 32, 2)
    hits = client.find("first version text", history=True).hits
    assert hits[0].matched == "r@V{1}" and hits[0].similarity == pytest.approx(1.0, abs=1e-5)


def test_unreadable_hnsw_file_falls_back_to_exact(tmp_path) -> None:  # type: ignore[no-untyped-def]
    store = make_fake_store(tmp_path / "s", exact_max_vectors=200)
    texts = [f"item {i} with words w{i % 37} w{i % 11} uniq{i}" for i in range(2500)]
    with open_workbench(store, own=True) as bench:
        bench.put_many([PutSpec(t, id=f"d{i}") for i, t in enumerate(texts)])
    for path in store.glob("vectors.*.hnsw"):
        path.write_bytes(b"not a usearch index")
    with open_workbench(store, own=True) as bench:
        result = bench.find(texts[42], limit=3)
        assert result.hits[0].id == "d42" and result.method == "exact"


@pytest.mark.parametrize(
    ("mode", "fusion"), [("dense", None), ("bm25", None), ("hybrid", "score"), ("hybrid", "rrf")]
)
def test_same_text_in_an_archived_and_the_current_version_is_a_current_hit(
    wb: Workbench, mode: str, fusion: str | None
) -> None:
    wb.put("apples and pears from the orchard", id="fruit")
    wb.tag("fruit", tags=["season=autumn"])  # a new version, the same text
    wb.put("apples and pears from the orchard!", id="twin")
    wb.put("apples and pears from the orchard", id="twin")  # near-tie: the same words
    wb.put("engines and gears", id="machines")
    found = wb.find("apples pears orchard", mode=mode, fusion=fusion, dedup=False)
    hits = {h.id: h for h in found.hits}
    for doc_id in ("fruit", "twin"):
        assert (hits[doc_id].version, hits[doc_id].matched) == (0, doc_id)
    assert hits["fruit"].tags["season"] == "autumn"


def test_an_archived_version_that_scores_clearly_better_wins_only_under_history(
    wb: Workbench,
) -> None:
    wb.put("glacier crevasse rope team", id="doc")
    wb.put("glacier", id="doc")
    for mode in ("dense", "bm25", "hybrid"):
        assert wb.find("glacier crevasse rope team", mode=mode).hits[0].matched == "doc"
        old = wb.find("glacier crevasse rope team", mode=mode, history=True).hits[0]
        assert old.matched == "doc@V{1}" and old.archived is not None


def _unrelated(query: str) -> str:
    """A word whose fake vector points away from the query's (negative cosine)."""
    fake = FakeEmbedder()
    q = fake.embed([query])[0]
    for word in (f"w{i}" for i in range(500)):
        if float(fake.embed([word])[0] @ q) < -0.2:
            return word
    raise AssertionError("no unrelated word found")


@pytest.mark.parametrize(
    ("mode", "fusion"), [("dense", None), ("hybrid", "score"), ("hybrid", "rrf")]
)
def test_a_hit_with_no_evidence_is_hidden_and_counted(
    wb: Workbench, mode: str, fusion: str | None
) -> None:
    far = _unrelated("lighthouse keeper")
    wb.put("the lighthouse keeper", id="near")
    wb.put(far, id="far")
    result = wb.find("lighthouse keeper", mode=mode, fusion=fusion)
    assert [h.id for h in result.hits] == ["near"]
    assert result.hidden["no_evidence"] == 1
    assert any("no evidence" in n for n in result.notes)
    assert wb.find("lighthouse", mode="bm25").hidden["no_evidence"] == 0


def test_the_key_catalog_follows_every_write(tmp_path: Path) -> None:
    """An owner keeps every key's document and versions in memory between writes: after a
    put, a new version, a delete and a purge it equals the table, and finds name the current
    versions only (a stale catalog would keep the purged document or the old version)."""
    from keepui_engine.store.tables.catalog import KeyCatalog

    store = make_fake_store(tmp_path / "s")
    with open_workbench(store, own=True) as wb:
        engine = wb._engine  # noqa: SLF001 - the cached catalog against the table
        assert engine is not None

        def table() -> list[tuple[int, str, int, int]]:
            return engine.store.con.execute(
                "SELECT key, doc_id, version, head FROM vector_keys ORDER BY key"
            ).fetchall()

        def check() -> None:
            got = engine.catalog()
            assert got is not None
            rows = list(zip(got.keys.tolist(), got.doc_ids.tolist(), got.versions.tolist(),
                            got.heads.tolist(), strict=True))  # fmt: skip
            assert rows == table()
            assert engine.current_keys().tolist() == [r[0] for r in rows if r[2] == r[3]]

        wb.put("the heron waits by the river", id="heron")
        wb.put("the kingfisher dives into the river", id="kingfisher")
        check()
        wb.put("the heron flies over the marsh", id="heron")  # a new version
        check()
        assert [h.id for h in wb.find("heron marsh river", mode="bm25").hits][0] == "heron"
        assert all(h.version == 0 for h in wb.find("heron", mode="bm25").hits if h.id == "heron")
        wb.delete("kingfisher", purge=True)
        check()
        assert "kingfisher" not in [h.id for h in wb.find("kingfisher dives").hits]
        cat = KeyCatalog.read(engine.store.con)
        keys = [r[0] for r in table()]
        assert cat.lookup([10**9, keys[-1], keys[0]]) == [
            (keys[-1], *table()[-1][1:]),
            (keys[0], *table()[0][1:]),
        ]
        assert cat.lookup([]) == []

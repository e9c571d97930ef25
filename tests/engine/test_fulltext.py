"""The BM25 channel: tokenization, tail and base agreement, no stale hits, fusion provenance."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import make_fake_store

from keepui_engine import PutSpec, Workbench, open_workbench
from keepui_engine.store.duckdb import fulltext as ft


@pytest.fixture
def store_dir(backend_dir: Path) -> Path:
    """The tests here that use store_dir or wb run on DuckDB and on PostgreSQL."""
    return backend_dir


TEXTS = [
    "The quick brown fox jumps over the lazy dog",
    "Running runners ran quickly through Paris streets",
    "DuckDB stores columnar tables in a single file",
    "A lazy afternoon with tea and biscuits",
    "Vector search with usearch and cosine similarity",
    "The fox and the hound are old friends",
]


def test_tokenizer_matches_bm25s() -> None:
    bm25s = pytest.importorskip("bm25s")
    import Stemmer

    texts = [*TEXTS, "Ünïcode wörds, e-mail x@y.z and 3.14 numbers; it's THE end!"]
    expected = bm25s.tokenize(
        texts,
        stopwords="en",
        stemmer=Stemmer.Stemmer("english"),
        return_ids=False,
        show_progress=False,
    )
    assert ft.Tokenizer()(texts) == [list(t) for t in expected]


def _bm25(wb: Workbench, query: str, **kw: object) -> list[tuple[str, float]]:
    return [(h.id, h.scores["bm25"]) for h in wb.find(query, mode="bm25", **kw).hits]  # type: ignore[arg-type, misc]


def test_tail_and_rebuilt_base_score_alike(wb: Workbench, backend: str) -> None:
    if backend == "postgres":
        pytest.skip("no base index to rebuild on PostgreSQL (tests/postgres compares the scores)")
    wb.put_many([PutSpec(t, id=f"t{i}") for i, t in enumerate(TEXTS)])
    before = _bm25(wb, "lazy fox")
    assert [d for d, _ in before][:2] == ["t0", "t5"] or [d for d, _ in before][0] == "t0"
    engine = wb._engine  # noqa: SLF001 - force a base rebuild to compare the two paths
    assert engine is not None
    from keepui_engine.store.tables import documents

    keys, texts = documents.texts_for_keys(engine.store.con)
    engine.fulltext.rebuild(keys, texts)
    after = _bm25(wb, "lazy fox")
    assert [d for d, _ in after] == [d for d, _ in before]
    for (_, a), (_, b) in zip(before, after, strict=True):
        assert a == pytest.approx(b, rel=1e-5)


@pytest.mark.parametrize("rebuild", [False, True])
def test_no_stale_hits_after_delete_revert_and_purge(
    store_dir, rebuild: bool, backend: str
) -> None:  # type: ignore[no-untyped-def]
    if rebuild and backend == "postgres":
        pytest.skip("no base index to rebuild on PostgreSQL")
    with open_workbench(store_dir, own=True) as wb:
        wb.put("zebra crossing notes", id="z")
        wb.put("giraffe feeding schedule", id="z")
        wb.put("pelican migration", id="p")
        wb.put("another pelican story", id="q")
        if rebuild:
            engine = wb._engine  # noqa: SLF001
            from keepui_engine.store.tables import documents

            engine.fulltext.rebuild(*documents.texts_for_keys(engine.store.con))  # type: ignore[union-attr]
        assert _bm25(wb, "zebra") == []  # archived: only --history finds it
        assert [d for d, _ in _bm25(wb, "zebra", history=True)] == ["z"]
        wb.delete("z")  # revert: giraffe version gone
        assert _bm25(wb, "giraffe", history=True) == []
        assert [d for d, _ in _bm25(wb, "zebra")] == ["z"]
        wb.delete("p", purge=True)
        assert [d for d, _ in _bm25(wb, "pelican")] == ["q"]
        wb.tag("q", tags=["kind=bird"])
        assert [d for d, _ in _bm25(wb, "pelican", tags=["kind=bird"])] == ["q"]
        assert _bm25(wb, "pelican", tags=["kind=fish"]) == []


def test_rebuild_happens_when_the_tail_grows(tmp_path) -> None:  # type: ignore[no-untyped-def]
    store = make_fake_store(tmp_path / "s")
    with open_workbench(store, own=True) as wb:
        wb.put_many(
            [
                PutSpec(f"document number {i} about topic{i % 9}", id=f"d{i}")
                for i in range(ft.TAIL_MIN + 50)
            ]
        )
        assert list((store / "bm25").glob("g*/stats.json"))
        engine = wb._engine  # noqa: SLF001
        tail = engine.store.con.execute("SELECT count(*) FROM bm25_tail").fetchone()  # type: ignore[union-attr]
        assert tail == (0,)
        hits = _bm25(wb, "topic3")
        assert {d for d, _ in hits} <= {f"d{i}" for i in range(3, 250, 9)} and hits


def test_share_fusion_is_the_mean_of_cosine_and_bm25_share(wb: Workbench) -> None:
    wb.put_many([PutSpec(t, id=f"t{i}") for i, t in enumerate(TEXTS)])
    result = wb.find("lazy fox", limit=20, fusion="share")
    assert result.mode == "hybrid"
    engine = wb._engine  # noqa: SLF001 - the BM25 upper bound is engine-side
    assert engine is not None
    upper = engine.fulltext.upper_bound("lazy fox")
    assert upper > 0
    for hit in result.hits:
        s = hit.scores
        assert s["bm25"] is None or s["bm25"] < upper
        words = (s["bm25"] or 0) / upper
        assert s["fused"] == pytest.approx((max(hit.similarity or 0, 0) + words) / 2)
        assert s["final"] == pytest.approx(s["fused"] * s["decay"]) == pytest.approx(hit.score)


def test_hybrid_provenance_is_consistent(wb: Workbench) -> None:
    wb.put_many([PutSpec(t, id=f"t{i}") for i, t in enumerate(TEXTS)])
    result = wb.find("lazy fox", mode="hybrid", fusion="rrf")
    assert result.mode == "hybrid"
    for hit in result.hits:
        s = hit.scores
        assert set(s) == {"dense", "dense_rank", "bm25", "bm25_rank", "fused", "decay", "final"}
        expected = sum(1 / (60 + r) for r in (s["dense_rank"], s["bm25_rank"]) if r)
        assert s["fused"] == pytest.approx(expected)
        assert s["final"] == pytest.approx(s["fused"] * s["decay"]) == pytest.approx(hit.score)
        assert hit.similarity is not None
    finals = [h.score for h in result.hits]
    assert finals == sorted(finals, reverse=True)
    dense = wb.find("lazy fox", mode="dense").hits[0].scores
    assert dense["bm25"] is None and dense["fused"] is None and dense["dense_rank"] == 1


def test_an_unknown_fusion_is_a_config_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    store = make_fake_store(tmp_path / "s")
    toml = store / "keepui.toml"
    toml.write_text(toml.read_text().replace('fusion = "score"', 'fusion = "max"'))
    from keepui_engine import ConfigError

    with pytest.raises(ConfigError, match="fusion"):
        open_workbench(store)


def _long(word: str, n: int = 1400) -> str:
    """A text of `n` words the fake embedder (510-word window) splits into passages, with
    `word` once in every sentence."""
    sentence = f"The committee met again and noted {word} in the minutes of the day."
    return " ".join([sentence] * (n // 13))


def test_a_word_counts_once_per_document_and_passages_keep_their_own_length(
    wb: Workbench, backend: str
) -> None:
    """idf counts whole texts: a word all of a long document's passages hold is as rare as a
    word one short note holds; base and tail score a store with passages alike."""
    if backend == "postgres":
        pytest.skip("PostgreSQL's statistics: tests/postgres")
    wb.put_many(
        [
            PutSpec(_long("quinoa"), id="long"),
            PutSpec("a note about saffron and the minutes", id="short"),
            *[PutSpec(t, id=f"t{i}") for i, t in enumerate(TEXTS)],
        ]
    )
    assert len(wb.parts("long")) >= 3
    engine = wb._engine  # noqa: SLF001 - compare the tail with a rebuilt base
    assert engine is not None
    idf = engine.fulltext.idf
    assert idf("quinoa")[0] == pytest.approx(idf("saffron")[0])
    before = _bm25(wb, "quinoa minutes saffron")
    from keepui_engine.store.tables import documents

    engine.fulltext.rebuild(*documents.texts_for_keys(engine.store.con))
    assert idf("quinoa")[0] == pytest.approx(idf("saffron")[0])
    after = _bm25(wb, "quinoa minutes saffron")
    assert [d for d, _ in after] == [d for d, _ in before]
    for (_, a), (_, b) in zip(before, after, strict=True):
        assert a == pytest.approx(b, rel=1e-5)


def test_restat_recovers_term_counts_exactly() -> None:
    bm25s = pytest.importorskip("bm25s")
    import numpy as np

    from keepui_engine.store.tables import bm25_stats

    tokens = [["a"] * 7 + ["b"], ["a", "c"] * 40, ["b"] * 300 + ["c"], ["c"]]
    lengths = np.asarray([len(t) for t in tokens], np.float64)
    passage = np.asarray([False, True, True, False])
    model = bm25s.BM25(k1=ft.K1, b=ft.B, method="lucene")
    model.index(tokens, show_progress=False)
    df = bm25_stats.restat(model.scores, lengths, passage, ft.K1, ft.B)
    stats = bm25_stats.kinds(lengths, passage)
    for term, tid in model.vocab_dict.items():
        if not term:
            continue  # bm25s's padding token has no column
        lo, hi = model.scores["indptr"][tid], model.scores["indptr"][tid + 1]
        docs = model.scores["indices"][lo:hi]
        assert df[tid] == sum(1 for d in docs if not passage[d])
        tf = np.asarray([tokens[d].count(term) for d in docs], np.float64)
        want = bm25_stats.postings(
            tf, lengths[docs], np.full(len(docs), float(df[tid])), passage[docs], stats, ft.K1, ft.B
        )
        assert model.scores["data"][lo:hi] == pytest.approx(want, rel=1e-5)


def test_cached_statistics_follow_every_write_and_ignore_a_rolled_back_one(
    store_dir: Path, backend: str
) -> None:
    """A long-lived process keeps the tail's statistics between writes: after each put, and
    after a transaction that wrote the tail and rolled back, its idf and scores equal those of
    a channel that reads everything afresh."""
    if backend == "postgres":
        pytest.skip("the DuckDB channel's cache (PostgreSQL keeps its statistics in tables)")
    wb = open_workbench(store_dir, own=True)
    try:
        engine = wb._engine  # noqa: SLF001 - the channel's statistics, against a fresh reader
        assert engine is not None
        fresh = ft.FullText(engine.store.root, engine.store.con)  # no stamp: never cached
        cached = engine.fulltext
        assert isinstance(cached, ft.FullText)
        query = "lazy fox biscuits"
        for i, text in enumerate(TEXTS):
            wb.put(text, id=f"t{i}")
            _bm25(wb, query)  # fills the caches
            assert list(cached.idf(query)) == pytest.approx(list(fresh.idf(query)))
            assert cached._kinds() == fresh._kinds()  # noqa: SLF001
        from keepui_engine.store.tables.postings import add_tail

        before = _bm25(wb, query)
        with pytest.raises(RuntimeError), engine.store.transaction():
            add_tail(engine.store.con, [999_999], ["lazy lazy fox"], cached.tokenize, [False])
            assert list(cached.idf(query)) == pytest.approx(list(fresh.idf(query)))
            raise RuntimeError("rolled back")
        assert list(cached.idf(query)) == pytest.approx(list(fresh.idf(query)))
        assert _bm25(wb, query) == before
    finally:
        wb.close()

"""Passages: a text longer than one MiniLM window is split so every word gets a vector."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import make_fake_store

from keepui_engine import PutSpec, open_workbench
from keepui_engine.client.settings import load_settings
from keepui_engine.core.config import Settings
from keepui_engine.ingest.splitting import split, windows
from keepui_engine.search.evaluation import scratch_store


def test_passage_settings_make_windows_a_vector_can_see(tmp_path: Path) -> None:
    st = load_settings(tmp_path / "store")
    assert (st.chunk_size, st.chunk_overlap, st.min_chunk_size) == (0, 32, 50)  # the window
    assert Settings(store=tmp_path).chunk_size == 0
    abstract = " ".join(f"w{i}" for i in range(220))  # a SciFact abstract: ~220 words
    parts = split(abstract, chunk_size=160, overlap=40)
    assert [p.position for p in parts] == [
        f"section 1, words 1-160, chars 0-{abstract.index(' w160')}",
        f"section 1, words 121-220, chars {abstract.index('w120')}-{len(abstract)}",
    ]
    assert split(" ".join(["w"] * 160), chunk_size=160, overlap=40) == []
    assert split(abstract, chunk_size=254, overlap=st.chunk_overlap) == []


def test_windows_end_at_sentence_ends_where_they_can() -> None:
    text = " ".join(f"Sentence {n} has some words in it and then it stops here." for n in range(12))
    words = text.split()  # 12 words a sentence
    got = windows(words, 40, 10)
    assert all(words[end - 1].endswith(".") for _, end in got)
    assert all(start % 12 == 0 for start, _ in got)  # each window starts a sentence
    assert got[0] == (0, 36) and got[-1][1] == len(words)
    assert all(b[0] < a[1] for a, b in zip(got, got[1:], strict=False))  # they overlap
    no_ends = ["x"] * 100  # no sentence end: plain windows, as before
    assert windows(no_ends, 40, 10) == [(0, 40), (30, 70), (60, 100)]


def test_a_channel_fetches_documents_not_keys(tmp_path: Path) -> None:
    # One long text's 30 passages all match; the notes behind them must still be fetched.
    store = make_fake_store(tmp_path / "store", chunk_size=20, chunk_overlap=5)
    long = " ".join(f"glacier ice field {n} melts slowly in the sun." for n in range(60))
    with open_workbench(store, own=True) as wb:
        wb.put(long, id="long")
        assert len(wb.parts("long")) >= 30
        wb.put_many([PutSpec(f"note {n} about a glacier walk", id=f"n{n}") for n in range(12)])
        for mode in ("bm25", "hybrid"):
            hits = wb.find("glacier", mode=mode, limit=10).hits
            assert len(hits) == 10 and len({h.id for h in hits}) == 10
            assert {h.id for h in hits} - {"long"} <= {f"n{n}" for n in range(12)}


def test_eval_scratch_stores_are_keyed_by_split_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A store split another way has other parts: eval must not reuse it for other settings.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "a", "text": "one short document"}\n')
    default = scratch_store(corpus, "all-MiniLM-L6-v2")
    assert default.parent == tmp_path / "cache" / "keepui" / "eval"
    assert default == scratch_store(corpus, "all-MiniLM-L6-v2", (0, 32, 50))
    assert default != scratch_store(corpus, "all-MiniLM-L6-v2", (160, 40, 50))
    assert default != scratch_store(corpus, "another-model")

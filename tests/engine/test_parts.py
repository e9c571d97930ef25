"""Parts: splitting by structure then size, part keys, lifting part hits, and upkeep."""

from __future__ import annotations

import pytest

from keepui_engine import FindResult, Hit, NotFound, Workbench
from keepui_engine.ingest.splitting import Block, split
from keepui_engine.search.ranking import excerpt
from keepui_engine.store.tables.parts import span_of


def words(n: int, stem: str) -> str:
    return " ".join(f"{stem}{i % 7}" for i in range(n))


def test_short_text_is_not_split_and_long_text_is_windowed_with_overlap() -> None:
    assert split("a short note") == []
    text = " ".join(str(i) for i in range(1200))
    parts = split(text, chunk_size=512, overlap=64)
    assert [p.text.split()[0] for p in parts] == ["0", "448", "896"]
    assert (
        len(parts[0].text.split()) == 512
        and parts[1].text.split()[:64] == parts[0].text.split()[-64:]
    )
    assert parts[-1].text.split()[-1] == "1199"


def test_structure_first_pages_stay_whole_and_small_paragraphs_merge() -> None:
    pages = [Block(f"page text {i}", "page", i) for i in (1, 2, 3)]
    got = split("", pages)
    assert [p.position for p in got] == ["page 1", "page 2", "page 3"]
    text = "\n\n".join([words(30, "a"), words(30, "b"), words(400, "c"), words(300, "d")])
    got = split(text)
    last = text.index(words(300, "d"))
    assert [p.position for p in got] == [
        f"sections 1-3, chars 0-{last - 2}",  # the blank line between them is neither's
        f"section 4, chars {last}-{len(text)}",
    ]
    for p in got:  # the span is where the part's words sit in the text
        start, end = span_of(p.position) or [0, 0]
        assert text[start:end].split() == p.text.split()
    md = "# Intro\n" + words(300, "x") + "\n\n# Method\n" + words(300, "y")
    got = split(md)
    assert [p.title for p in got] == ["Intro", "Method"]
    with pytest.raises(ValueError):
        split(text, chunk_size=10, overlap=10)


LONG = "\n\n".join(
    [
        "# Harbour\n" + words(200, "boat") + " lighthouse keeper",
        "# Mountains\n" + words(200, "peak") + " glacier crevasse",
        "# Kitchen\n" + words(200, "pan") + " sourdough starter",
    ]
)


def test_put_splits_long_text_and_find_lifts_a_part_hit(wb: Workbench) -> None:
    wb.put(LONG, id="atlas")
    wb.put("a note about something else entirely", id="other")
    parts = wb.parts("atlas")
    assert [p.address for p in parts] == ["atlas@P{1}", "atlas@P{2}", "atlas@P{3}"]
    assert parts[1].title == "Mountains" and "glacier" in parts[1].text
    hits = wb.find("glacier crevasse", mode="bm25").hits
    assert hits[0].id == "atlas" and hits[0].matched == "atlas@P{2}"
    part = hits[0].part or {}
    assert part["index"] == 2 and part["title"] == "Mountains"
    assert part["excerpt"].endswith("glacier crevasse") and len(part["excerpt"]) <= 201
    item = wb.get("atlas@P{3}")
    start = LONG.index("# Kitchen")
    assert item.part == {
        "index": 3,
        "count": 3,
        "title": "Kitchen",
        "kind": "heading",
        "position": f"section 3, chars {start}-{len(LONG)}",
        "span": [start, len(LONG)],
    }
    assert "sourdough" in (item.text or "") and wb.get("atlas").part is None
    with pytest.raises(NotFound, match="no part 9"):
        wb.get("atlas@P{9}")
    assert wb.parts("other") == []


def test_parts_follow_tags_versions_and_deletes(wb: Workbench) -> None:
    wb.put(LONG, id="atlas")
    wb.tag("atlas", tags=["topic=places"])
    assert len(wb.parts("atlas")) == 3
    hits = wb.find("glacier crevasse", mode="bm25", tags=["topic=places"]).hits
    assert hits and hits[0].matched == "atlas@P{2}"
    wb.put("now a short text", id="atlas")
    assert wb.parts("atlas") == [] and len(wb.parts("atlas", 1)) == 3
    assert wb.find("glacier crevasse", mode="bm25").hits == []  # the current text is short
    archived = wb.find("glacier crevasse", mode="bm25", history=True).hits
    assert archived[0].matched == "atlas@V{1}@P{2}" and archived[0].version == 1
    assert (archived[0].part or {})["title"] == "Mountains"
    wb.delete("atlas")  # revert to the tagged long version
    assert len(wb.parts("atlas")) == 3
    wb.delete("atlas", purge=True)
    assert wb.find("glacier crevasse", mode="bm25").hits == []


def test_a_part_hit_round_trips_through_dicts(wb: Workbench) -> None:
    wb.put(LONG, id="atlas")
    result = wb.find("glacier crevasse", mode="bm25")
    assert FindResult.from_dict(result.to_dict()) == result
    hit = result.hits[0].to_dict()
    assert hit["matched"] == "atlas@P{2}" and set(hit["part"]) == {
        "index",
        "title",
        "kind",
        "position",
        "span",
        "excerpt",
    }
    older = Hit.from_dict({**hit, "part": 2})  # a server from before the part object
    assert older.part == {"index": 2, "title": None, "excerpt": ""} and older.part_index == 2
    assert Hit.from_dict({**hit, "part": 0}).part is None


def test_an_excerpt_is_the_window_with_most_query_words() -> None:
    text = words(80, "filler") + " the glacier and a deep crevasse " + words(80, "more")
    got = excerpt(text, "glacier crevasse")
    assert got.startswith("…") and got.endswith("…") and len(got) <= 202
    assert "glacier and a deep crevasse" in got
    assert excerpt(text, "nothing matches").startswith("filler0 filler1")
    assert excerpt("a short text", "glacier") == "a short text"
    scattered = "glacier " + words(100, "pad") + " glacier crevasse " + words(100, "pad")
    assert "glacier crevasse" in excerpt(scattered, "glacier crevasse")

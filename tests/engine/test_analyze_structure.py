"""Analyze keeps a file's structure: pages, slides and headings stay the first cut.

Real files from ../shared/data/docs (a 15-page PDF, PPTX decks, a Wikipedia page) and DOCX
files built here with python-docx headings.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from support import make_fake_store

from keepui_engine import Workbench, open_workbench
from keepui_engine.ingest.splitting import Block, blocks_from_parts, split
from keepui_engine.store.tables import structure

DOCS = Path(__file__).resolve().parents[3] / "shared" / "data" / "docs"
needs_docs = pytest.mark.skipif(
    not DOCS.is_dir(), reason="../shared/data/docs (the real PDF/PPTX/HTML fixtures) is absent"
)
PDF = DOCS / "pdf" / "federal-register-2020-17221.pdf"
PPTX = DOCS / "pptx" / "ph-populated-placeholders.pptx"
HTML = DOCS / "html" / "wikipedia-mozilla.html"

Shape = list[tuple[str, str | None, str, str]]


def shape(wb: Workbench, doc_id: str) -> Shape:
    return [(p.kind, p.title, p.position, p.text) for p in wb.parts(doc_id)]


def put_file(wb: Workbench, path: Path) -> str:
    report = wb.ingest([str(path)], strict=True)
    doc_id = report.entries[0].id
    assert doc_id is not None
    return doc_id


def heading_docx(path: Path, sections: dict[str, str]) -> Path:
    import docx

    document = docx.Document()
    for title, body in sections.items():
        document.add_heading(title, level=1)
        for paragraph in body.split("\n\n"):
            document.add_paragraph(paragraph)
    document.save(str(path))
    return path


def words(n: int, stem: str) -> str:
    return " ".join(f"{stem}{i % 9}" for i in range(n))


SECTIONS = {
    "Harbour": words(150, "boat") + "\n\n" + words(150, "tide"),
    "Mountains": words(320, "peak"),
    "Kitchen": words(120, "pan") + "\n\n" + words(200, "oven"),
}


def assert_same_after_analyze(wb: Workbench, doc_id: str) -> Shape:
    """The first analyze after a put is a no-op; --force, queued or not, makes the same parts."""
    before = shape(wb, doc_id)
    assert wb.analyze(doc_id)["result"] == "unchanged since the last analyze"
    assert wb.analyze(doc_id, force=True)["parts"] == len(before)
    assert shape(wb, doc_id) == before
    assert "queued" in wb.analyze(doc_id, queue=True, force=True)
    assert "analyze" in [r["task"] for r in wb.drain()]
    assert shape(wb, doc_id) == before
    return before


@needs_docs
def test_pdf_pages_stay_the_first_cut_through_analyze_and_a_reopen(store_dir: Path) -> None:
    with open_workbench(store_dir, own=True) as wb:
        doc_id = put_file(wb, PDF)
        before = assert_same_after_analyze(wb, doc_id)
        assert {kind for kind, *_ in before} == {"page"}
        pages = {pos.split(",")[0] for _, _, pos, _ in before}
        assert len(pages) == 15 and "page 7" in pages and "page 15" in pages
        assert wb.get(doc_id).tags["_analyzed_hash"]
    with open_workbench(store_dir, own=True) as wb:
        assert wb.analyze(doc_id)["result"] == "unchanged since the last analyze"
        wb.analyze(doc_id, force=True)
        assert shape(wb, doc_id) == before


@needs_docs
def test_pptx_slides_and_html_headings_stay(wb: Workbench) -> None:
    deck = put_file(wb, PPTX)
    slides = assert_same_after_analyze(wb, deck)
    assert [pos.split(",")[0] for _, _, pos, _ in slides] == ["slide 5", "slide 6", "slide 7"]
    assert slides[0][1] == "Title Text"
    page = put_file(wb, HTML)
    sections = assert_same_after_analyze(wb, page)
    assert sections[0][1] == "Mozilla" and "History" in [title for _, title, _, _ in sections]


def test_docx_headings_survive_a_tag_change_and_a_literal_put_of_the_same_text(
    wb: Workbench, tmp_path: Path
) -> None:
    doc_id = put_file(wb, heading_docx(tmp_path / "handbook.docx", SECTIONS))
    before = assert_same_after_analyze(wb, doc_id)
    assert [title for _, title, _, _ in before] == list(SECTIONS)
    text = wb.get(doc_id).text or ""
    assert [p.title for p in split(text)] != list(SECTIONS)  # plain text alone loses them
    wb.tag(doc_id, tags=["topic=places"])  # a new version with the same text
    assert wb.analyze(doc_id)["result"] == "unchanged since the last analyze"
    wb.analyze(doc_id, force=True)
    assert shape(wb, doc_id) == before
    wb.put(text, id=doc_id, tags=["status=read"])  # the text again, without the file
    assert wb.get(doc_id).versions == 3 and shape(wb, doc_id) == before
    wb.analyze(doc_id, force=True)
    assert shape(wb, doc_id) == before


def test_new_split_settings_make_analyze_run_again(tmp_path: Path) -> None:
    store = make_fake_store(tmp_path / "store")
    with open_workbench(store, own=True) as wb:
        doc_id = put_file(wb, heading_docx(tmp_path / "handbook.docx", SECTIONS))
        assert len(wb.parts(doc_id)) == 3
    make_fake_store(store, chunk_size=200, chunk_overlap=20)
    with open_workbench(store, own=True) as wb:
        assert wb.analyze(doc_id)["result"] == "6 part(s)"
        got = shape(wb, doc_id)
        assert [title for _, title, _, _ in got] == [t for t in SECTIONS for _ in (1, 2)]
        assert got[1][2].startswith("section 1, words 181-301, chars ")
        assert wb.analyze(doc_id)["result"] == "unchanged since the last analyze"


@needs_docs
def test_a_store_older_than_the_structure_table_rebuilds_it_from_the_parts(
    store_dir: Path,
) -> None:
    with open_workbench(store_dir, own=True) as wb:
        doc_id = put_file(wb, PDF)
        before = shape(wb, doc_id)
    con = duckdb.connect(str(store_dir / "keepui.duckdb"))
    con.execute("DELETE FROM structure")
    con.close()
    with open_workbench(store_dir, own=True) as wb:
        wb.analyze(doc_id, force=True)
        assert shape(wb, doc_id) == before
    con = duckdb.connect(str(store_dir / "keepui.duckdb"))
    assert con.execute("SELECT count(*) FROM structure").fetchone() == (1,)
    con.close()


def test_structure_is_forgotten_with_the_versions_that_held_it(
    store_dir: Path, tmp_path: Path
) -> None:
    with open_workbench(store_dir, own=True) as wb:
        doc_id = put_file(wb, heading_docx(tmp_path / "a.docx", SECTIONS))
        wb.ingest([str(heading_docx(tmp_path / "a.docx", {"Only": words(600, "x")}))])
        wb.delete(doc_id)  # back to the first text: its structure stays
        assert [p.title for p in wb.parts(doc_id)] == list(SECTIONS)
    con = duckdb.connect(str(store_dir / "keepui.duckdb"))
    assert con.execute("SELECT count(*) FROM structure").fetchone() == (1,)
    con.close()
    with open_workbench(store_dir, own=True) as wb:
        wb.delete(doc_id, purge=True)
    con = duckdb.connect(str(store_dir / "keepui.duckdb"))
    assert con.execute("SELECT count(*) FROM structure").fetchone() == (0,)
    con.close()


def test_blocks_are_kept_as_spans_of_the_text() -> None:
    text = "Page one text.\n\nPage two text."
    blocks = [
        {"text": "Page one text.", "kind": "page", "index": 1, "title": None},
        {"text": "Page two text.", "kind": "page", "index": 2, "title": "Two"},
        {"text": "not in the text", "kind": "page", "index": 3, "title": None},
    ]
    stored = structure.encode(text, blocks)
    assert stored[1] == {"kind": "page", "index": 2, "title": "Two", "start": 16, "end": 30}
    assert stored[2]["text"] == "not in the text"
    assert structure.decode(text, stored) == blocks


def test_windows_of_one_page_join_back_into_one_block() -> None:
    page = " ".join(f"w{i}" for i in range(1100))
    parts = split("", [Block(page, "page", 4, "Four"), Block("short", "page", 5)])
    assert [p.position for p in parts][:2] == ["page 4, words 1-512", "page 4, words 449-960"]
    rebuilt = blocks_from_parts([(p.kind, p.title, p.position, p.text) for p in parts])
    assert rebuilt == [Block(page, "page", 4, "Four"), Block("short", "page", 5)]
    assert blocks_from_parts([("paragraph", None, "section 1", "x")]) is None

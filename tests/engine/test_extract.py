"""Extractors on real third-party files (../shared/data/docs) and small generated documents."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from keepui_engine.core.errors import UsageError
from keepui_engine.ingest.extract import extract
from keepui_engine.ingest.extracted import DOCX, PPTX, Extracted, ExtractError, Limits, sniff
from keepui_engine.ingest.ocr import ocr_available, ocr_image, ocr_pdf_pages

DOCS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "docs"


def doc_bytes(rel: str) -> bytes:
    path = DOCS / rel
    if not path.is_file():
        pytest.skip(
            f"shared fixture {path} is absent (expected ../shared/data/docs beside the repo)"
        )
    return path.read_bytes()


def run(rel: str, limits: Limits | None = None) -> Extracted:
    return extract(doc_bytes(rel), name=Path(rel).name, limits=limits or Limits())


needs_ocr = pytest.mark.skipif(
    not ocr_available(), reason="tesseract (with English data) is not installed"
)


def test_mp3_tags_and_findable_text() -> None:
    got = run("audio/silence-44-s-v1.mp3")
    assert got.content_type == "audio/mpeg"
    assert got.tags["title"] == "Silence"
    assert got.tags["artist"] == "piman"
    assert got.tags["year"] == "2004"
    assert got.tags["duration"] == "3.7"
    assert "Title: Silence\nArtist: piman" in got.text
    assert got.sections == [] and got.ocr_pages == []


def test_ogg_composer_and_flac_year() -> None:
    ogg = run("audio/composer.ogg")
    assert ogg.content_type == "audio/ogg"
    assert ogg.tags["composer"] == "some composer"
    assert "Composer: some composer" in ogg.text
    flac = run("audio/flac1.5sStereo.flac")
    assert flac.content_type == "audio/flac"
    assert (flac.tags["album"], flac.tags["year"], flac.tags["duration"]) == ("alb", "2014", "1.5")


def test_generated_wav_has_a_duration() -> None:
    import wave

    buf = io.BytesIO()
    with wave.open(buf, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(bytes(2 * 8000 * 2))  # two seconds of silence
    got = extract(buf.getvalue(), name="take.wav")
    assert got.content_type == "audio/wav"
    assert got.tags == {"duration": "2.0"}
    assert got.text == "Duration: 2.0 s"


def test_jpeg_camera_date_and_description() -> None:
    got = run("images/flower.jpg")
    assert got.content_type == "image/jpeg"
    assert got.tags == {
        "width": "480",
        "height": "360",
        "camera": "Canon PowerShot S40",
        "date": "2003-12-14T12:01:44",
    }
    assert got.text == "Image 480x360, Canon PowerShot S40, 2003-12-14"
    assert got.ocr_pages == [0]


def test_jpeg_without_camera_has_only_what_is_known() -> None:
    dated = run("images/exif-72dpi-int.jpg")
    assert dated.tags["date"] == "2012-08-18T15:32:58"
    assert "camera" not in dated.tags
    cmyk = run("images/baiona_cmyk.jpg")
    assert cmyk.tags == {"width": "640", "height": "682"}
    assert cmyk.text == "Image 640x682"


@pytest.mark.parametrize(
    ("fmt", "mime"),
    [("PNG", "image/png"), ("TIFF", "image/tiff"), ("WEBP", "image/webp"), ("GIF", "image/gif")],
)
def test_generated_images_of_each_format(fmt: str, mime: str) -> None:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (64, 48), "white").save(buf, fmt)
    got = extract(buf.getvalue(), name="picture")  # no extension: the magic bytes decide
    assert got.content_type == mime
    assert got.tags == {"width": "64", "height": "48"}
    assert got.text == "Image 64x48"
    assert got.ocr_pages == [0]


def test_docx_core_properties() -> None:
    got = run("docx/doc-coreprops.docx")
    assert got.content_type == DOCX
    assert got.tags == {"title": "Title", "author": "Steve Canny"}


def test_docx_paragraphs_and_tables_in_body_order() -> None:
    got = run("docx/blk-paras-and-tables.docx")
    lorem = got.text.index("Lorem ipsum dolor sit amet")
    table = got.text.index("Text before Text after")
    donec = got.text.index("Donec semper facilisis")
    assert lorem < table < donec
    assert [s.kind for s in got.sections] == ["paragraph", "table", "paragraph"]
    assert [s.index for s in got.sections] == [1, 2, 3]


def test_docx_with_images_and_little_text_succeeds() -> None:
    got = run("docx/having-images.docx")
    assert got.content_type == DOCX
    assert got.tags["author"] == "Steve Canny"


def test_docx_hyperlink_text_is_kept() -> None:
    got = run("docx/par-hyperlinks.docx")
    assert "Three hyperlinks: the first one here, the second one, and the third." in got.text


def test_docx_headings_group_sections_and_rows_join_cells(tmp_path: Path) -> None:
    import docx

    document = docx.Document()
    document.add_paragraph("Before any heading.")
    document.add_heading("Results", level=1)
    document.add_paragraph("Revenue grew.")
    table = document.add_table(rows=2, cols=2)
    for r, row in enumerate([("Year", "Revenue"), ("2024", "42")]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    document.add_heading("Outlook", level=2)
    document.add_paragraph("Flat.")
    document.core_properties.title = "Annual report"
    buf = io.BytesIO()
    document.save(buf)
    got = extract(buf.getvalue(), name="report.docx")
    assert [(s.kind, s.title) for s in got.sections] == [
        ("paragraph", None),
        ("heading", "Results"),
        ("heading", "Outlook"),
    ]
    assert got.sections[1].text == "Results\nRevenue grew.\nYear | Revenue\n2024 | 42"
    assert got.text == "\n\n".join(s.text for s in got.sections)
    assert got.tags["title"] == "Annual report"


def test_pptx_speaker_notes() -> None:
    got = run("pptx/prs-notes.pptx")
    assert got.content_type == PPTX
    assert "Notes: Notes" in got.text
    assert got.sections[0].kind == "slide"


def test_pptx_every_slide_is_a_section() -> None:
    got = run("pptx/ph-populated-placeholders.pptx")
    assert got.tags["slides"] == "9"
    assert [s.index for s in got.sections] == list(range(1, 10))
    assert got.sections[4].title == "Title Text"
    assert "Body text" in got.sections[6].text
    assert got.tags["title"] == "Presentation" and got.tags["author"] == "python-pptx"


def test_pptx_charts_only_gives_empty_text() -> None:
    got = run("pptx/cht-charts.pptx")
    assert got.text == ""
    assert got.tags["slides"] == "1"


def test_pptx_groups_tables_and_notes(tmp_path: Path) -> None:
    import pptx
    from pptx.util import Inches

    prs = pptx.Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[5])  # title only
    slide.shapes.title.text = "Quarter"
    group = slide.shapes.add_group_shape()
    group.shapes.add_textbox(Inches(1), Inches(2), Inches(2), Inches(1)).text = "grouped words"
    table = slide.shapes.add_table(2, 2, Inches(1), Inches(4), Inches(4), Inches(1)).table
    table.cell(0, 0).text, table.cell(0, 1).text = "Region", "Sales"
    slide.notes_slide.notes_text_frame.text = "say this aloud"
    buf = io.BytesIO()
    prs.save(buf)
    got = extract(buf.getvalue(), name="deck.pptx")
    section = got.sections[0]
    assert (section.kind, section.index, section.title) == ("slide", 1, "Quarter")
    assert "grouped words" in section.text
    assert "Region | Sales" in section.text
    assert section.text.endswith("Notes: say this aloud")


def test_scanned_pdf_is_flagged_for_ocr() -> None:
    got = run("pdf/c02-22.pdf")
    assert got.ocr_pages == [0]
    assert got.text == "" and got.sections == []
    assert any("scanned" in note and "OCR" in note for note in got.notes)


def test_long_pdf_has_one_section_per_page() -> None:
    got = run("pdf/federal-register-2020-17221.pdf")
    assert [(s.kind, s.index) for s in got.sections] == [("page", n) for n in range(1, 16)]
    assert len(got.text) > 50_000
    assert got.tags["pages"] == "15"
    assert got.ocr_pages == [] and len(got.notes) == 1 and "running head" in got.notes[0]
    assert got.text == "\n\n".join(s.text for s in got.sections)


def test_pdf_page_cap_stops_with_a_note() -> None:
    got = run("pdf/federal-register-2020-17221.pdf", limits=Limits(pdf_page_cap=3))
    assert len(got.sections) == 3
    assert got.tags["pages"] == "15"
    assert any("first 3 of 15" in n and "pdf_page_cap" in n for n in got.notes)


def test_pdf_title_from_metadata() -> None:
    got = run("pdf/tagged.pdf")
    assert got.tags["title"] == "Tagged PDF Demo"
    assert "Table of Contents" in got.text


def test_html_article_without_scripts_or_navigation() -> None:
    raw = doc_bytes("html/wikipedia-mozilla.html").decode()
    got = run("html/wikipedia-mozilla.html")
    assert got.content_type == "text/html"
    assert got.tags["title"] == "Mozilla - Wikipedia"
    assert "Mozilla is a free-software community, created in 1998" in got.text
    # script, side panel, catlinks, footer, navbox, jump link: on the page but not in the text
    for boilerplate in (
        "wgCanonicalNamespace",
        "Donate to Wikipedia",
        "Hidden categories",
        "last modified on",
        "Skywriter",
        "Jump to",
    ):
        assert boilerplate in raw
        assert boilerplate not in got.text
    assert "[edit]" not in got.text
    titles = [s.title for s in got.sections if s.kind == "heading"]
    assert titles[:3] == ["Mozilla", "History", "Eich CEO promotion controversy"]


def test_html_math_page_keeps_formula_text() -> None:
    got = run("html/wikipedia-hermitian-matrix.html")
    assert got.tags["title"] == "Hermitian matrix - Wikipedia"
    assert "a Hermitian matrix (or self-adjoint matrix) is a complex square matrix" in got.text
    for boilerplate in ("RLCONF", "Donate to Wikipedia", "last edited", "Contents"):
        assert boilerplate not in got.text
    assert "Rayleigh quotient" in [s.title for s in got.sections]


def test_html_meta_charset_and_article_header() -> None:
    page = (
        "<html><head><meta charset='windows-1252'><title>Caf\u00e9</title></head><body>"
        "<header>Site menu</header><nav>Home</nav><div role='navigation'>Shop</div>"
        "<div class='left sidebar'>Links</div><aside>Ads</aside><form>Search</form>"
        "<article><header><h1>Menu du jour</h1></header>"
        "<p>Cr\u00e8me br\u00fbl\u00e9e<script>track()</script> \u2013 5\u20ac</p></article>"
        "<footer>\u00a9 site</footer></body></html>"
    ).encode("cp1252")
    got = extract(page, name="menu.html")
    assert got.tags["title"] == "Caf\u00e9"
    assert got.text == "Menu du jour\n\nCr\u00e8me br\u00fbl\u00e9e \u2013 5\u20ac"


def test_markdown_headings_make_sections() -> None:
    source = "Intro line.\n\n# Title\nbody\n```\n# not a heading\n```\n## Part two ##\nmore\n"
    got = extract(source.encode(), name="notes.md")
    assert got.content_type == "text/markdown"
    assert got.text == source
    assert [(s.kind, s.index, s.title) for s in got.sections] == [
        ("paragraph", 1, None),
        ("heading", 2, "Title"),
        ("heading", 3, "Part two"),
    ]
    assert "# not a heading" in got.sections[1].text


def test_plain_text_paragraphs_and_bom() -> None:
    got = extract(b"\xef\xbb\xbffirst para\r\nline two\r\n\r\nsecond", name="a.txt")
    assert got.content_type == "text/plain"
    assert got.text == "first para\nline two\n\nsecond"
    assert [s.text for s in got.sections] == ["first para\nline two", "second"]
    assert all(s.kind == "paragraph" for s in got.sections)


def test_utf16_with_bom_decodes() -> None:
    got = extract("\ufeffh\u00e9llo w\u00f6rld".encode("utf-16-le"), name="u16.txt")
    assert got.text == "h\u00e9llo w\u00f6rld"


def test_sniff_magic_then_extension_then_declared() -> None:
    assert sniff(b"%PDF-1.7\n...", "notes.txt") == "application/pdf"
    assert sniff(b"<!DOCTYPE html><p>x", "page") == "text/html"
    assert sniff(b"# hi", "README.md") == "text/markdown"
    assert sniff(b"plain words", "https://x.org/a/b.htm?q=1#top") == "text/html"
    assert sniff(b"plain words", "download", "text/html; charset=utf-8") == "text/html"
    assert sniff(b"<div>x</div>", "index.php", "text/html") == "text/html"
    assert sniff(b"{}", "data.json") == "application/json"  # read as text all the same
    assert sniff(b"plain words", "download") == "text/plain"
    assert sniff(b"\x00\x01\x02", "blob") == "application/octet-stream"
    assert sniff(doc_bytes("docx/doc-coreprops.docx"), "x.zip") == DOCX
    assert sniff(doc_bytes("pptx/prs-notes.pptx"), "upload") == PPTX


def test_extract_error_is_a_usage_error_naming_the_input() -> None:
    with pytest.raises(UsageError, match=r"^weird\.bin: ") as caught:
        extract(b"\x00" * 10, name="weird.bin")
    assert isinstance(caught.value, ExtractError)
    assert caught.value.title == "Cannot read the file"


def test_importing_extract_loads_no_heavy_library() -> None:
    heavy = ["pymupdf", "fitz", "docx", "pptx", "PIL", "tinytag", "lxml"]
    code = (
        "import sys, keepui_engine.ingest.extract, keepui_engine.ingest.ocr; "
        f"print([m for m in {heavy!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@needs_ocr
def test_ocr_reads_the_scanned_huckleberry_finn_page() -> None:
    pages = ocr_pdf_pages(doc_bytes("pdf/c02-22.pdf"), [0, 7])
    assert list(pages) == [0]  # page 7 does not exist and is skipped
    assert "stretched his neck out" in pages[0]
    assert "scrape our heads" in pages[0]


@needs_ocr
@pytest.mark.parametrize(("mode", "fmt"), [("RGB", "PNG"), ("L", "TIFF"), ("RGB", "WEBP")])
def test_ocr_reads_an_image(mode: str, fmt: str) -> None:
    import pymupdf
    from PIL import Image

    doc = pymupdf.open()
    page = doc.new_page(width=600, height=120)
    page.insert_text((30, 70), "Quarterly revenue grew by 42 percent", fontsize=24)
    png = page.get_pixmap(dpi=150).tobytes("png")
    buf = io.BytesIO()
    Image.open(io.BytesIO(png)).convert(mode).save(buf, fmt)
    assert ocr_image(buf.getvalue()) == "Quarterly revenue grew by 42 percent"


def test_ocr_unavailable_is_a_provider_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from keepui_engine.core.errors import ProviderError

    monkeypatch.setenv("PATH", "")
    assert not ocr_available()
    with pytest.raises(ProviderError, match="tesseract"):
        ocr_pdf_pages(b"%PDF-1.7", [0])

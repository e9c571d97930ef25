"""Extractors on generated bad input: each refusal is an ExtractError that names the file."""

from __future__ import annotations

import io
import random
import struct
import zipfile
import zlib
from pathlib import Path

import pytest

from keepui_engine.ingest.extract import extract
from keepui_engine.ingest.extracted import ExtractError, Limits


def refused(data: bytes, name: str, *words: str, limits: Limits | None = None) -> str:
    """Extract, expect an ExtractError starting with `name` and containing every word."""
    with pytest.raises(ExtractError) as caught:
        extract(data, name=name, limits=limits or Limits())
    message = caught.value.message
    assert message.startswith(f"{name}: "), message
    for word in words:
        assert word in message, (word, message)
    return message


def text_pdf(pages: int = 6) -> bytes:
    import pymupdf

    doc = pymupdf.open()
    for n in range(pages):
        doc.new_page().insert_text((72, 72), f"Page {n} has some words. " * 10)
    data: bytes = doc.tobytes()
    return data


def test_empty_file() -> None:
    refused(b"", "nothing.txt", "empty file", "nothing to store")


def test_file_over_the_size_cap() -> None:
    words = ("0.0 MB", "0.001 MB cap", "[ingest] max_file_mb", "keepui.toml")
    refused(b"x" * 3000, "big.txt", *words, limits=Limits(max_file_mb=0.001))


@pytest.mark.parametrize("keep", [0.1, 0.3, 0.5, 0.7, 0.9, 0.99])
def test_truncated_pdf(tmp_path: Path, keep: float) -> None:
    path = tmp_path / "cut.pdf"
    data = text_pdf()
    path.write_bytes(data[: int(len(data) * keep)])
    refused(path.read_bytes(), "cut.pdf", "damaged or truncated PDF", "re-download")


def test_whole_generated_pdf_is_fine() -> None:
    got = extract(text_pdf(), name="whole.pdf")  # the control for the truncation cases
    assert len(got.sections) == 6 and got.notes == []


def test_corrupt_pdf() -> None:
    junk = b"%PDF-1.7\n" + random.Random(7).randbytes(20_000)
    refused(junk, "junk.pdf", "damaged or truncated PDF")


def test_encrypted_pdf(tmp_path: Path) -> None:
    import pymupdf

    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "secret words")
    path = tmp_path / "locked.pdf"
    doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="x", owner_pw="y")
    refused(path.read_bytes(), "locked.pdf", "encrypted PDF", "decrypt it first")


def test_docx_that_is_not_a_zip() -> None:
    refused(b"Dear diary, this is plain text.", "diary.docx", "not a valid DOCX", "not a zip")


def _bomb(path: Path, member: str, sizes_mb: list[int], noise_mb: float = 0) -> bytes:
    """A zip of members full of zeros, deflated while streaming, plus optional random noise."""
    chunk = bytes(1024 * 1024)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")
        if noise_mb:
            zf.writestr("media/noise.bin", random.Random(1).randbytes(int(noise_mb * 1024 * 1024)))
        for n, size in enumerate(sizes_mb):
            with zf.open(f"{member}{n or ''}", "w", force_zip64=True) as out:
                for _ in range(size):
                    out.write(chunk)
    return path.read_bytes()


@pytest.mark.parametrize(
    ("name", "member", "kind"),
    [("bomb.docx", "word/document.xml", "DOCX"), ("bomb.pptx", "ppt/presentation.xml", "PPTX")],
)
def test_zip_bomb(tmp_path: Path, name: str, member: str, kind: str) -> None:
    data = _bomb(tmp_path / name, member, [200])
    assert len(data) < 1024 * 1024
    refused(data, name, kind, "would unpack to 200 MB", "limit 40 MB", "zip bomb")


def test_zip_bomb_spread_over_members(tmp_path: Path) -> None:
    data = _bomb(tmp_path / "spread.docx", "word/document.xml", [20, 20, 20])
    refused(data, "spread.docx", "would unpack to 60 MB", "zip bomb")


def test_zip_bomb_in_one_member_of_a_large_archive(tmp_path: Path) -> None:
    data = _bomb(tmp_path / "padded.docx", "word/document.xml", [60], noise_mb=1.6)
    refused(data, "padded.docx", "'word/document.xml' unpacks", "to 60 MB", "zip bomb")


def test_zip_that_is_no_office_document() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("ppt/presentation.xml", "<not-a-presentation/>")
    refused(buf.getvalue(), "fake.pptx", "not a readable PPTX")


def _png_header(width: int, height: int) -> bytes:
    """A tiny PNG whose header claims width x height (1-bit gray); its pixels are bogus."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b"\x00" * 64))
        + chunk(b"IEND", b"")
    )


def test_image_header_over_the_pixel_cap() -> None:
    words = ("20000x20000", "400,000,000 pixels", "250,000,000", "decompression bomb")
    refused(_png_header(20_000, 20_000), "huge.png", *words)


def test_real_small_image_over_a_lowered_cap() -> None:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (40, 30), "white").save(buf, "PNG")
    refused(buf.getvalue(), "small.png", "1,200 pixels", "1,000", limits=Limits(max_pixels=1000))
    assert extract(buf.getvalue(), name="small.png").tags["width"] == "40"


def test_damaged_image() -> None:
    refused(b"\x89PNG\r\n\x1a\n" + b"garbage" * 20, "broken.png", "damaged or unreadable image")


def test_damaged_audio() -> None:
    junk = b"OggS" + random.Random(3).randbytes(400)
    refused(junk, "broken.ogg", "unreadable audio file")


def test_invalid_utf8_that_fits_no_encoding() -> None:
    data = b"words \x81\x8d\x90 \x9d more words"  # holes in cp1252, C1 controls in latin-1
    refused(data, "mixed.txt", "not valid UTF-8", "no encoding fits cleanly", "convert it to UTF-8")


def test_mixed_utf8_and_cp1252_is_refused() -> None:
    data = "na\u00efve caf\u00e9 cr\u00e8me ".encode() + "r\u00e9sum\u00e9".encode("cp1252")
    refused(data, "mixed.md", "not valid UTF-8", "mixed encodings", "no encoding fits cleanly")


def test_cp1252_text_decodes_cleanly() -> None:
    text = "Caf\u00e9 \u2013 \u201cna\u00efve\u201d \u20ac5\nGr\u00f6\u00dfe, \u201eFu\u00df\u201c"
    got = extract(text.encode("cp1252"), name="legacy.txt")
    assert got.text == text
    assert got.content_type == "text/plain"
    assert any("cp1252" in note for note in got.notes)


def test_latin1_text_decodes_cleanly() -> None:
    text = "Se\u00f1or M\u00fcller \u00e0 la fa\u00e7ade"
    assert extract(text.encode("latin-1"), name="old.txt").text == text


def test_binary_data() -> None:
    blob = bytes(range(256)) * 8
    refused(blob, "blob.dat", "binary file", "cannot read")


def test_binary_data_of_a_known_type() -> None:
    import gzip

    refused(gzip.compress(b"hello" * 100), "notes.txt.gz", "binary file (application/gzip)")


def test_control_characters_without_nul_are_binary() -> None:
    noise = bytes(random.Random(5).choice(range(1, 9)) for _ in range(500))
    refused(b"header line\n" + noise, "noise.log", "binary file")


def test_utf16_bom_with_broken_body() -> None:
    refused(b"\xff\xfeh\x00i\x00\x00\xd8", "broken16.txt", "utf-16-le", "convert it to UTF-8")


def test_deeply_nested_html_does_not_crash() -> None:
    page = b"<p>start</p>" + b"<div>" * 50_000 + b"deep"
    got = extract(page, name="deep.html")  # libxml2 stops at depth 256; no RecursionError
    assert got.text.startswith("start")


def test_html_without_markup_is_refused_and_empty_markup_is_empty() -> None:
    refused(b"  \n  ", "blank.html", "HTML page with no parsable content")
    assert extract(b"<html>  </html>", name="empty.html").text == ""

"""Extraction bounded in time and memory (issue 23, points 9, 10 and 12): the caps that make
hostile inputs linear, the time limit, binary data named as text, and numbers in range.

Every hostile input is generated here; none is committed. Slow cases are bounded by a cap
being hit (a note, a refusal), not by timing."""

from __future__ import annotations

import io
import random
from datetime import UTC, datetime
from pathlib import Path

import pytest
from support import FAKE_TOML, grey_png

from keepui_engine.client.settings import load_settings
from keepui_engine.core.config_values import BadNumber
from keepui_engine.core.errors import UsageError
from keepui_engine.core.inputs import local_path, parse_moment, parse_time, source_kind
from keepui_engine.ingest.extract import extract
from keepui_engine.ingest.extracted import BinaryFile, Extracted, ExtractError, Limits
from keepui_engine.ingest.formats.html_bounds import MAX_ATTRIBUTES, cap_attributes


def crowded_tag(attributes: int, style: str = "valued") -> str:
    """A page whose first <div> has `attributes` attributes, then a paragraph."""
    if style == "valued":
        attrs = " ".join(f'a{i}="v{i}"' for i in range(attributes))
    elif style == "bare":
        attrs = " ".join(f"a{i}" for i in range(attributes))
    else:  # every value holds a `>`, so a scan that ignores quotes ends the tag early
        attrs = " ".join(f'a{i}=">"' for i in range(attributes))
    return f"<html><body><div {attrs}>hello</div><p>after the tag</p></body></html>"


@pytest.mark.parametrize("style", ["valued", "bare", "quoted-gt"])
def test_a_tag_with_40000_attributes_is_cut_at_the_cap(style: str) -> None:
    got = extract(crowded_tag(40_000, style).encode(), name="crowded.html")
    assert got.text == "hello\n\nafter the tag"
    assert got.notes == [
        f"1 tag(s) had more than {MAX_ATTRIBUTES:,} attributes; those past the "
        f"{MAX_ATTRIBUTES:,}th were not read"
    ]


def test_the_cut_keeps_the_first_attributes_and_the_rest_of_the_page() -> None:
    markup, cut = cap_attributes(crowded_tag(MAX_ATTRIBUTES + 5))
    assert cut == 1
    assert f'a{MAX_ATTRIBUTES - 1}="v{MAX_ATTRIBUTES - 1}"' in markup
    assert f"a{MAX_ATTRIBUTES}=" not in markup
    assert markup.endswith("<p>after the tag</p></body></html>")


def test_tags_under_the_cap_leave_the_page_as_it_was() -> None:
    page = crowded_tag(MAX_ATTRIBUTES)
    markup, cut = cap_attributes(page)
    assert cut == 0 and markup is page
    assert extract(page.encode(), name="busy.html").notes == []


def test_a_row_of_100000_cells_is_read_within_the_time_limit() -> None:
    # Joining the whole row at every cell made this quadratic (a 2 MB row ran past 300 s);
    # the time limit would stop a quadratic collector long before it finished.
    page = "<html><body><table><tr>" + "<td>a" * 100_000 + "</table></body></html>"
    got = extract(page.encode(), name="row.html", limits=Limits(timeout_s=60))
    assert got.text == " | ".join(["a"] * 100_000)


def test_a_list_inside_a_cell_still_separates_its_items() -> None:
    page = "<table><tr><td><ul><li>one.</li><li>two</li><li>three</li></ul></td></tr></table>"
    got = extract(f"<html><body>{page}</body></html>".encode(), name="cell.html")
    assert got.text == "one. two; three"


@pytest.mark.parametrize("name", ["page.html", "pages.pdf"])
def test_extraction_past_its_time_limit_is_stopped(name: str) -> None:
    raw = b"<p>a few words.</p>" * 3000 if name.endswith(".html") else _pdf(pages=3)
    with pytest.raises(ExtractError) as caught:
        extract(raw, name=name, limits=Limits(timeout_s=1e-9))
    message = caught.value.message
    assert message.startswith(f"{name}: reading it took longer than 1e-09 s")
    assert "[ingest] extract_timeout_s" in message and "keepui.toml" in message


def test_no_time_limit_when_it_is_zero() -> None:
    got = extract(b"<p>quick</p>", name="q.html", limits=Limits(timeout_s=0))
    assert got.text == "quick"


def _pdf(pages: int) -> bytes:
    import pymupdf

    doc = pymupdf.open()
    for n in range(pages):
        doc.new_page().insert_text((72, 72), f"Page {n} has words.")
    data: bytes = doc.tobytes()
    return data


def test_a_png_is_read_from_its_header_without_decoding(monkeypatch: pytest.MonkeyPatch) -> None:
    from PIL import Image, PngImagePlugin

    camera = Image.Exif()
    camera[0x010F], camera[0x0110] = "Canon", "Canon PowerShot S40"

    def decoded(self: object) -> None:
        raise AssertionError("the pixels were decoded")

    monkeypatch.setattr(PngImagePlugin.PngImageFile, "load", decoded)
    plain = extract(grey_png(4000, 3000), name="plain.png")
    assert plain.tags == {"width": "4000", "height": "3000"}
    # Pillow looks for an eXIf chunk after the pixels by decoding them; keepui walks chunks.
    tagged = extract(grey_png(40, 30, exif_after_pixels=camera.tobytes()), name="tagged.png")
    assert tagged.tags["camera"] == "Canon PowerShot S40"


def test_ocr_skips_an_image_over_its_pixel_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    from keepui_engine.ingest import ingesting, ocr, sources

    monkeypatch.setattr(ocr, "ocr_available", lambda: True)
    monkeypatch.setattr(ocr, "ocr_image", lambda *a: pytest.fail("the image was decoded"))

    tags = {"width": "20000", "height": "15000"}
    image = Extracted("Image 20000x15000", "image/png", tags, [], [0], [])
    loaded = sources.Loaded(b"", "huge.png", "file:///huge.png", None, {})
    got = ingesting.with_ocr(image, loaded, max_pixels=50_000_000)
    assert got.notes == [
        "OCR skipped: the image has 300,000,000 pixels, over the OCR cap of 50,000,000 "
        "(raise `[ingest] ocr_max_pixels` in keepui.toml to read it)"
    ]


def test_a_poster_sized_pdf_page_is_rendered_for_ocr_within_the_pixel_cap() -> None:
    import pymupdf

    from keepui_engine.ingest.ocr import DPI, page_dpi

    a4 = pymupdf.Rect(0, 0, 595, 842)
    poster = pymupdf.Rect(0, 0, 72 * 200, 72 * 200)  # 200 x 200 inches
    assert page_dpi(a4, 50_000_000) == DPI
    dpi = page_dpi(poster, 50_000_000)
    assert (200 * dpi) ** 2 <= 50_000_000 < (200 * (dpi + 1)) ** 2


def test_text_over_the_text_cap_is_refused_naming_the_setting() -> None:
    limits = Limits(max_text_mb=0.01)
    with pytest.raises(ExtractError, match=r"max_text_mb") as caught:
        extract(b"word " * 4000, name="long.txt", limits=limits)
    assert caught.value.message.startswith("long.txt: its text is 0.0191 MB, over the 0.01 MB")
    with pytest.raises(ExtractError, match=r"at least 0\.0358 MB.*max_text_mb"):
        extract(b"word " * 30_000, name="longer.md", limits=limits)  # refused undecoded
    html = "<p>" + "markup " * 300 + "</p>" + "<!-- a comment -->" * 3000
    assert extract(html.encode(), name="page.html", limits=limits).text  # the text counts


NOISE = {
    "random bytes": random.Random(1).randbytes(50_000),
    "random bytes without NUL": bytes(b for b in random.Random(2).randbytes(60_000) if b),
    "random high bytes": bytes(128 + b % 128 for b in random.Random(3).randbytes(50_000)),
}


@pytest.mark.parametrize("label", list(NOISE))
def test_random_bytes_named_html_are_refused_as_binary(label: str) -> None:
    with pytest.raises(BinaryFile) as caught:
        extract(NOISE[label], name="noise.html")
    assert caught.value.message.startswith("noise.html: ")
    assert "binary" in caught.value.message


def test_an_undeclared_windows_1252_page_is_read_as_windows_1252() -> None:
    page = "<html><body><p>Caf\u00e9 cr\u00e8me \u2019quoted\u2019</p></body></html>"
    got = extract(page.encode("cp1252"), name="legacy.html")
    assert got.text == "Caf\u00e9 cr\u00e8me \u2019quoted\u2019"


@pytest.mark.parametrize("ext", ["txt", "md"])
def test_random_bytes_named_as_text_are_refused(ext: str) -> None:
    with pytest.raises(ExtractError) as caught:
        extract(random.Random(4).randbytes(50_000), name=f"noise.{ext}")
    assert caught.value.message.startswith(f"noise.{ext}: binary file")


def test_an_existing_file_is_a_file_whatever_its_name(tmp_path: Path) -> None:
    odd = tmp_path / "two\nlines.txt"
    odd.write_text("the text")
    assert local_path(str(odd)) == odd and source_kind(str(odd)) == "file"
    assert source_kind(str(tmp_path / "no\nsuch.txt")) == "text"
    assert source_kind("a\x00b") == "text"


NOW = datetime(2026, 11, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("raw", "option"),
    [
        ("P999999999D", "--since"),
        ("P1000000000D", "--until"),
        ("P300Y", "--since"),
        ("0001-01-01", "--since"),
        ("0001-01-01T00:00+01:00", "--until"),
        ("9999-12-31", "--until"),
    ],
)
def test_times_out_of_range_are_usage_errors(raw: str, option: str) -> None:
    with pytest.raises(UsageError, match="out of range: give a moment from 1900-01-01"):
        parse_time(raw, now=NOW, option=option)


@pytest.mark.parametrize("raw", ["0001-01-01", "9999-12-31", "P999999999D", "0001-01-01T00:00"])
def test_as_of_out_of_range_is_a_usage_error(raw: str) -> None:
    with pytest.raises(UsageError, match=f"--as-of '{raw}' is out of range"):
        parse_moment(raw)


def test_times_in_range_still_parse() -> None:
    assert parse_time("1900-01-01", now=NOW) == datetime(1900, 1, 1, tzinfo=UTC)
    assert parse_time("P7D", now=NOW) == datetime(2026, 10, 25, tzinfo=UTC)
    assert parse_moment("9998-12-31") == datetime(9998, 12, 31, 23, 59, 59, 999999)


def _store(tmp_path: Path, *lines: tuple[str, str]) -> Path:
    """A store whose keepui.toml has `key = value` in place of each key's default line."""
    text = FAKE_TOML
    for key, line in lines:
        found = [ln for ln in text.splitlines() if ln.startswith(f"{key} =")]
        text = (
            text.replace(found[0], line)
            if found
            else text.replace("[search]\n", f"[search]\n{line}\n")
        )
    store = tmp_path / "store"
    store.mkdir()
    (store / "keepui.toml").write_text(text)
    return store


@pytest.mark.parametrize(
    ("key", "line", "words"),
    [
        ("half_life_days", "half_life_days = nan", "`half_life_days` = nan is not a finite"),
        ("half_life_days", "half_life_days = -inf", "`half_life_days` = -inf is not a finite"),
        ("min_score", "min_score = inf", "`min_score` = inf is not a finite number"),
        ("dedup_threshold", "dedup_threshold = 1.5", "dedup_threshold = 1.5 is out of range"),
        ("recency_weight", "recency_weight = -0.1", "recency_weight = -0.1 is out of range"),
        ("rrf_k", "rrf_k = -60", "[search] rrf_k = -60 is out of range"),
        ("dense_weight", "dense_weight = -1", "dense_weight = -1 and bm25_weight = 1"),
        ("lock_timeout_s", "lock_timeout_s = 1e300", "lock_timeout_s = 1e+300 is out of range"),
        ("max_text_mb", "max_text_mb = 0", "`max_text_mb` must be greater than 0"),
        ("extract_timeout_s", "extract_timeout_s = nan", "`extract_timeout_s` = nan is not"),
        ("max_pixels", "max_pixels = 0", "[ingest] max_pixels = 0 is out of range"),
        ("batch_size", "batch_size = 0", "[embedding] batch_size = 0 is out of range"),
    ],
)
def test_bad_numbers_in_keepui_toml_are_usage_errors(
    tmp_path: Path, key: str, line: str, words: str
) -> None:
    store = _store(tmp_path, (key, line))
    with pytest.raises(BadNumber) as caught:
        load_settings(store)
    assert words in caught.value.message and str(store) in caught.value.message
    assert caught.value.exit_code == 1 and caught.value.public_kind == "usage"


def test_the_new_ingest_settings_are_read(tmp_path: Path) -> None:
    store = _store(
        tmp_path,
        ("max_text_mb", "max_text_mb = 2.5"),
        ("extract_timeout_s", "extract_timeout_s = 0"),
        ("max_pixels", "max_pixels = 1000"),
        ("ocr_max_pixels", "ocr_max_pixels = 500"),
    )
    got = load_settings(store)
    assert (got.max_text_mb, got.extract_timeout_s) == (2.5, 0.0)
    assert (got.max_pixels, got.ocr_max_pixels) == (1000, 500)
    defaults = load_settings(tmp_path / "fresh")
    assert (defaults.max_text_mb, defaults.extract_timeout_s) == (4.0, 60.0)


def test_an_image_over_a_configured_pixel_cap_names_that_setting() -> None:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("L", (64, 64)).save(buf, format="PNG")
    with pytest.raises(ExtractError, match=r"raise `\[ingest\] max_pixels` in keepui.toml"):
        extract(buf.getvalue(), name="small.png", limits=Limits(max_pixels=100))

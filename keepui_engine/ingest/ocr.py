"""OCR of scanned PDF pages and images through pymupdf's Tesseract binding (slow; run later)."""

from __future__ import annotations

import shutil
from pathlib import Path

from keepui_engine.errors import ProviderError
from keepui_engine.ingest.extract import Limits

LANGUAGE = "eng"
# Scans are often stored near 150 dpi; rendering at 300 dpi roughly halves Tesseract's
# misreads on the Huckleberry Finn fixture for a small cost in time.
DPI = 300


def _tessdata() -> str | None:
    """The Tesseract language folder pymupdf will use, or None when there is none."""
    if shutil.which("tesseract") is None:
        return None
    import pymupdf

    try:
        folder = pymupdf.get_tessdata()
    except Exception:  # pymupdf raises RuntimeError when it finds no installation
        return None
    return folder if (Path(folder) / f"{LANGUAGE}.traineddata").exists() else None


def ocr_available() -> bool:
    """Whether OCR can run: `tesseract` is on PATH and its English data can be found."""
    return _tessdata() is not None


def _require_tessdata() -> str:
    folder = _tessdata()
    if folder is None:
        raise ProviderError(
            "OCR needs Tesseract with English data: install it (e.g. apt install "
            "tesseract-ocr tesseract-ocr-eng, or brew install tesseract) or set TESSDATA_PREFIX.",
            "OCR unavailable",
        )
    return folder


def _clean(text: str) -> str:
    lines = (" ".join(line.split()) for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


def ocr_pdf_pages(data: bytes, pages: list[int]) -> dict[int, str]:
    """Read the text of PDF pages with OCR.

    Args:
        data: The PDF bytes.
        pages: 0-based page numbers, e.g. `Extracted.ocr_pages`; numbers past the end are
            skipped.

    Returns:
        Page number -> recognised text (blank lines dropped, whitespace collapsed).

    Raises:
        ProviderError: Tesseract is missing or fails.
        ExtractError: The PDF cannot be opened.
    """
    from keepui_engine.ingest.formats.pdf import open_pdf

    tessdata = _require_tessdata()
    doc = open_pdf(data, "PDF for OCR")
    out: dict[int, str] = {}
    try:
        for number in pages:
            if not 0 <= number < doc.page_count:
                continue
            page = doc[number]  # the text page refers back to it: keep it alive
            try:
                textpage = page.get_textpage_ocr(
                    language=LANGUAGE, dpi=DPI, full=True, tessdata=tessdata
                )
                out[number] = _clean(page.get_text(textpage=textpage))
            except Exception as exc:
                raise ProviderError(
                    f"OCR of page {number + 1} failed ({exc}).", "OCR failed"
                ) from exc
    finally:
        doc.close()
    return out


def ocr_image(data: bytes) -> str:
    """Read the text of an image (JPEG, PNG, TIFF, ...) with OCR at its own resolution.

    Images over the default pixel cap are refused before decoding (callers check their own
    cap with `extract` first).

    Args:
        data: The image bytes.

    Returns:
        The recognised text (blank lines dropped, whitespace collapsed).

    Raises:
        ProviderError: Tesseract is missing or fails.
        ExtractError: The image cannot be decoded or is too large.
    """
    import pymupdf

    from keepui_engine.ingest.extract import ExtractError, sniff
    from keepui_engine.ingest.formats.image import open_header

    tessdata = _require_tessdata()
    image = open_header(data, "image for OCR", sniff(data, ""), Limits().max_pixels)
    try:
        rgb = image.convert("RGB")  # mupdf reads neither WebP nor gray pixmaps for OCR
    except Exception as exc:  # truncated or corrupt pixel data
        raise ExtractError(f"image for OCR: cannot decode it ({exc}).") from exc
    finally:
        image.close()
    pix = pymupdf.Pixmap(pymupdf.csRGB, rgb.width, rgb.height, rgb.tobytes(), 0)
    try:
        pdf = pix.pdfocr_tobytes(language=LANGUAGE, tessdata=tessdata)
        with pymupdf.open(stream=pdf, filetype="pdf") as doc:
            return _clean(doc[0].get_text())
    except Exception as exc:
        raise ProviderError(f"OCR of the image failed ({exc}).", "OCR failed") from exc

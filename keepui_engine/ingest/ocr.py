"""OCR of scanned PDF pages and images with the `tesseract` program (slow; one page at a time).

Pages are rendered by pymupdf and read by a `tesseract` child process rather than through
pymupdf's in-process binding: a child can be stopped at once by Ctrl-C (the binding swallowed
the interrupt and printed a traceback), runs single-threaded (OMP_THREAD_LIMIT=1: on two cores
Tesseract's own threads made a page 4x slower), and its default page segmentation reads book
scans more cleanly than the binding's.
"""

from __future__ import annotations

import functools
import math
import os
import shutil
import subprocess
from typing import Any

from keepui_engine.core import interrupts
from keepui_engine.core.errors import ProviderError
from keepui_engine.ingest.extracted import Limits

LANGUAGE = "eng"
# Scans are often stored near 150 dpi; rendering at 300 dpi roughly halves Tesseract's
# misreads on the Huckleberry Finn fixture for a small cost in time.
DPI = 300
PAGE_TIMEOUT_S = 300


@functools.lru_cache(maxsize=4)
def _languages(exe: str) -> frozenset[str]:
    try:
        done = subprocess.run(
            [exe, "--list-langs"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    return frozenset(line.strip() for line in done.stdout.splitlines()[1:] if line.strip())


def ocr_available() -> bool:
    """Whether OCR can run: `tesseract` is on PATH and has its English data."""
    exe = shutil.which("tesseract")
    return exe is not None and LANGUAGE in _languages(exe)


def _require() -> str:
    exe = shutil.which("tesseract")
    if exe is None or LANGUAGE not in _languages(exe):
        raise ProviderError(
            "OCR needs Tesseract with English data: install it (e.g. apt install "
            "tesseract-ocr tesseract-ocr-eng, or brew install tesseract) or set TESSDATA_PREFIX.",
            "OCR unavailable",
        )
    return exe


def _clean(text: str) -> str:
    lines = (" ".join(line.split()) for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


def _tesseract(image: bytes, what: str, dpi: int | None = None) -> str:
    """Run `tesseract` on an encoded image (PNG/PNM) from stdin; its text."""
    cmd = [_require(), "stdin", "stdout", "-l", LANGUAGE]
    if dpi:
        cmd += ["--dpi", str(dpi)]
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    interrupts.checkpoint("ocr")
    try:
        # On Ctrl-C subprocess.run kills the child before the KeyboardInterrupt goes on.
        done = subprocess.run(
            cmd, input=image, capture_output=True, env=env, timeout=PAGE_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        raise ProviderError(
            f"OCR of {what} took over {PAGE_TIMEOUT_S} s and was stopped.", "OCR failed"
        ) from None
    except OSError as exc:
        raise ProviderError(f"OCR of {what}: cannot run tesseract ({exc}).", "OCR failed") from exc
    interrupts.check()  # the child may have died of the same Ctrl-C first
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ProviderError(
            f"OCR of {what} failed (tesseract exit {done.returncode}: "
            f"{err[-1] if err else 'no message'}).",
            "OCR failed",
        )
    return _clean(done.stdout.decode("utf-8", "replace"))


def ocr_pdf_pages(
    data: bytes, pages: list[int], max_pixels: int = Limits().ocr_max_pixels
) -> dict[int, str]:
    """Read the text of PDF pages with OCR.

    Args:
        data: The PDF bytes.
        pages: 0-based page numbers, e.g. `Extracted.ocr_pages`; numbers past the end are
            skipped.
        max_pixels: A page is rendered at DPI, or lower when that would give more pixels
            (a poster-sized page at 300 dpi is gigabytes).

    Returns:
        Page number -> recognised text (blank lines dropped, whitespace collapsed).

    Raises:
        ProviderError: Tesseract is missing or fails.
        ExtractError: The PDF cannot be opened.
    """
    import pymupdf

    from keepui_engine.ingest.formats.pdf import open_pdf

    _require()
    doc = open_pdf(data, "PDF for OCR")
    out: dict[int, str] = {}
    try:
        for number in pages:
            if not 0 <= number < doc.page_count:
                continue
            with interrupts.shield():  # mupdf's callbacks would swallow a KeyboardInterrupt
                try:
                    dpi = page_dpi(doc[number].rect, max_pixels)
                    pix = doc[number].get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY)
                    image = pix.tobytes("png")
                except Exception as exc:
                    raise ProviderError(
                        f"OCR of page {number + 1}: cannot render it ({exc}).", "OCR failed"
                    ) from exc
            out[number] = _tesseract(image, f"page {number + 1}", dpi)
    finally:
        doc.close()
    return out


def page_dpi(rect: Any, max_pixels: int) -> int:
    """DPI, or the highest resolution under it that renders `rect` (in points) in
    `max_pixels` pixels."""
    square_inches = max(rect.width, 1.0) * max(rect.height, 1.0) / (72 * 72)
    return max(1, min(DPI, int(math.sqrt(max_pixels / square_inches))))


def ocr_image(data: bytes, max_pixels: int = Limits().ocr_max_pixels) -> str:
    """Read the text of an image (JPEG, PNG, TIFF, ...) with OCR at its own resolution.

    Images over `max_pixels` are refused before decoding.

    Args:
        data: The image bytes.
        max_pixels: The largest width * height decoded (`[ingest] ocr_max_pixels`).

    Returns:
        The recognised text (blank lines dropped, whitespace collapsed).

    Raises:
        ProviderError: Tesseract is missing or fails.
        ExtractError: The image cannot be decoded or is too large.
    """
    import io

    from keepui_engine.ingest.extracted import ExtractError, sniff
    from keepui_engine.ingest.formats.image import open_header

    _require()
    image = open_header(data, "image for OCR", sniff(data, ""), max_pixels, "ocr_max_pixels")
    try:
        rgb = image.convert("RGB")  # CMYK, palette and WebP become plain RGB for Tesseract
        buf = io.BytesIO()
        rgb.save(buf, format="PNG")
    except Exception as exc:  # truncated or corrupt pixel data
        raise ExtractError(f"image for OCR: cannot decode it ({exc}).") from exc
    finally:
        image.close()
    return _tesseract(buf.getvalue(), "the image")

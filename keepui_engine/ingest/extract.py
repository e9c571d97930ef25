"""The extraction dispatcher: sniff a file's type, pick its format module, return `Extracted`."""

from __future__ import annotations

from keepui_engine.ingest import deadline
from keepui_engine.ingest.extracted import (
    AUDIO_TYPES,
    DOCX,
    HTML,
    IMAGE_TYPES,
    MB,
    PDF,
    PPTX,
    Extracted,
    ExtractError,
    Limits,
    sniff,
    text_over_cap,
)

DEFAULT_LIMITS = Limits()


def extract(
    data: bytes, *, name: str, content_type: str | None = None, limits: Limits = DEFAULT_LIMITS
) -> Extracted:
    """Extract text, tags and structure from one input. Never runs OCR (see `ocr_pages`).

    Args:
        data: The raw bytes of the file or download.
        name: The file name or URL path, for the extension fallback and messages.
        content_type: The declared type (HTTP header), used only when the bytes and the
            name do not decide.
        limits: Size, page and pixel caps.

    Returns:
        The text, format tags, sections and notes.

    Raises:
        ExtractError: The input is empty, too large, damaged, encrypted or not readable.
    """
    if not data:
        raise ExtractError(f"{name}: empty file: nothing to store.")
    size_mb = len(data) / (1024 * 1024)
    if size_mb > limits.max_file_mb:
        raise ExtractError(
            f"{name}: file is {size_mb:.1f} MB, over the {limits.max_file_mb:g} MB cap; "
            "raise `[ingest] max_file_mb` in keepui.toml to store it."
        )
    mime = sniff(data, name, content_type)
    if mime.startswith("text/") and mime != HTML and len(data) > 4 * limits.max_text_mb * MB:
        # Text takes at most 4 bytes a character: this one is over the cap, left undecoded.
        raise text_over_cap(name, len(data) // 4, limits.max_text_mb, "at least ")
    with deadline.limit(name, limits.timeout_s):
        got = _extract(data, name, mime, limits)
    if len(got.text) > limits.max_text_mb * MB:
        raise text_over_cap(name, len(got.text), limits.max_text_mb)
    return got


def _extract(data: bytes, name: str, mime: str, limits: Limits) -> Extracted:
    if mime == PDF:
        from keepui_engine.ingest.formats import pdf

        return pdf.extract_pdf(data, name, limits)
    if mime == DOCX:
        from keepui_engine.ingest.formats import office

        return office.extract_docx(data, name, limits)
    if mime == PPTX:
        from keepui_engine.ingest.formats import slides

        return slides.extract_pptx(data, name, limits)
    if mime in (HTML, "application/xhtml+xml"):
        from keepui_engine.ingest.formats import html

        return html.extract_html(data, name, limits)
    if mime in AUDIO_TYPES:
        from keepui_engine.ingest.formats import audio

        return audio.extract_audio(data, name, mime)
    if mime in IMAGE_TYPES:
        from keepui_engine.ingest.formats import image

        return image.extract_image(data, name, mime, limits)
    from keepui_engine.ingest.formats import text

    return text.extract_text(data, name, mime)

"""PDF via pymupdf: text per page, metadata tags, scanned pages flagged for OCR."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from keepui_engine.ingest import deadline
from keepui_engine.ingest.extracted import PDF, Extracted, ExtractError, Limits, Section
from keepui_engine.ingest.formats.boilerplate import strip_running_lines

if TYPE_CHECKING:
    import pymupdf


def open_pdf(data: bytes, name: str) -> pymupdf.Document:
    """Open PDF bytes with pymupdf, turning its failures into ExtractError.

    Args:
        data: The PDF bytes.
        name: The input's name, for messages.

    Returns:
        The open document (the caller closes it).

    Raises:
        ExtractError: The PDF is damaged, truncated, has no pages or needs a password.
    """
    import pymupdf

    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except Exception as exc:  # pymupdf raises FileDataError, RuntimeError, ValueError ...
        raise _damaged(name, exc) from exc
    try:
        needs_pass, count = doc.needs_pass, (0 if doc.needs_pass else doc.page_count)
    except Exception as exc:  # a broken page tree fails only when counted
        doc.close()
        raise _damaged(name, exc) from exc
    if needs_pass:
        doc.close()
        raise ExtractError(
            f"{name}: encrypted PDF (needs a password); decrypt it first, "
            "e.g. qpdf --decrypt --password=PW in.pdf out.pdf."
        )
    if count == 0:
        doc.close()
        raise ExtractError(
            f"{name}: damaged or truncated PDF with no readable pages; re-download or re-export it."
        )
    return doc


def _damaged(name: str, exc: Exception) -> ExtractError:
    return ExtractError(
        f"{name}: damaged or truncated PDF that cannot be opened ({exc}); "
        "re-download or re-export it."
    )


def _page_text(page: pymupdf.Page) -> str:
    lines = (line.rstrip() for line in page.get_text("text").replace("\f", "\n").split("\n"))
    return "\n".join(lines).strip()


def _has_marks(page: pymupdf.Page) -> bool:
    """Whether a page without text shows something (a scan, vector art) worth OCR."""
    try:
        return bool(page.get_images(full=False)) or bool(page.get_drawings())
    except Exception:  # when unsure, let OCR look
        return True


@dataclass
class _Pages:
    sections: list[Section] = field(default_factory=list)
    scanned: list[int] = field(default_factory=list)  # 0-based, no text but an image
    blank: list[int] = field(default_factory=list)  # 1-based, nothing on the page
    unreadable: list[int] = field(default_factory=list)  # 1-based


def _read_pages(doc: pymupdf.Document, count: int) -> _Pages:
    pages = _Pages()
    for number in range(count):
        deadline.check()
        try:
            page = doc[number]
            text = _page_text(page)
        except Exception:  # one broken content stream must not lose the other pages
            pages.unreadable.append(number + 1)
            continue
        if text:
            pages.sections.append(Section(text=text, kind="page", index=number + 1))
        elif _has_marks(page):
            pages.scanned.append(number)
        else:
            pages.blank.append(number + 1)
    return pages


def extract_pdf(data: bytes, name: str, limits: Limits) -> Extracted:
    """Extract a PDF: one page section per page with text; scanned pages listed for OCR.

    A page without text goes to `ocr_pages` when it shows an image or drawing; an empty
    page is only mentioned in a note.

    Args:
        data: The PDF bytes.
        name: The input's name, for messages.
        limits: `pdf_page_cap` bounds the pages read.

    Returns:
        Pages joined by blank lines; tags title, author (when set) and pages.

    Raises:
        ExtractError: Encrypted, damaged or truncated PDFs.
    """
    doc = open_pdf(data, name)
    try:
        total, repaired = doc.page_count, doc.is_repaired
        meta = doc.metadata or {}
        pages = _read_pages(doc, min(total, max(limits.pdf_page_cap, 0)))
    except ExtractError:  # the time limit
        raise
    except Exception as exc:  # pages are read one by one; this is the document itself failing
        raise _damaged(name, exc) from exc
    finally:
        doc.close()
    if repaired and (b"%%EOF" not in data[-1024:] or not (pages.sections or pages.scanned)):
        raise ExtractError(
            f"{name}: damaged or truncated PDF (it ends early or has no readable content); "
            "re-download or re-export it."
        )
    tags = {"pages": str(total)}
    for key in ("title", "author"):
        value = (meta.get(key) or "").strip()
        if value:
            tags[key] = value
    notes: list[str] = []
    if repaired:
        notes.append("the PDF was damaged and has been repaired; some text may be missing")
    if total > limits.pdf_page_cap:
        notes.append(
            f"only the first {limits.pdf_page_cap} of {total} pages were read "
            "(`[ingest] pdf_page_cap` in keepui.toml)"
        )
    if pages.unreadable:
        notes.append(f"{_pages(pages.unreadable)} could not be read and were skipped")
    if pages.blank:
        notes.append(f"{_pages(pages.blank)} of {total} {_are(pages.blank)} empty")
    if pages.scanned:
        numbers = [n + 1 for n in pages.scanned]
        notes.append(
            f"{_pages(numbers)} of {total} {_are(numbers)} scanned (no text layer); "
            "only OCR can read the text"
        )
    kept, dropped = strip_running_lines([s.text for s in pages.sections])
    sections = [replace(s, text=t) for s, t in zip(pages.sections, kept, strict=True) if t]
    if dropped:
        notes.append(f"{dropped} running head/foot line(s) left out (page numbers, headers)")
    text = "\n\n".join(s.text for s in sections)
    return Extracted(text, PDF, tags, sections, pages.scanned, notes)


def _pages(numbers: list[int], shown: int = 10) -> str:
    """Name pages for a note: 'page 3' or 'pages 1, 2, 5 and 4 more'."""
    head = ", ".join(str(n) for n in numbers[:shown])
    more = f" and {len(numbers) - shown} more" if len(numbers) > shown else ""
    return f"page {head}" if len(numbers) == 1 else f"pages {head}{more}"


def _are(numbers: list[int]) -> str:
    return "is" if len(numbers) == 1 else "are"

"""DOCX (python-docx), and the zip-bomb guard and helpers it shares with PPTX (slides.py)."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from keepui_engine.ingest import deadline
from keepui_engine.ingest.extracted import DOCX, Extracted, ExtractError, Limits, Section

if TYPE_CHECKING:
    from docx.table import Table

MB = 1024 * 1024
# zipfile never inflates a member past its declared size (a lying size fails the CRC check),
# so checking the central directory's sizes up front bounds what python-docx/pptx can unpack.
# Office XML rarely unpacks to more than 10-20x its archive; 40x leaves room, and any archive
# may unpack to 40 MB whatever its size.
MAX_UNPACKED = 500 * MB
MAX_TOTAL_RATIO = 40
RATIO_FLOOR = 1 * MB
MAX_MEMBER_RATIO = 100
MEMBER_RATIO_FROM = 50 * MB
MAX_MEMBERS = 10_000

_Group = tuple[str | None, str, list[str]]  # (title, kind, texts)


def check_zip(data: bytes, name: str, kind: str) -> None:
    """Refuse archives that are not zips or that would unpack to far more than they weigh.

    Args:
        data: The archive bytes.
        name: The input's name, for messages.
        kind: "DOCX" or "PPTX", for messages.

    Raises:
        ExtractError: Not a zip, too many members, or a likely zip bomb.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise ExtractError(
            f"{name}: not a valid {kind} (it is not a zip archive: {exc}); "
            f"re-save it from the application that made it."
        ) from exc
    if len(infos) > MAX_MEMBERS:
        raise ExtractError(
            f"{name}: {kind} archive has {len(infos)} members (limit {MAX_MEMBERS}); refused."
        )
    total = sum(i.file_size for i in infos)
    allowed = min(MAX_UNPACKED, MAX_TOTAL_RATIO * max(len(data), RATIO_FLOOR))
    if total > allowed:
        raise ExtractError(
            f"{name}: {kind} would unpack to {total / MB:.0f} MB from {len(data) / MB:.1f} MB "
            f"(limit {allowed / MB:.0f} MB); refused as a possible zip bomb."
        )
    for info in infos:
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > MEMBER_RATIO_FROM and ratio > MAX_MEMBER_RATIO:
            raise ExtractError(
                f"{name}: {kind} member {info.filename!r} unpacks {ratio:.0f}x to "
                f"{info.file_size / MB:.0f} MB; refused as a possible zip bomb."
            )


def open_failed(name: str, kind: str, exc: Exception) -> ExtractError:
    """The error for an archive python-docx or python-pptx could not open."""
    return ExtractError(
        f"{name}: not a readable {kind} ({type(exc).__name__}: {exc}); "
        "re-save it from the application that made it."
    )


def core_tags(props: Any) -> dict[str, str]:
    """Tags title and author from an Office document's core properties, when set."""
    tags: dict[str, str] = {}
    for key in ("title", "author"):
        try:
            value = (getattr(props, key, None) or "").strip()
        except Exception:  # a malformed core.xml must not lose the body text
            value = ""
        if value:
            tags[key] = value
    return tags


def table_text(rows: Iterable[Iterable[str]]) -> str:
    """One line per non-empty row, cells joined by " | " (trailing empty cells dropped)."""
    lines = []
    for cells in rows:
        texts = [" ".join(c.split()) for c in cells]
        while texts and not texts[-1]:
            texts.pop()
        if texts:
            lines.append(" | ".join(texts))
    return "\n".join(lines)


def _docx_rows(table: Table) -> Iterator[list[str]]:
    for row in table.rows:
        seen: set[int] = set()
        cells = []
        for cell in row.cells:  # a merged cell appears once per grid column it spans
            if id(cell._tc) not in seen:
                seen.add(id(cell._tc))
                cells.append(cell.text)
        yield cells


def _is_heading(paragraph: Any) -> bool:
    try:
        style = paragraph.style.name or ""
    except Exception:
        return False
    return style.startswith(("Heading", "Title"))


def _docx_groups(blocks: Iterable[Any], table_type: type[Any]) -> list[_Group]:
    """Group body blocks as (title, kind, texts): headings gather what follows them."""
    groups: list[_Group] = []
    for n, block in enumerate(blocks):
        if n % 256 == 0:
            deadline.check()
        if isinstance(block, table_type):
            text, kind = table_text(_docx_rows(block)), "table"
        else:
            text, kind = block.text.strip(), "paragraph"
            if text and _is_heading(block):
                groups.append((text, "heading", [text]))
                continue
        if not text:
            continue
        if groups and groups[-1][1] == "heading":
            groups[-1][2].append(text)
        else:
            groups.append((None, kind, [text]))
    return groups


def extract_docx(data: bytes, name: str, limits: Limits) -> Extracted:
    """Extract a DOCX: paragraphs and tables in body order, grouped under headings.

    Material before the first heading becomes paragraph and table sections; each heading
    (style "Heading N" or "Title") starts a heading section holding what follows it.
    Table rows are their cells joined by " | ".

    Args:
        data: The DOCX bytes.
        name: The input's name, for messages.
        limits: Unused beyond the checks `extract` made; kept for a uniform signature.

    Returns:
        The sections joined by blank lines; tags title and author when set.

    Raises:
        ExtractError: Not a zip, a likely zip bomb, or not a readable DOCX.
    """
    check_zip(data, name, "DOCX")
    import docx
    from docx.table import Table

    try:
        document = docx.Document(io.BytesIO(data))
        groups = _docx_groups(document.iter_inner_content(), Table)
        tags = core_tags(document.core_properties)
    except ExtractError:  # the time limit
        raise
    except Exception as exc:  # python-docx raises PackageNotFoundError, KeyError, lxml errors
        raise open_failed(name, "DOCX", exc) from exc
    sections = [
        Section("\n".join(texts), kind, number, title)
        for number, (title, kind, texts) in enumerate(groups, 1)
    ]
    return Extracted("\n\n".join(s.text for s in sections), DOCX, tags, sections, [], [])

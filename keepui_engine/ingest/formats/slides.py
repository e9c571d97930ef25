"""PPTX (python-pptx): slide, table and speaker-note text; shapes it cannot read are counted."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

from keepui_engine.ingest import deadline
from keepui_engine.ingest.extracted import PPTX, Extracted, ExtractError, Limits, Section
from keepui_engine.ingest.formats.office import check_zip, core_tags, open_failed, table_text

_P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
# Children of a shape tree that are shapes (python-pptx's list); the rest are properties.
_SHAPE_TAGS = frozenset(
    _P + tag for tag in ("sp", "grpSp", "graphicFrame", "cxnSp", "pic", "contentPart")
)
# Graphic frames python-pptx reads: tables for their text; charts, OLE objects and SmartArt
# hold no slide text, like pictures. Any other graphicData (3D models, future types) is unread.
_KNOWN_FRAMES = frozenset(
    {
        "http://schemas.openxmlformats.org/drawingml/2006/table",
        "http://schemas.openxmlformats.org/drawingml/2006/chart",
        "http://schemas.openxmlformats.org/presentationml/2006/ole",
        "http://schemas.openxmlformats.org/drawingml/2006/diagram",
    }
)


class _Unreadable(Exception):
    """A shape python-pptx maps to no kind keepui reads."""


def _frame_text(frame: Any) -> str:
    return str(frame.text).replace("\v", "\n").strip()


def raw_text(element: Any) -> str:
    """The text runs under an XML element, one line per paragraph (for unreadable shapes)."""
    lines = []
    for para in element.iter(_A + "p"):
        runs = para.iter(_A + "t", _A + "br")
        line = "".join("\n" if r.tag == _A + "br" else r.text or "" for r in runs).strip()
        if line:
            lines.append(line)
    return "\n".join(lines)


class _SlideReader:
    """Reads the shapes of one container element by element, so one bad shape costs only itself.

    python-pptx builds shape proxies while iterating a shape tree, and raises for shapes it
    cannot map (an unknown placeholder type, a shape without a known geometry asked for its
    type, ink): iterating the collection would lose the whole slide. Here each element gets
    its own proxy; one that fails, an unknown graphic frame, or the unknown branch of an
    `mc:AlternateContent` (a 3D model) is counted in `skipped`, and any text runs it holds
    are kept.
    """

    def __init__(self) -> None:
        self.skipped = 0

    def shapes(self, collection: Any) -> Iterator[str]:
        """The texts of a shape collection (slide or group) in document order."""
        for element in collection.element.iterchildren():
            yield from self._element(element, collection)

    def _element(self, element: Any, collection: Any) -> Iterator[str]:
        if element.tag == _MC + "AlternateContent":
            yield from self._alternate(element, collection)
            return
        if element.tag not in _SHAPE_TAGS:
            return  # group properties, extension lists
        try:
            texts = list(self._shape(collection._shape_factory(element)))
        except Exception:  # noqa: BLE001 - python-pptx raises ValueError, KeyError, NotImplemented...
            self.skipped += 1
            text = raw_text(element)
            texts = [text] if text else []
        yield from texts

    def _alternate(self, element: Any, collection: Any) -> Iterator[str]:
        """Markup compatibility: the first choice when every shape in it reads, else fallback."""
        choice = element.find(_MC + "Choice")
        if choice is not None:
            trial = _SlideReader()
            texts = [t for child in choice for t in trial._element(child, collection)]
            if trial.skipped == 0:
                yield from texts
                return
            self.skipped += trial.skipped
        fallback = element.find(_MC + "Fallback")
        if fallback is not None:
            for child in fallback:
                yield from self._element(child, collection)
        elif choice is None:
            self.skipped += 1

    def _shape(self, shape: Any) -> Iterator[str]:
        from pptx.shapes.group import GroupShape

        if isinstance(shape, GroupShape):
            yield from self.shapes(shape.shapes)
        elif shape.has_text_frame:
            text = _frame_text(shape.text_frame)
            if text:
                yield text
        elif shape.has_table:
            rows = ([cell.text for cell in row.cells] for row in shape.table.rows)
            text = table_text(rows)
            if text:
                yield text
        elif shape.element.tag == _P + "graphicFrame":
            data = shape.element.find(f"{_A}graphic/{_A}graphicData")
            uri = None if data is None else data.get("uri")
            if uri not in _KNOWN_FRAMES:
                raise _Unreadable(uri or "graphic frame without data")
        elif shape.element.tag == _P + "contentPart":
            raise _Unreadable("ink or other content part")

    def title(self, slide: Any) -> str | None:
        """The text of the slide's title placeholder, read from the XML (never raises)."""
        for sp in slide.shapes.element.iter(_P + "sp"):
            if _placeholder_type(sp) in ("title", "ctrTitle"):
                return " ".join(raw_text(sp).split()) or None
        return None

    def notes(self, slide: Any) -> str:
        """The speaker notes; an unreadable notes page is counted and its body text kept."""
        try:
            if not slide.has_notes_slide:
                return ""
            frame = slide.notes_slide.notes_text_frame
            return _frame_text(frame) if frame is not None else ""
        except Exception:  # noqa: BLE001
            self.skipped += 1
        try:
            element = slide.part.part_related_by(_NOTES_REL)._element
        except Exception:  # noqa: BLE001 - no notes part, or one that does not parse
            return ""
        bodies = (sp for sp in element.iter(_P + "sp") if _placeholder_type(sp) == "body")
        return "\n".join(raw_text(sp) for sp in bodies).strip()


def _placeholder_type(sp: Any) -> str | None:
    ph = sp.find(f"{_P}nvSpPr/{_P}nvPr/{_P}ph")
    return None if ph is None else str(ph.get("type", "obj"))


_NOTES_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/notesSlide"


def extract_pptx(data: bytes, name: str, limits: Limits) -> Extracted:
    """Extract a PPTX: one slide section per slide, with shape, table and speaker-note text.

    Every slide gets a section, even one without text (charts, pictures), so section
    indexes are slide numbers; the full text joins only the slides that have text. Shapes
    python-pptx cannot read are left out (their text runs kept) and counted in the system
    tag `_skipped_shapes`, with a note.

    Args:
        data: The PPTX bytes.
        name: The input's name, for messages.
        limits: Unused beyond the checks `extract` made; kept for a uniform signature.

    Returns:
        Slide texts joined by blank lines; tags title, author (when set) and slides.

    Raises:
        ExtractError: Not a zip, a likely zip bomb, or not a readable PPTX.
    """
    check_zip(data, name, "PPTX")
    import pptx

    reader = _SlideReader()
    try:
        prs = pptx.Presentation(io.BytesIO(data))
        sections = []
        for number, slide in enumerate(prs.slides, 1):
            deadline.check()
            texts = list(reader.shapes(slide.shapes))
            notes = reader.notes(slide)
            if notes:
                texts.append(f"Notes: {notes}")
            sections.append(Section("\n".join(texts), "slide", number, reader.title(slide)))
        tags = core_tags(prs.core_properties)
    except ExtractError:  # the time limit
        raise
    except Exception as exc:  # python-pptx raises PackageNotFoundError, KeyError, lxml errors
        raise open_failed(name, "PPTX", exc) from exc
    tags["slides"] = str(len(sections))
    text = "\n\n".join(s.text for s in sections if s.text)
    meta: dict[str, object] = {}
    notes_out = []
    if reader.skipped:
        meta["_skipped_shapes"] = reader.skipped
        notes_out.append(
            f"{reader.skipped} shape(s) of a kind python-pptx cannot read were skipped "
            "(their text, if any, is kept)"
        )
    return Extracted(text, PPTX, tags, sections, [], notes_out, meta)

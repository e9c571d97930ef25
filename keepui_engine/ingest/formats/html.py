"""HTML via lxml (or a streaming tokenizer past libxml2's limits): visible article text."""

from __future__ import annotations

import codecs
import re
from typing import Any

from keepui_engine.ingest.extracted import (
    HTML,
    BinaryFile,
    Extracted,
    ExtractError,
    Limits,
    Section,
    looks_binary,
)
from keepui_engine.ingest.formats.html_bounds import MAX_ATTRIBUTES, cap_attributes
from keepui_engine.ingest.formats.html_text import TextCollector
from keepui_engine.ingest.formats.text import mostly_utf8

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>")
# WHATWG: these labels mean windows-1252 in HTML; UTF-16 labels without a BOM mean UTF-8.
_CHARSET_ALIASES = {"iso-8859-1": "cp1252", "latin1": "cp1252", "ascii": "cp1252"}


def decode_html(data: bytes, name: str = "page") -> str:
    """Decode HTML bytes: a BOM wins, then `<meta charset>`, then UTF-8. Undeclared bytes
    that are not UTF-8 are read as windows-1252 (WHATWG's default for such pages), unless
    most of their non-ASCII bytes are UTF-8 (a few stray bytes, replaced with U+FFFD).

    Raises:
        BinaryFile: The bytes are no text: NUL or control bytes, or undeclared bytes that
            are neither UTF-8 nor windows-1252 (random data named .html).
    """
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", errors="replace")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    if looks_binary(data):
        raise BinaryFile(
            f"{name}: binary data, not an HTML page (it holds NUL or control bytes); "
            "check the file."
        )
    found = _META_CHARSET.search(data[:4096])
    if found:
        label = found.group(1).decode("ascii").lower()
        label = _CHARSET_ALIASES.get(label, label)
        try:
            if not codecs.lookup(label).name.startswith(("utf-16", "utf-32")):
                return data.decode(label, errors="replace")
        except LookupError:
            pass
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    if mostly_utf8(data):
        return data.decode("utf-8", errors="replace")
    try:
        return data.decode("cp1252")
    except UnicodeDecodeError:
        raise BinaryFile(
            f"{name}: not text: neither UTF-8 nor windows-1252, and no charset is declared "
            "(random or binary data named .html?); check the file, or declare its encoding "
            "with <meta charset=...>."
        ) from None


def _walk_tree(root: Any, out: TextCollector) -> None:
    """Feed a parsed tree to the collector (lxml's iterwalk: no recursion)."""
    from lxml import etree

    walker = etree.iterwalk(root, events=("start", "end"))
    skipped: set[Any] = set()
    for event, el in walker:
        tag = el.tag.lower() if isinstance(el.tag, str) else None  # None: an entity
        if event == "start":
            if tag is None or not out.open(tag, el.get):
                skipped.add(el)
                walker.skip_subtree()
            else:
                out.add(el.text)
            continue
        if el in skipped:
            skipped.discard(el)
        elif tag is not None:
            out.close(tag)
        out.add(el.tail)
    out.flush()


def _over_a_limit(parser: Any) -> bool:
    """Whether libxml2 stopped early (nesting deeper than 2048, or another resource limit)."""
    return any(e.type_name == "ERR_RESOURCE_LIMIT" for e in parser.error_log)


def _sections(blocks: list[tuple[str, str]]) -> list[Section]:
    """Group blocks under h1-h3 headings; blocks are paragraphs, a table's rows are lines."""
    groups: list[tuple[str | None, list[tuple[str, str]]]] = []
    for kind, text in blocks:
        if kind == "heading":
            groups.append((text, [(kind, text)]))
        elif groups and groups[-1][0] is not None:
            groups[-1][1].append((kind, text))
        else:
            groups.append((None, [(kind, text)]))
    return [
        Section(_join(parts), "paragraph" if title is None else "heading", number, title)
        for number, (title, parts) in enumerate(groups, 1)
    ]


def _join(parts: list[tuple[str, str]]) -> str:
    out = [parts[0][1]]
    for (before, _), (kind, text) in zip(parts, parts[1:], strict=False):
        out.append("\n" if before == kind == "row" else "\n\n")
        out.append(text)
    return "".join(out)


def extract_html(data: bytes, name: str, limits: Limits) -> Extracted:
    """Extract an HTML page: visible text, one heading section per h1-h3.

    Scripts, styles, forms, navigation, page header/footer, asides and elements whose
    role, class or id mark them as navigation or chrome are left out. Every block element
    is a paragraph of its own (blank lines between them); a table is a run of lines, one per
    row with its cells joined by " | ", so neither glues into the sentences around it.
    Whitespace is collapsed. Text before the first heading becomes paragraph sections.

    lxml (libxml2) parses the page. When libxml2 gives up part way (nesting deeper than
    2048 elements, or another of its resource limits), the page is read again by the
    standard library's tokenizer with an explicit stack, which has no depth limit; both feed
    the same collector. The page is already under `[ingest] max_file_mb`, and its tags
    are cut after MAX_ATTRIBUTES attributes first (libxml2 is quadratic in them; a note says
    how many tags were cut).

    Args:
        data: The page bytes.
        name: The input's name or URL path, for messages.
        limits: Unused beyond the checks `extract` made; kept for a uniform signature.

    Returns:
        The sections joined by blank lines; tag title from <title>.

    Raises:
        ExtractError: The page cannot be parsed.
        BinaryFile: The bytes are no text (see `decode_html`).
    """
    import lxml.html
    from lxml import etree

    markup, crowded = cap_attributes(_XML_DECL.sub("", decode_html(data, name), count=1))
    notes = []
    if crowded:
        notes.append(
            f"{crowded} tag(s) had more than {MAX_ATTRIBUTES:,} attributes; those past the "
            f"{MAX_ATTRIBUTES:,}th were not read"
        )
    try:
        parser = lxml.html.HTMLParser(remove_comments=True, remove_pis=True, huge_tree=True)
        root = lxml.html.document_fromstring(markup, parser=parser)
    except (etree.ParserError, ValueError) as exc:
        raise ExtractError(f"{name}: HTML page with no parsable content ({exc}).") from exc
    if _over_a_limit(parser):
        from keepui_engine.ingest.formats import html_stream

        title, blocks = html_stream.collect(markup)
    else:
        title_el = root.find(".//title")
        title = "" if title_el is None else " ".join(title_el.text_content().split())
        body = root.find("body")
        out = TextCollector()
        _walk_tree(body if body is not None else root, out)
        blocks = out.blocks
    tags = {"title": title} if title else {}
    sections = _sections(blocks)
    return Extracted("\n\n".join(s.text for s in sections), HTML, tags, sections, [], notes)

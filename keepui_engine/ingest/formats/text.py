"""Plain text and Markdown: careful decoding, binary refusal, paragraph and heading sections."""

from __future__ import annotations

import re
import unicodedata

from keepui_engine.ingest.extracted import (
    MARKDOWN,
    OCTET,
    PLAIN,
    BinaryFile,
    Extracted,
    ExtractError,
    Section,
    looks_binary,
)

_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
# Single-byte fallbacks, tried in order when the bytes are not UTF-8.
FALLBACK_ENCODINGS = ("cp1252", "latin-1")
MIN_PRINTABLE_SHARE = 0.97
_ALLOWED_CONTROLS = frozenset("\t\n\r\f")
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_BLANK_LINES = re.compile(r"\n[ \t]*\n+")
_UTF8_MULTIBYTE = re.compile(
    rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}"
)


def mostly_utf8(data: bytes) -> bool:
    """Whether most non-ASCII bytes form UTF-8 sequences: mixed encodings, not cp1252.

    Legacy text hits such byte pairs only by chance (German "ß" before a cp1252 quote).
    """
    high = sum(1 for b in data if b >= 0x80)
    covered = sum(len(m) for m in _UTF8_MULTIBYTE.findall(data))
    return high > 0 and covered / high > 0.5


def _fits(text: str) -> bool:
    """Whether a trial decode reads as text: no control characters, nearly all printable."""
    if not text:
        return True
    printable = 0
    for ch in text:
        if ch in _ALLOWED_CONTROLS or ch == " ":
            printable += 1
            continue
        if unicodedata.category(ch) == "Cc":
            return False
        printable += ch.isprintable()
    return printable / len(text) >= MIN_PRINTABLE_SHARE


def decode_text(data: bytes, name: str, mime: str) -> tuple[str, str]:
    """Decode bytes as text, refusing binary data and guesses that do not fit cleanly.

    Args:
        data: The raw bytes.
        name: The input's name, for messages.
        mime: The sniffed type, named when the data turns out to be binary.

    Returns:
        The text (all line ends made LF) and the encoding used.

    Raises:
        ExtractError: The data is binary, or not UTF-8 and no fallback encoding fits.
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                text = data[len(bom) :].decode(encoding)
            except UnicodeDecodeError as exc:
                raise ExtractError(
                    f"{name}: starts with a {encoding} byte-order mark but is not valid "
                    f"{encoding} ({exc.reason}); convert it to UTF-8."
                ) from exc
            return _newlines(text), encoding
    if looks_binary(data):
        label = OCTET if mime.startswith("text/") else mime
        raise BinaryFile(f"{name}: binary file ({label}) that keepui cannot read.")
    try:
        return _newlines(data.decode("utf-8-sig")), "utf-8"
    except UnicodeDecodeError:
        pass
    if mostly_utf8(data):
        raise ExtractError(
            f"{name}: not valid UTF-8 (mostly UTF-8 with stray bytes: mixed encodings?) and "
            "no encoding fits cleanly; convert it to UTF-8 or fix the stray bytes."
        )
    for encoding in FALLBACK_ENCODINGS:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if _fits(text):
            return _newlines(text), encoding
    raise ExtractError(
        f"{name}: not valid UTF-8 and no encoding fits cleanly; convert it to UTF-8 "
        "(e.g. iconv -f <encoding> -t UTF-8)."
    )


def _newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def paragraph_sections(text: str, start: int = 1) -> list[Section]:
    """Split text at blank lines into paragraph sections numbered from `start`."""
    paragraphs = [p.strip() for p in _BLANK_LINES.split(text)]
    return [
        Section(text=p, kind="paragraph", index=i)
        for i, p in enumerate((p for p in paragraphs if p), start)
    ]


def markdown_sections(text: str) -> list[Section]:
    """Sections of a Markdown text: ATX headings (`#`) outside code fences start a section.

    Text before the first heading becomes paragraph sections. Setext headings (underlined
    with === or ---) are not recognised: `---` is as often a rule or front matter.
    """
    chunks: list[tuple[str | None, list[str]]] = [(None, [])]
    fence: str | None = None
    for line in text.split("\n"):
        fenced = _FENCE.match(line)
        if fenced:
            marker = fenced.group(1)
            fence = None if fence == marker else (fence or marker)
        heading = None if fence or fenced else _HEADING.match(line)
        if heading:
            title = re.sub(r"[ \t]+#+$", "", heading.group(2) or "").strip()
            chunks.append((title, [line]))
        else:
            chunks[-1][1].append(line)
    sections = paragraph_sections("\n".join(chunks[0][1]))
    for heading_title, lines in chunks[1:]:
        body = "\n".join(lines).strip()
        number = len(sections) + 1
        sections.append(Section(body, "heading", number, heading_title or None))
    return sections


def extract_text(data: bytes, name: str, mime: str) -> Extracted:
    """Extract a text file: the whole decoded text plus paragraph or heading sections.

    Args:
        data: The raw bytes.
        name: The input's name; `.md`/`.markdown` (or a text/markdown type) means Markdown.
        mime: The sniffed type.

    Returns:
        Text typed text/markdown or text/plain.

    Raises:
        ExtractError: Binary data or an encoding that cannot be decided.
    """
    text, encoding = decode_text(data, name, mime)
    notes: list[str] = []
    if encoding in FALLBACK_ENCODINGS:
        notes.append(f"not valid UTF-8; decoded as {encoding}")
    if mime == MARKDOWN:
        return Extracted(text, MARKDOWN, {}, markdown_sections(text), [], notes)
    return Extracted(text, PLAIN, {}, paragraph_sections(text), [], notes)

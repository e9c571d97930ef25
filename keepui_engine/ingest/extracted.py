"""What extraction makes and refuses: formats, limits, sections, the extracted text, its errors,
and how an input's type is told (sniff). The format readers (formats/) and OCR build on these;
extract.py dispatches to them."""

from __future__ import annotations

import io
import mimetypes
import zipfile
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from keepui_engine.core.errors import UsageError

PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
HTML = "text/html"
MARKDOWN = "text/markdown"
PLAIN = "text/plain"
OCTET = "application/octet-stream"

AUDIO_TYPES = frozenset(
    {
        "audio/mpeg",
        "audio/flac",
        "audio/ogg",
        "audio/wav",
        "audio/aiff",
        "audio/mp4",
        "audio/x-ms-wma",
    }
)
IMAGE_TYPES = frozenset(
    {"image/jpeg", "image/png", "image/tiff", "image/webp", "image/gif", "image/bmp"}
)

_EXTENSIONS = {
    ".pdf": PDF,
    ".docx": DOCX,
    ".pptx": PPTX,
    ".html": HTML,
    ".htm": HTML,
    ".xhtml": HTML,
    ".md": MARKDOWN,
    ".markdown": MARKDOWN,
    ".mp3": "audio/mpeg",
    ".flac": "audio/flac",
    ".ogg": "audio/ogg",
    ".oga": "audio/ogg",
    ".opus": "audio/ogg",
    ".wav": "audio/wav",
    ".aif": "audio/aiff",
    ".aiff": "audio/aiff",
    ".m4a": "audio/mp4",
    ".m4b": "audio/mp4",
    ".wma": "audio/x-ms-wma",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".png": "image/png",
    ".tif": "image/tiff",
    ".tiff": "image/tiff",
    ".webp": "image/webp",
    ".gif": "image/gif",
    ".bmp": "image/bmp",
}
_HTML_STARTS = (b"<!doctype html", b"<html", b"<head", b"<body")
_ASF_GUID = bytes.fromhex("3026b2758e66cf11a6d900aa0062ce6c")
_M4A_BRANDS = (b"M4A ", b"M4B ", b"M4P ")
_BMP_DIB_SIZES = frozenset(n.to_bytes(4, "little") for n in (12, 40, 52, 56, 64, 108, 124))
_BINARY_MAGIC = (
    (b"\x1f\x8b", "application/gzip"),
    (b"7z\xbc\xaf\x27\x1c", "application/x-7z-compressed"),
    (b"Rar!\x1a\x07", "application/vnd.rar"),
    (b"\x7fELF", "application/x-executable"),
    (b"SQLite format 3\x00", "application/vnd.sqlite3"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "application/x-ole-storage"),
)
# Bytes that never occur in text: C0 controls other than \t \n \v \f \r and ESC, plus DEL.
_CONTROL = frozenset(set(range(32)) - {9, 10, 11, 12, 13, 27}) | {127}
_SNIFF_BYTES = 8192
MB = 1024 * 1024
BINARY_CONTROL_SHARE = 0.10


class ExtractError(UsageError):
    """A file cannot be turned into text; the message starts with its name and says what to do."""

    @classmethod
    def default_title(cls) -> str:
        """Return the title used when none is given."""
        return "Cannot read the file"


class BinaryFile(ExtractError):
    """The file is binary data of no format keepui reads (a folder walk skips it)."""


@dataclass(frozen=True)
class Section:
    """A structural unit of a document, for the part splitter.

    Attributes:
        text: The unit's text.
        kind: "page", "slide", "heading", "paragraph", "table" or "body".
        index: The 1-based page or slide number, else the running number of the section.
        title: The heading text or slide title when known.
    """

    text: str
    kind: str
    index: int
    title: str | None = None


@dataclass(frozen=True)
class Limits:
    """Resource caps for extraction (`[ingest]` in keepui.toml).

    Attributes:
        max_file_mb: Larger inputs are refused before any parsing.
        pdf_page_cap: Pages after this many are not read (a note says so).
        max_pixels: Images with more pixels (width * height) are refused.
        max_text_mb: Inputs whose text is longer are refused (a MB here is 2**20
            characters): storing and indexing cost memory in proportion to the text.
        timeout_s: Extraction taking longer is stopped (0 or less: no limit).
        ocr_max_pixels: Larger images, and PDF pages rendered for OCR, are not OCRed at
            full size (images are skipped with a note; pages are rendered at a lower dpi).
    """

    max_file_mb: float = 100.0
    pdf_page_cap: int = 1000
    max_pixels: int = 250_000_000
    max_text_mb: float = 4.0
    timeout_s: float = 60.0
    ocr_max_pixels: int = 50_000_000


@dataclass(frozen=True)
class Extracted:
    """What an extractor found in one input.

    Attributes:
        text: The full clean text; "" when the input carries only metadata.
        content_type: The MIME type the input was read as.
        tags: Format tags (title, author, pages, ...); every value is a string.
        sections: The document's structure in order (pages, slides, headings ...).
        ocr_pages: 0-based pages without a text layer (PDF), [0] for an image, else [].
        notes: Remarks for the user, e.g. that some pages need OCR.
        meta: System tags found while reading (keys start with `_`, e.g. `_skipped_shapes`),
            recorded with the document like `_file_size`.
    """

    text: str
    content_type: str
    tags: dict[str, str]
    sections: list[Section]
    ocr_pages: list[int]
    notes: list[str]
    meta: dict[str, object] = field(default_factory=dict)


def looks_binary(data: bytes) -> bool:
    """Whether the head of `data` has NUL bytes or many control bytes (so it is not text)."""
    head = data[:_SNIFF_BYTES]
    if not head:
        return False
    if b"\x00" in head:
        return True
    controls = sum(1 for b in head if b in _CONTROL)
    return controls / len(head) > BINARY_CONTROL_SHARE


def _zip_type(data: bytes) -> str | None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = set(zf.namelist())
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return None
    if "word/document.xml" in names:
        return DOCX
    if "ppt/presentation.xml" in names:
        return PPTX
    return None


def _by_magic(data: bytes) -> str | None:
    head = data[:64]
    if b"%PDF-" in data[:1024]:
        return PDF
    if head.startswith(b"PK\x03\x04"):
        return _zip_type(data) or "application/zip"
    checks = (
        (head.startswith(b"\x89PNG\r\n\x1a\n"), "image/png"),
        (head.startswith(b"\xff\xd8\xff"), "image/jpeg"),
        (head[:4] in (b"II*\x00", b"MM\x00*"), "image/tiff"),
        (head[:4] == b"RIFF" and head[8:12] == b"WEBP", "image/webp"),
        (head[:6] in (b"GIF87a", b"GIF89a"), "image/gif"),
        (
            head[:2] == b"BM" and head[6:10] == b"\0\0\0\0" and head[14:18] in _BMP_DIB_SIZES,
            "image/bmp",
        ),
        (head[:4] == b"RIFF" and head[8:12] == b"WAVE", "audio/wav"),
        (head[:4] == b"FORM" and head[8:12] in (b"AIFF", b"AIFC"), "audio/aiff"),
        (head.startswith(b"ID3"), "audio/mpeg"),
        (head.startswith(b"fLaC"), "audio/flac"),
        (head.startswith(b"OggS"), "audio/ogg"),
        (head[4:8] == b"ftyp" and head[8:12] in _M4A_BRANDS, "audio/mp4"),
        (head.startswith(_ASF_GUID), "audio/x-ms-wma"),
    )
    for hit, mime in checks:
        if hit:
            return mime
    for magic, mime in _BINARY_MAGIC:
        if head.startswith(magic):
            return mime
    lead = data[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if lead.startswith(_HTML_STARTS):
        return HTML
    if lead.startswith((b"<?xml", b"<!--")) and b"<html" in lead:
        return HTML
    return None


def _suffix(name: str) -> str:
    path = name.split("?", 1)[0].split("#", 1)[0]
    return PurePosixPath(path).suffix.lower()


def sniff(data: bytes, name: str, declared: str | None = None) -> str:
    """Decide the content type of an input.

    Magic bytes win, then a known extension (.pdf, .docx, .md, .mp3 ...), then the declared
    type (an HTTP Content-Type header), then the system's guess from the extension. Without
    any of these, text-like data is text/plain and the rest application/octet-stream.

    Args:
        data: The raw bytes.
        name: The file name or URL path.
        declared: A type stated by the source, parameters (`; charset=...`) allowed.

    Returns:
        A MIME type such as application/pdf or text/plain.
    """
    found = _by_magic(data)
    ext = _suffix(name)
    if found == "application/zip" and _EXTENSIONS.get(ext) in (DOCX, PPTX):
        return _EXTENSIONS[ext]
    if found:
        return found
    if ext in _EXTENSIONS:
        return _EXTENSIONS[ext]
    mime = (declared or "").split(";", 1)[0].strip().lower()
    if mime:
        return mime
    # The system's guess only labels data we read as text anyway (.json, .exe ...).
    guessed = mimetypes.guess_type("x" + ext)[0] if ext else None
    if guessed and not guessed.startswith("text/"):
        return guessed
    return OCTET if looks_binary(data) else PLAIN


def text_over_cap(name: str, chars: int, cap_mb: float, prefix: str = "") -> ExtractError:
    """The refusal of a text of `chars` characters, over `[ingest] max_text_mb`."""
    return ExtractError(
        f"{name}: its text is {prefix}{chars / MB:.3g} MB, over the {cap_mb:g} MB cap on one "
        "document's text; split it into smaller files, or raise `[ingest] max_text_mb` in "
        "keepui.toml (storing and indexing take about 0.2 GB of memory per MB of text)."
    )

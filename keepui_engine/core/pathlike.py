"""Whether a command's argument was meant as a path: light enough for the CLI's fast path,
which must tell a note from a file name before it imports anything else."""

from __future__ import annotations

import os

# Extensions that make a one-line SOURCE a file name rather than a note (the formats keepui
# reads, and the common text, data and code files).
_EXTENSIONS = """\
    pdf docx doc pptx ppt xlsx xls odt ods odp rtf epub html htm xhtml xml md markdown rst
    txt text log csv tsv json jsonl yaml yml toml ini cfg conf tex bib org adoc py js ts tsx
    jsx java c h cc cpp hpp go rs rb php sh bash zsh sql r ipynb css scss svg mp3 flac ogg oga
    opus wav aiff aif m4a wma aac jpg jpeg png gif tif tiff webp bmp heic eml msg zip gz"""
FILE_EXTENSIONS = frozenset(_EXTENSIONS.split())


def looks_like_path(source: str) -> bool:
    """Whether a SOURCE that names no existing file was meant as a path, not as a note.

    True for one line that starts with `~`, `./`, `../` or `/`; or holds no space and contains
    a path separator or starts with `.`; or ends in a known file extension (`notes.md`).
    A sentence with a slash in it ("TCP/IP won") stays a note.
    """
    text = source.strip()
    if not text or "\n" in text or len(text) > 4096:
        return False
    if text.startswith(("~", "./", "../", "/", ".\\")):
        return True
    spaced = any(c.isspace() for c in text)
    if not spaced and ("/" in text or os.sep in text or text.startswith(".")):
        return True
    stem, dot, ext = text.rpartition(".")
    return bool(dot and stem and not stem.endswith((" ", ".")) and ext.lower() in FILE_EXTENSIONS)

"""Audio via tinytag: title, artist, album, year, duration ... as tags and as findable text."""

from __future__ import annotations

import io

from keepui_engine.ingest.extracted import Extracted, ExtractError

# (tag key, tinytag attribute, label in the text), in the order the text lists them.
_FIELDS = (
    ("title", "title", "Title"),
    ("artist", "artist", "Artist"),
    ("album", "album", "Album"),
    ("composer", "composer", "Composer"),
    ("genre", "genre", "Genre"),
    ("year", "year", "Year"),
)


def extract_audio(data: bytes, name: str, mime: str) -> Extracted:
    """Extract the metadata of an MP3, FLAC, Ogg, WAV, AIFF, M4A or WMA file.

    Args:
        data: The audio bytes.
        name: The input's name, for messages.
        mime: The sniffed audio type, kept as the content type.

    Returns:
        Text of "Label: value" lines; tags title, artist, album, composer, genre, year and
        duration (seconds, one decimal) when present. No sections.

    Raises:
        ExtractError: tinytag cannot parse the file.
    """
    from tinytag import TinyTag

    try:
        meta = TinyTag.get(file_obj=io.BytesIO(data))
    except Exception as exc:  # TinyTagException, and struct/value errors on damaged files
        raise ExtractError(
            f"{name}: unreadable audio file ({type(exc).__name__}: {exc}); "
            "check that it plays, or re-encode it."
        ) from exc
    tags: dict[str, str] = {}
    lines: list[str] = []
    for key, attribute, label in _FIELDS:
        value = getattr(meta, attribute, None)
        text = " ".join(str(value).split()) if value is not None else ""
        if text:
            tags[key] = text
            lines.append(f"{label}: {text}")
    duration = getattr(meta, "duration", None)
    if duration:
        tags["duration"] = f"{round(float(duration), 1):.1f}"
        lines.append(f"Duration: {tags['duration']} s")
    return Extracted("\n".join(lines), mime, tags, [], [], [])

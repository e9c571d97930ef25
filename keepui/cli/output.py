"""stdout is data, stderr is diagnostics: JSON, NDJSON and human renderings."""

from __future__ import annotations

import json
import sys
from typing import Any

SCHEMA = 1


def emit_json(payload: dict[str, Any]) -> None:
    """Write exactly one JSON document (with the schema field first) to stdout."""
    sys.stdout.write(json.dumps({"schema": SCHEMA, **payload}, ensure_ascii=False) + "\n")


def emit_ndjson(records: list[dict[str, Any]]) -> None:
    """Write one JSON record per line to stdout."""
    for record in records:
        sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")


def out(line: str = "") -> None:
    """Write a line of data to stdout."""
    sys.stdout.write(line + "\n")


def note(message: str) -> None:
    """Write a diagnostic line to stderr."""
    sys.stderr.write(message + "\n")


def first_line(text: str, width: int = 80) -> str:
    """The first line of a text, cut to a width."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= width else line[: width - 1] + "…"


def short_time(iso: str) -> str:
    """`2026-11-22T12:34:56.789Z` -> `2026-11-22 12:34`."""
    return iso[:16].replace("T", " ")


def render_tags(tags: dict[str, Any], *, system: bool = False) -> list[str]:
    """`key: value` lines, user tags first, system tags only when asked."""
    lines = []
    for key in sorted(tags, key=lambda k: (k.startswith("_"), k)):
        if key.startswith("_") and not system:
            continue
        value = tags[key]
        lines.append(
            f"{key}: {json.dumps(value, ensure_ascii=False) if isinstance(value, list) else value}"
        )
    return lines

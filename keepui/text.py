"""Text shown in every front end (CLI, workbench, MCP): one definition each, so a line is cut
the same way wherever it is shown."""

from __future__ import annotations


def first_line(text: str, width: int = 80) -> str:
    """The first non-empty line of a text, stripped and cut to a width (… marks a cut)."""
    line = next((x.strip() for x in text.splitlines() if x.strip()), "")
    return line if len(line) <= width else line[: width - 1] + "…"


def short_time(value: str) -> str:
    """`2026-11-22T12:34:56.789Z` -> `2026-11-22 12:34`."""
    return value[:16].replace("T", " ")

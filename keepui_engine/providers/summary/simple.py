"""Summarizers without a model: truncate, first_paragraph and passthrough."""

from __future__ import annotations

from keepui_engine.providers.summary.text import (
    cut,
    is_heading_line,
    normalize,
    paragraphs,
    strip_heading,
)


class TruncateSummarizer:
    """The first `max_chars` characters of the text, cut at a word boundary.

    Args:
        max_chars: Longest summary, counting the closing "…".
    """

    name = "truncate"
    uses_context = False

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars

    def summarize(self, text: str, *, context: list[str] | None = None) -> str:
        """Return the text's start, whitespace-normalised and cut; `context` is ignored."""
        return cut(normalize(text), self.max_chars)


class PassthroughSummarizer(TruncateSummarizer):
    """The text itself as its summary, whitespace-normalised, within `max_chars`.

    It differs from truncate only in intent: meant for short notes that are their own summary.
    """

    name = "passthrough"


def first_paragraph(text: str) -> str:
    """The first non-empty paragraph of `text`, not counting a paragraph made only of headings.

    Heading lines that open a paragraph with more lines under them are dropped too, so
    "# Title\\nBody" gives "Body". A text made only of headings gives its first heading's text.
    """
    paras = paragraphs(text)
    for para in paras:
        lines = [line for line in para.split("\n") if line.strip()]
        while lines and is_heading_line(lines[0]):
            lines.pop(0)
        if lines:
            return "\n".join(lines)
    return strip_heading(paras[0].split("\n")[0]) if paras else ""


class FirstParagraphSummarizer:
    """The first paragraph (blank-line separated, headings skipped), cut to `max_chars`.

    Args:
        max_chars: Longest summary, counting the closing "…".
    """

    name = "first_paragraph"
    uses_context = False

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars

    def summarize(self, text: str, *, context: list[str] | None = None) -> str:
        """Return the first paragraph, whitespace-normalised and cut; `context` is ignored."""
        return cut(normalize(first_paragraph(text)), self.max_chars)

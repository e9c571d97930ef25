"""Small text helpers shared by widgets: ages, times, scores, tags, first lines."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from rich.style import Style
from rich.text import Text

from keepui.text import first_line as first_line
from keepui.text import short_time as short_time


def now() -> datetime:
    """The current time (aware UTC); tests replace it to freeze ages."""
    return datetime.now(UTC)


def parse_iso(value: str) -> datetime:
    """An engine timestamp (`2026-11-22T12:34:56.789Z`) as an aware datetime."""
    dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def age(value: str) -> str:
    """How long ago: `40s`, `5m`, `3h`, `12d`, `2y`."""
    try:
        seconds = max((now() - parse_iso(value)).total_seconds(), 0.0)
    except ValueError:
        return "?"
    for unit, size in (("y", 365 * 86400), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def one_line(text: str, width: int) -> str:
    """A text as one line of at most `width` characters (runs of white space become one).

    Only the first `4 × width` characters are read, so a huge text costs no more than a short.
    """
    line = " ".join(text[: width * 4].split())
    return line if len(line) <= width else line[: width - 1] + "…"


def num(value: Any, digits: int = 3) -> str:
    """A score with fixed digits, or `–` when a channel did not return the document."""
    return "–" if value is None else f"{float(value):.{digits}f}"


def tag_pairs(tags: dict[str, Any], *, system: bool = False) -> list[str]:
    """`key=value` strings (one per value of a list), user tags only unless asked."""
    out: list[str] = []
    for key in sorted(tags):
        if key.startswith("_") and not system:
            continue
        values = tags[key] if isinstance(tags[key], list) else [tags[key]]
        out.extend(f"{key}={v}" for v in values)
    return out


def size(chars: int) -> str:
    """A character count, short: `812`, `12.4k`, `3.1M`."""
    if chars < 1000:
        return str(chars)
    if chars < 1_000_000:
        return f"{chars / 1000:.1f}k"
    return f"{chars / 1_000_000:.1f}M"


def cells(values: tuple[str, ...]) -> list[Text]:
    """Table cells as plain Text: DataTable reads a str cell as markup (`[x]` would vanish)."""
    return [Text(v, no_wrap=True, end="") for v in values]


def plural(n: int, word: str) -> str:
    """`1 attempt`, `2 attempts`."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def pending_text(entry: dict[str, Any]) -> str:
    """One unfinished task of a document, as a user reads it.

    `summarize queued`, `summarize running`,
    `summarize failed after 2 attempts (next try 2026-11-22 12:40): <error>`,
    `summarize failed after 5 attempts, gave up: <error>`.
    """
    task, state = entry.get("task") or "task", entry.get("state") or "?"
    if state in ("queued", "running"):
        return f"{task} {state}"
    tries = plural(int(entry.get("attempts") or 0), "attempt")
    error = entry.get("error") or "no error recorded"
    if state == "failed":
        nxt = entry.get("next_attempt")
        when = f" (next try {short_time(nxt)})" if nxt else ""
        return f"{task} failed after {tries}{when}: {error}"
    if state == "dead":
        return f"{task} failed after {tries}, gave up: {error}"
    return f"{task} {state}"


_FLAG_WORDS = {
    "as-of": "as",
    "since": "since",
    "until": "until",
    "mode": "mode",
    "fusion": "fusion",
    "rerank": "rerank",
    "limit": "n",
    "min-score": "min",
    "tag": "tag",
    "config": "config",
}
_FLAG_VALUE = re.compile(
    r"--(?P<flag>" + "|".join(re.escape(f) for f in _FLAG_WORDS) + r")"
    r"(?: '(?P<quoted>[^']*)'| (?P<number>-?\d+(?:\.\d+)?)(?!\w|\.\d))?"
)


def tui_words(text: str) -> str:
    """An engine message in the search bar's words: `--since 'x'` -> `since:x`, `--min-score
    0.5` -> `min:0.5`, `--limit 0` -> `n:0`, `--no-dedup` -> `dedup:off`."""

    def word(m: re.Match[str]) -> str:
        value = m.group("quoted") if m.group("quoted") is not None else m.group("number")
        return f"{_FLAG_WORDS[m.group('flag')]}:{value or ''}"

    return _FLAG_VALUE.sub(word, text.replace("--no-dedup", "dedup:off"))


_WORD = re.compile(r"\w{2,}")


def query_terms(query: str) -> list[str]:
    """Words of a query worth marking in a text (2 letters or more), longest first."""
    return sorted({w.lower() for w in _WORD.findall(query[:2000])}, key=len, reverse=True)


def mark_words(body: Text, query: str, style: str | Style) -> int | None:
    """Style every word of `body` that starts with a query word; the first one's offset."""
    terms = query_terms(query)
    if not terms:
        return None
    pattern = re.compile(r"\b(" + "|".join(re.escape(t) for t in terms) + r")\w*", re.IGNORECASE)
    body.highlight_regex(pattern, style=style)
    first = pattern.search(body.plain)
    return first.start() if first else None

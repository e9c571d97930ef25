"""Query sets: named lists of queries to run experiments on, stored as documents.

A query set NAME is the system document `.queryset/NAME` (so find and list leave it out
unless asked), tagged `type=queryset`, holding one query a line; adding it again stores a new
version, so its history, diff, export (`--include-system`) and import work as for any
document. A query's id is `judgments.qid(query)`, so sets join with the judgments.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from keepui_engine.core.errors import NotFound, UsageError
from keepui_engine.search.judgments import normalise, qid

if TYPE_CHECKING:
    from keepui_engine.client.workbench import Workbench
    from keepui_engine.core.types import Item

PREFIX = ".queryset/"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
SOURCES = ("judgments", "history", "file")
MAX_QUERIES = 100_000


@dataclass(frozen=True)
class QuerySet:
    """A stored query set.

    Attributes:
        name: Its name.
        id: Its document id (`.queryset/NAME`).
        queries: The queries, in order, each once (whitespace normalised).
        version: The document's version (1 = first).
        updated: When this version was stored (ISO-8601 UTC).
        source: Where the queries came from: judgments, history or file.
        action: What the last add did: created, updated or unchanged ("" when read).
    """

    name: str
    id: str
    queries: list[str]
    version: int
    updated: str
    source: str
    action: str = ""
    judged: dict[str, int] = field(default_factory=dict)  # query -> judgments it has

    def qids(self) -> dict[str, str]:
        """Query id -> query."""
        return {qid(q): q for q in self.queries}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: each query with its id (and how many judgments it has, when known)."""
        rows = []
        for q in self.queries:
            row: dict[str, Any] = {"qid": qid(q), "query": q}
            if self.judged:
                row["judgments"] = self.judged.get(q, 0)
            rows.append(row)
        out = {
            "name": self.name,
            "id": self.id,
            "version": self.version,
            "updated": self.updated,
            "source": self.source,
            "count": len(self.queries),
            "queries": rows,
        }
        return {**out, "action": self.action} if self.action else out


def check_name(name: str) -> str:
    """The name, when it can name a query set.

    Raises:
        UsageError: It is not letters, digits, - and _.
    """
    if not NAME.fullmatch(name):
        raise UsageError(
            f"query set name {name!r}: use letters, digits, - and _ (at most 64, starting "
            "with a letter or digit)."
        )
    return name


def read_file(path: Path) -> list[str]:
    """The queries of a file: one a line (blank lines and `#` comments skipped), or BEIR
    queries.jsonl (a JSON object a line, the query in `text`).

    Raises:
        UsageError: It cannot be read, or a JSON line has no text.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or "not UTF-8 text"
        raise UsageError(f"cannot read {path}: {why}. Give a file of queries.") from exc
    body = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
    if body and body[0].lstrip().startswith("{"):
        out = []
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError:
                raise UsageError(f"{path}:{n} is not a JSON object.") from None
            if not isinstance(row, dict) or not str(row.get("text", "")).strip():
                raise UsageError(
                    f'{path}:{n}: no `text` (BEIR queries.jsonl rows are {{"_id": …, "text": …}}).'
                )
            out.append(str(row["text"]))
        return out
    return body


def distinct(queries: list[str]) -> list[str]:
    """The queries normalised, each once, in their first order; empty ones dropped."""
    seen: dict[str, None] = {}
    for q in queries:
        text = " ".join(q.split())
        if text:
            seen.setdefault(text, None)
    return list(seen)


def from_history(wb: Workbench, last: int) -> list[str]:
    """The last `last` distinct queries searched in this store, newest first."""
    if last < 1:
        raise UsageError(f"--last {last}: give a number of queries of 1 or more.")
    out: list[str] = []
    for rec in wb.searches(limit=min(last * 10, 100_000)):
        text = " ".join(rec.q.query.split())
        if text and text not in out:
            out.append(text)
            if len(out) == last:
                break
    return out


def add(wb: Workbench, name: str, queries: list[str], source: str) -> QuerySet:
    """Store a query set (a new version when it exists and differs).

    Raises:
        UsageError: A bad name, no queries, or more than MAX_QUERIES.
    """
    check_name(name)
    texts = distinct(queries)
    if not texts:
        raise UsageError(f"query set {name}: no queries to store (the source gave none).")
    if len(texts) > MAX_QUERIES:
        raise UsageError(f"query set {name}: {len(texts)} queries; the limit is {MAX_QUERIES}.")
    for text in texts:
        normalise(text)
    got = wb.put(
        "\n".join(texts) + "\n",
        id=PREFIX + name,
        tags=["type=queryset", f"name={name}", f"source={source}"],
        summary=f"query set {name}: {len(texts)} queries from {source}",
    )
    from dataclasses import replace

    return replace(load(wb, name), action=got.action)


def _of(item: Item) -> QuerySet:
    tags = item.tags
    text = item.text or ""
    return QuerySet(
        item.id[len(PREFIX) :],
        item.id,
        [line for line in text.splitlines() if line.strip()],
        item.version,
        item.updated,
        str(tags.get("source", "")),
    )


def load(wb: Workbench, name: str) -> QuerySet:
    """The stored query set `name`.

    Raises:
        NotFound: There is none (the message lists those there are).
    """
    check_name(name)
    try:
        item = wb.get(PREFIX + name)
    except NotFound:
        known = [s.name for s in listing(wb)]
        raise NotFound(
            f"no query set {name!r}; "
            + (f"there are: {', '.join(known)}." if known else "there are none yet.")
            + " Add one with keepui queryset add NAME --from-judgments (or FILE)."
        ) from None
    return _of(item)


def listing(wb: Workbench) -> list[QuerySet]:
    """Every stored query set, by name."""
    items = wb.list_items(PREFIX, sort="id", limit=10_000, include_system=True)
    return [_of(wb.get(i.id)) for i in items if i.id.startswith(PREFIX)]


def with_judgments(wb: Workbench, qs: QuerySet) -> QuerySet:
    """The set with how many judgments each of its queries has."""
    from dataclasses import replace

    counts: dict[str, int] = {}
    for j in wb.judgments():
        counts[j.query] = counts.get(j.query, 0) + 1
    return replace(qs, judged={q: counts.get(q, 0) for q in qs.queries})

"""stdout is data, stderr is diagnostics: JSON, NDJSON and human renderings."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from keepui.text import first_line as first_line
from keepui.text import short_time as short_time

if TYPE_CHECKING:
    from keepui_engine import FindResult, Hit, KeepuiError

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


def render_find(result: FindResult, *, json_: bool, nl: bool, ids: bool) -> None:
    """Print a find result as one JSON document, NDJSON hits, ids, or a human table."""
    if json_:
        from dataclasses import replace

        hits = [h.to_dict() for h in result.hits]  # each without its empty extras
        emit_json({**replace(result, hits=[]).to_dict(), "hits": hits})
        return
    if nl:
        emit_ndjson([h.to_dict() for h in result.hits])
        return
    if ids:
        for h in result.hits:
            out(h.id)
        return
    for msg in result.notes:
        note(msg)
    if not result.hits:
        note(f"no matches for {result.query!r}")
    for h in result.hits:
        where = "" if h.version == 0 else f" @V{{{h.version}}}"
        out(
            f"{h.score:.3f}  {h.id}{where}  {short_time(h.updated)}  "
            f"({_parts(h)})  {first_line(h.summary, 60)}{_older(h)}"
        )
        for r in h.related or []:
            score = "" if r.get("score") is None else f" {r['score']:.3f}"
            out(f"       ↳ {r['id']}  ({r['via']}{score})")


def _older(hit: Hit) -> str:
    """`  [matched v2 of 4; the current text differs]` for a hit on an older version."""
    got = hit.archived
    if not got:
        return ""
    differs = "the current text differs" if got["text_differs"] else "the current tags differ"
    return f"  [matched v{got['version']} of {got['of']}; {differs}]"


_HINTS = {
    "usage": "run the command with --help for its arguments and examples",
    "not_found": "keepui list shows the ids; keepui get ID --history the versions",
    "store": "check --store / KEEPUI_STORE, and that no other program holds the store",
    "provider": "check [embedding] and [summarization] in the store's keepui.toml",
    "interrupted": "run the same command again to continue",
}


def json_wanted(args: list[str]) -> bool:
    """Whether the command line asks for JSON (`--json` or `--nl`) before any `--`."""
    for arg in args:
        if arg == "--":
            return False
        if arg in ("--json", "--nl"):
            return True
    return False


def emit_error(
    kind: str,
    message: str,
    hint: str | None,
    *,
    title: str,
    code: int,
    json_: bool,
    extra: dict[str, Any] | None = None,
) -> int:
    """The human line on stderr and, for --json/--nl, one error document on stdout (with
    `extra` fields, such as the ids an interrupted command had stored)."""
    same = title and message.lower().startswith(title.lower())
    line = f"Error: {title}: {message}" if title and not same else f"Error: {message}"
    sys.stderr.write(line + (f" ({hint})" if hint else "") + "\n")
    if json_:
        error = {"kind": kind, "message": message, "hint": hint or _HINTS.get(kind)}
        error.update(extra or {})
        sys.stdout.write(json.dumps({"schema": SCHEMA, "error": error}, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    return code


def report_error(exc: KeepuiError, json_: bool = False) -> int:
    """Print an engine error (stderr; stdout too for JSON output); return its exit code."""
    stored = getattr(exc, "stored", None)
    return emit_error(
        exc.public_kind,
        exc.message,
        exc.hint,
        title=exc.title,
        code=exc.exit_code,
        json_=json_,
        extra={"stored": stored} if stored else None,
    )


def _parts(hit: Any) -> str:
    """`sim 0.512 x decay 0.98`, or the channels that found a hybrid or BM25 hit."""
    sc = hit.scores or {}
    if sc.get("fused") is not None:
        ranks = [
            f"{name} {sc[c]:.{digits}f} #{sc[c + '_rank']}"
            for c, name, digits in (("dense", "sim", 3), ("bm25", "bm25", 2))
            if sc.get(c + "_rank")
        ]
        extra = f", +{len(hit.duplicates)} near-dup" if hit.duplicates else ""
        return f"{' + '.join(ranks)} x decay {hit.decay:.2f}{extra}"
    if hit.similarity is None:
        return f"bm25 {sc.get('bm25') or 0:.2f} x decay {hit.decay:.2f}"
    return f"sim {hit.similarity:.3f} x decay {hit.decay:.2f}"

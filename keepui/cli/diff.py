"""`keepui diff ID [A] [B]`: two versions of a document compared (default previous vs current)."""

from __future__ import annotations

import re
from typing import Annotated

import typer

from keepui.cli.options import JsonFlag, StoreOpt
from keepui.cli.output import emit_json, note, out, short_time
from keepui_engine import DiffRow, UsageError, VersionDiff, open_workbench

_VERSION = re.compile(r"^(?:(?P<id>.*)@)?[Vv]?\{?(?P<n>-?\d+)\}?$")


def parse_version(raw: str | None, doc_id: str) -> int | None:
    """A version offset from `1`, `-1`, `V{2}`, `@V{2}` or `ID@V{2}` (None stays None).

    Raises:
        UsageError: The text is not a version, or names another document.
    """
    if raw is None:
        return None
    m = _VERSION.match(raw.strip())
    if m is None:
        raise UsageError(
            f"version {raw!r}: give an offset (0 current, 1 previous, -1 oldest) or ID@V{{N}}."
        )
    named = m.group("id")
    base = doc_id.split("@", 1)[0]
    if named and named not in (doc_id, base):
        raise UsageError(f"version {raw!r} names {named!r}, not {base!r}.")
    return int(m.group("n"))


def _label(doc_id: str, offset: int, version: int, updated: str) -> str:
    where = doc_id if offset == 0 else f"{doc_id}@V{{{offset}}}"
    return f"{where}\tv{version}\t{short_time(updated)}"


def _hunks(rows: list[DiffRow], context: int) -> list[tuple[int, int]]:
    changed = [i for i, r in enumerate(rows) if r.kind != "equal"]
    hunks: list[tuple[int, int]] = []
    for i in changed:
        lo, hi = max(i - context, 0), min(i + context + 1, len(rows))
        if hunks and lo <= hunks[-1][1]:
            hunks[-1] = (hunks[-1][0], hi)
        else:
            hunks.append((lo, hi))
    return hunks


def _side(rows: list[DiffRow], before: list[DiffRow], left: bool) -> str:
    nos = [r.left_no if left else r.right_no for r in rows]
    present = [n for n in nos if n is not None]
    if present:
        return f"{present[0]},{len(present)}"
    prior = [r.left_no if left else r.right_no for r in before]
    last = max((n for n in prior if n is not None), default=0)
    return f"{last},0"


def unified(rows: list[DiffRow], context: int = 3) -> list[str]:
    """Unified-diff lines (`@@ -a,n +b,m @@`, then ` `, `-`, `+` lines) for diff rows."""
    lines: list[str] = []
    for lo, hi in _hunks(rows, context):
        chunk = rows[lo:hi]
        lines.append(f"@@ -{_side(chunk, rows[:lo], True)} +{_side(chunk, rows[:lo], False)} @@")
        run: list[DiffRow] = []
        for row in [*chunk, None]:
            if row is not None and row.kind != "equal":
                run.append(row)
                continue
            lines.extend(f"-{r.left}" for r in run if r.left_no is not None)
            lines.extend(f"+{r.right}" for r in run if r.right_no is not None)
            run = []
            if row is not None:
                lines.append(f" {row.left}")
    return lines


def render(diff: VersionDiff, context: int = 3) -> None:
    """Print a version diff as unified text on stdout (a note on stderr when equal)."""
    out(f"--- {_label(diff.id, diff.left_offset, diff.left_version, diff.left_updated)}")
    out(f"+++ {_label(diff.id, diff.right_offset, diff.right_version, diff.right_updated)}")
    tag_lines = unified(diff.tags, context=0)
    if tag_lines:
        out("tags:")
        for line in tag_lines:
            if not line.startswith("@@"):
                out(line)
    for line in unified(diff.rows, context):
        out(line)
    if not tag_lines and not (diff.added or diff.removed or diff.changed):
        note("no differences")


def diff(
    doc_id: Annotated[str, typer.Argument(help="Document id, ID@V{N}, or a file's path.")],
    a: Annotated[
        str | None,
        typer.Argument(
            help="Left version (default 1): 0 current, 1 previous, -1 oldest, or ID@V{N}."
        ),
    ] = None,
    b: Annotated[
        str | None, typer.Argument(help="Right version (default 0, the current one).")
    ] = None,
    context: Annotated[
        int, typer.Option("--context", "-U", help="Unchanged lines around each change.")
    ] = 3,
    store: StoreOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Compare two versions of a document (default: the previous one with the current one).

    \b
    Examples:
      keepui diff meeting-notes              # previous vs current
      keepui diff meeting-notes -1 0         # oldest vs current
      keepui diff "meeting-notes@V{2}"       # two versions back vs current
      keepui diff meeting-notes 2 1 --json
    """
    if context < 0:
        raise UsageError(f"--context {context}: give 0 or more.")
    left, right = parse_version(a, doc_id), parse_version(b, doc_id)
    with open_workbench(store, create=False) as wb:
        result = wb.diff(wb.resolve_id(doc_id), left, right)
    if json_:
        emit_json(result.to_dict())
    else:
        render(result, context)

"""Version diffs as data: difflib line opcodes into DiffRows, with word-level change spans."""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import TYPE_CHECKING

from keepui_engine.errors import NotFound
from keepui_engine.inputs import iso, split_version
from keepui_engine.types import DiffRow, VersionDiff

if TYPE_CHECKING:
    from keepui_engine.ports import Operations
    from keepui_engine.store.documents import Row

_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")


def word_spans(left: str, right: str) -> tuple[list[list[int]], list[list[int]]]:
    """Character ranges that differ between two lines, compared word by word.

    Args:
        left: The old line.
        right: The new line.

    Returns:
        (left spans, right spans), each a list of `[start, end)` ranges, merged when adjacent.
    """
    a, b = _TOKEN.findall(left), _TOKEN.findall(right)
    a_at, b_at = _offsets(a), _offsets(b)
    lspans: list[list[int]] = []
    rspans: list[list[int]] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        _add(lspans, a_at[i1], a_at[i2])
        _add(rspans, b_at[j1], b_at[j2])
    return lspans, rspans


def _offsets(tokens: list[str]) -> list[int]:
    out = [0]
    for tok in tokens:
        out.append(out[-1] + len(tok))
    return out


def _add(spans: list[list[int]], start: int, end: int) -> None:
    if end <= start:
        return
    if spans and spans[-1][1] == start:
        spans[-1][1] = end
    else:
        spans.append([start, end])


def diff_lines(left: list[str], right: list[str]) -> list[DiffRow]:
    """Align two lists of lines into side-by-side rows.

    A replaced block pairs its lines in order (each pair a `change` row with word spans); the
    lines left over on the longer side become `delete` or `insert` rows.

    Args:
        left: Lines of the old text.
        right: Lines of the new text.

    Returns:
        The rows, top to bottom.
    """
    rows: list[DiffRow] = []
    matcher = SequenceMatcher(None, left, right, autojunk=len(left) + len(right) > 4000)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            rows.extend(
                DiffRow("equal", i + 1, left[i], j + 1, right[j])
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
            )
            continue
        pairs = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        for k in range(pairs):
            ls, rs = word_spans(left[i1 + k], right[j1 + k])
            rows.append(
                DiffRow("change", i1 + k + 1, left[i1 + k], j1 + k + 1, right[j1 + k], ls, rs)
            )
        rows.extend(DiffRow("delete", i + 1, left[i], None, "") for i in range(i1 + pairs, i2))
        rows.extend(DiffRow("insert", None, "", j + 1, right[j]) for j in range(j1 + pairs, j2))
    return rows


def tag_lines(tags: dict[str, list[str]]) -> list[str]:
    """`key=value` lines of user tags, sorted (one line per value of a list)."""
    return [f"{k}={v}" for k in sorted(tags) for v in tags[k]]


def diff_texts(left: str, right: str) -> list[DiffRow]:
    """Rows for two whole texts (see `diff_lines`)."""
    return diff_lines(left.splitlines(), right.splitlines())


def _text(row: Row) -> str:
    return row.text if row.text is not None else row.summary


def version_diff(
    engine: Operations, address: str, a: int | None = None, b: int | None = None
) -> VersionDiff:
    """Compare two versions of a document.

    Args:
        engine: The open engine.
        address: `ID`, or `ID@V{N}` (then N is the left version unless `a` is given).
        a: Offset of the left version (0 current, 1 previous, -1 oldest); default previous.
        b: Offset of the right version; default current.

    Returns:
        The diff of the texts and of the user tags.

    Raises:
        NotFound: The document or one of the versions does not exist.
    """
    head, _ = engine.resolve(address, 0)
    doc_id = head.id
    split = split_version(address)
    if a is None and address != doc_id and split is not None:
        a = split[1]
    if a is None and head.version < 2:
        raise NotFound(
            f"{doc_id!r} has only one version, so there is nothing to compare yet. "
            f"`keepui get {doc_id} --history` lists its versions."
        )
    a, b = (1 if a is None else a), (0 if b is None else b)
    for name, offset in (("A", a), ("B", b)):
        ordinal = head.version - offset if offset >= 0 else -offset
        if not 1 <= ordinal <= head.version:
            raise NotFound(
                f"diff {doc_id}: {name} = {offset} is no version of {doc_id!r}, which has "
                f"{head.version}: give A and B as 0..{head.version - 1} (0 the current one) "
                f"or -1..-{head.version} (-1 the oldest), or {doc_id}@V{{N}}."
            )
    _, left = engine.resolve(doc_id, a)
    _, right = engine.resolve(doc_id, b)
    rows = diff_texts(_text(left), _text(right))
    return VersionDiff(
        id=doc_id,
        left_version=left.version,
        left_offset=head.version - left.version,
        left_updated=iso(left.updated),
        right_version=right.version,
        right_offset=head.version - right.version,
        right_updated=iso(right.updated),
        rows=rows,
        tags=diff_lines(tag_lines(left.tags), tag_lines(right.tags)),
        added=sum(r.kind == "insert" for r in rows),
        removed=sum(r.kind == "delete" for r in rows),
        changed=sum(r.kind == "change" for r in rows),
    )

"""Version diffs as data: difflib line opcodes into DiffRows, with word-level change spans."""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import TYPE_CHECKING

from keepui_engine.core.errors import NotFound
from keepui_engine.core.inputs import iso, split_version
from keepui_engine.core.types import DiffRow, VersionDiff
from keepui_engine.ops.reading import resolve

if TYPE_CHECKING:
    from keepui_engine.ops.ports import Operations
    from keepui_engine.store.tables.documents import Row

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


PAIR_RATIO = 0.5
"""Two lines of a replaced block share a `change` row (with word marks) when at least this share
of their words and signs match (difflib's ratio); lines matching none stand alone."""
PAIR_CELLS = 1024
"""Most line pairs a replaced block compares (32 x 32); a larger block pairs its lines by
position, each pair still only when similar enough."""
PAIR_WORK = 500_000
"""Most word pairs the comparisons of one block may cost (its old lines' words times its new
lines' words: difflib's ratio is quadratic in the words of long lines); a block beyond it
pairs by position too."""
SHORT_LINE = 3
"""Lines of at most this many words and signs also compare by characters (`v1` and `v2`, or
`apple` and `apples`, share no word but are one line edited)."""

_WORD = re.compile(r"\w+|[^\w\s]")


def pair_lines(left: list[str], right: list[str]) -> list[tuple[int, int]]:
    """Which lines of a replaced block are one line edited, by similarity and in order.

    The pairs are the order-keeping alignment with the largest total similarity, counting only
    pairs at or above `PAIR_RATIO` (so an inserted paragraph does not take the place of the
    heading edited below it); short lines compare by characters too (`SHORT_LINE`). Bounded: a
    block past `PAIR_CELLS` comparisons or `PAIR_WORK` pairs line k with line k, when they are
    similar enough.

    Args:
        left: The block's old lines.
        right: The block's new lines.

    Returns:
        `(i, j)` index pairs into `left` and `right`, increasing in both.
    """
    n, m = len(left), len(right)
    words_l = [_WORD.findall(line) for line in left]
    words_r = [_WORD.findall(line) for line in right]
    work = sum(map(len, words_l)) * sum(map(len, words_r))
    positional = n * m > PAIR_CELLS or work > PAIR_WORK
    if positional:
        cells = [(k, k) for k in range(min(n, m))]
    else:
        cells = [(i, j) for j in range(m) for i in range(n)]
    matcher: SequenceMatcher[str] = SequenceMatcher(None, autojunk=False)
    similar: dict[tuple[int, int], float] = {}
    for i, j in cells:
        matcher.set_seq2(words_r[j])  # the same line again is a no-op: difflib keeps its index
        matcher.set_seq1(words_l[i])
        ratio = _similar(matcher)
        if ratio is None and max(len(words_l[i]), len(words_r[j])) <= SHORT_LINE:
            ratio = _similar(SequenceMatcher(None, left[i], right[j], autojunk=False))
        if ratio is not None:
            similar[i, j] = ratio
    return sorted(similar) if positional else _best_alignment(n, m, similar)


def _similar(matcher: SequenceMatcher[str]) -> float | None:
    """The matcher's ratio when at least `PAIR_RATIO` (its cheap upper bounds first), else None."""
    if matcher.real_quick_ratio() < PAIR_RATIO or matcher.quick_ratio() < PAIR_RATIO:
        return None
    ratio = matcher.ratio()
    return ratio if ratio >= PAIR_RATIO else None


def _best_alignment(n: int, m: int, similar: dict[tuple[int, int], float]) -> list[tuple[int, int]]:
    """The increasing pairs of largest total similarity (an LCS weighted by the ratios)."""
    score = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        above, here = score[i - 1], score[i]
        for j in range(1, m + 1):
            best = max(above[j], here[j - 1])
            ratio = similar.get((i - 1, j - 1))
            if ratio is not None:
                best = max(best, above[j - 1] + ratio)
            here[j] = best
    pairs: list[tuple[int, int]] = []
    i, j = n, m
    while i and j:
        ratio = similar.get((i - 1, j - 1))
        if ratio is not None and score[i][j] == score[i - 1][j - 1] + ratio:
            pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif score[i][j] == score[i - 1][j]:
            i -= 1
        else:
            j -= 1
    return pairs[::-1]


def diff_lines(left: list[str], right: list[str]) -> list[DiffRow]:
    """Align two lists of lines into side-by-side rows.

    A replaced block pairs its lines by similarity (`pair_lines`): each pair is a `change` row
    with word spans; a line left unpaired is a `delete` (old) or `insert` (new) row, in order,
    the deletions before the insertions between two pairs.

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
        pairs = pair_lines(left[i1:i2], right[j1:j2]) if tag == "replace" else []
        i, j = i1, j1
        for pi, pj in [*((i1 + a, j1 + b) for a, b in pairs), (i2, j2)]:
            rows.extend(DiffRow("delete", k + 1, left[k], None, "") for k in range(i, pi))
            rows.extend(DiffRow("insert", None, "", k + 1, right[k]) for k in range(j, pj))
            if pi < i2:
                ls, rs = word_spans(left[pi], right[pj])
                rows.append(DiffRow("change", pi + 1, left[pi], pj + 1, right[pj], ls, rs))
            i, j = pi + 1, pj + 1
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
    head, _ = resolve(engine, address, 0)
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
    _, left = resolve(engine, doc_id, a)
    _, right = resolve(engine, doc_id, b)
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

"""How a hit reads in a result row: a readable title, its id dimmed after it, fixed-width scores."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import unquote, urlsplit

from rich.text import Text

from keepui.tui.widgets.format import age, num, one_line
from keepui_engine import Hit

TITLE_WORDS = 8
"""Words of the summary a row shows when the document has no title and no file name."""
MIN_TITLE = 24
"""Below this width for the title, the row drops the sim, bm25 and decay columns."""
CELL_PADDING = 1
"""Spaces each side of a cell (the DataTable's `cell_padding`)."""
SCROLLBAR = 2
"""Columns kept free for the table's vertical scrollbar."""


@dataclass(frozen=True)
class Column:
    """One fixed-width column of the results table."""

    key: str
    """Its key (and header label)."""
    width: int
    """Its width in cells, padding excluded."""


RANK = Column("#", 3)
SCORES = (Column("score", 5), Column("sim", 5), Column("bm25", 5), Column("decay", 5))
AGE = Column("age", 4)


@dataclass(frozen=True)
class RowLayout:
    """Which columns a table of a given width shows, and how wide the title is."""

    title_width: int
    """Cells for the title and the id."""
    columns: tuple[Column, ...]
    """The fixed columns after the title (score first)."""

    @property
    def keys(self) -> list[str]:
        """The column labels, in order."""
        return [RANK.key, "title · id", *(c.key for c in self.columns)]


def row_layout(width: int) -> RowLayout:
    """The layout for a table `width` cells wide: the scores always fit, the title gets the rest."""
    for columns in ((*SCORES, AGE), (SCORES[0], AGE)):
        fixed = sum(c.width + 2 * CELL_PADDING for c in (RANK, *columns))
        title = width - fixed - 2 * CELL_PADDING - SCROLLBAR
        if title >= MIN_TITLE or len(columns) == 2:
            return RowLayout(max(title, 8), columns)
    raise AssertionError("unreachable")


def file_name(doc_id: str) -> str:
    """The file or page name of a `file://` or http(s) id (`` for other ids)."""
    if not doc_id.startswith(("file://", "http://", "https://")):
        return ""
    parts = urlsplit(doc_id)
    name = PurePosixPath(unquote(parts.path)).name
    return name or parts.netloc


_SPACE = re.compile(r"\s+")


def readable_title(hit: Hit) -> str:
    """The `title` tag, else the file name, else the summary's first words, else the id."""
    title = hit.tags.get("title")
    if isinstance(title, list):
        title = title[0] if title else None
    if isinstance(title, str) and title.strip():
        return one_line(title, 200)
    name = file_name(hit.id)
    if name:
        return name
    words = _SPACE.split(hit.summary.strip(), maxsplit=TITLE_WORDS)
    if words and words[0]:
        head = " ".join(words[:TITLE_WORDS])
        return head + ("…" if len(words) > TITLE_WORDS else "")
    return hit.id


def short_id(doc_id: str, width: int) -> str:
    """An id within `width`: cut at the end (`auth-desi…`: an id is read, and typed, from its
    start), except a URI, whose end names the file (`file:///home/u…/notes/rivers.md`)."""
    if len(doc_id) <= width:
        return doc_id
    if "://" in doc_id:
        return middle_ellipsis(doc_id, width)
    if width <= 1:
        return "…"[:width]
    return doc_id[: width - 1] + "…"


def middle_ellipsis(text: str, width: int) -> str:
    """`file:///home/u…/notes/rivers.md`: the start and (more of) the end, within `width`."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    head = (width - 1) // 3
    tail = width - 1 - head
    return text[:head] + "…" + text[len(text) - tail :]


def _around(text: str, at: int, width: int) -> str:
    """Like `middle_ellipsis`, but the character at `at` is always shown."""
    if len(text) <= width:
        return text
    head = max(1, min(6, width // 5))
    tail_room = width - head - 1
    if len(text) - at <= tail_room:  # the difference falls in the end that is shown
        return text[:head] + "…" + text[len(text) - tail_room :]
    tail = max(1, min(16, width // 3))
    room = width - head - tail - 2
    if room < 1:
        return middle_ellipsis(text, width)
    start = max(head, at - room // 3)
    return text[:head] + "…" + text[start : start + room] + "…" + text[len(text) - tail :]


def short_ids(widths: dict[str, int]) -> dict[str, str]:
    """Each id within its width (`{id: cells}`), as `short_id` cuts it, and no two shown alike.

    When two long ids would look the same (the same start and end: two files of one name in
    different folders), each shows the stretch where it first differs from the other; the
    rare ids still alike then show their whole end, or their whole start, or a number.
    """
    shown = {i: short_id(i, w) for i, w in widths.items()}
    for same in _alike(shown):
        for doc_id in same:
            at = max(_first_difference(doc_id, other) for other in same if other != doc_id)
            shown[doc_id] = _around(doc_id, at, widths[doc_id])
    for end in (True, False):
        for same in _alike(shown):
            for doc_id in same:
                w = widths[doc_id]
                if len(doc_id) > w:
                    shown[doc_id] = (
                        "…" + doc_id[len(doc_id) - w + 1 :] if end else doc_id[: w - 1] + "…"
                    )
    alike = [doc_id for same in _alike(shown) for doc_id in same]
    for k, doc_id in enumerate(alike, 1):  # a very narrow column: number them
        mark = f"…#{k}"
        shown[doc_id] = doc_id[: max(widths[doc_id] - len(mark), 0)] + mark
    return shown


def _alike(shown: dict[str, str]) -> list[list[str]]:
    groups: dict[str, list[str]] = {}
    for doc_id, text in shown.items():
        groups.setdefault(text, []).append(doc_id)
    return [same for same in groups.values() if len(same) > 1]


def _first_difference(a: str, b: str) -> int:
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)


def older_mark(hit: Hit) -> str:
    """` older v2 of 4` for a hit on an older version (a search with history), else ``."""
    got = hit.archived
    return f" older v{got['version']} of {got['of']}" if got else ""


def id_suffix(hit: Hit) -> str:
    """What follows the id: `@V{N}` for an older version (` older v2 of 4` instead when a
    search with history says which one: the ordinal, not the offset), `+N` for duplicates."""
    where = "" if hit.version == 0 or hit.archived else f"@V{{{hit.version}}}"
    dup = f" +{len(hit.duplicates)}" if hit.duplicates else ""
    return where + dup + older_mark(hit)


def split_title(hit: Hit, width: int) -> tuple[str, int]:
    """(title shown, cells left for the id and its suffix) in a title column `width` wide.

    The id keeps at least a third of the column (or all it needs), and `older v2 of 4` its
    whole length; the title takes the rest.
    """
    title = readable_title(hit)
    older = len(older_mark(hit))
    need = len(hit.id) + len(id_suffix(hit)) - older
    if title == hit.id:
        return "", width
    id_min = min(need, max(12, width // 3)) + older
    shown = one_line(title, max(width - 2 - id_min, 1))
    return shown, max(width - len(shown) - 2, 1)


GRADE_MARKS = {0: ("✗ ", "red"), 1: ("✓ ", "green"), 2: ("✓✓ ", "green"), 3: ("✓✓✓ ", "green")}
"""The mark a judged row leads with: not relevant (grade 0), relevant (1), more (2, 3)."""


UNJUDGED_MARK = ("? ", "bold yellow")
"""The mark of a hit not judged yet, where judging is the point (the experiments' side by side)."""


def grade_mark(grade: int | None) -> Text:
    """`✓ ` for a hit judged relevant (`✓✓✓ ` for grade 3), `✗ ` not relevant, `` unjudged."""
    if grade is None:
        return Text(end="")
    mark, style = GRADE_MARKS.get(grade, GRADE_MARKS[1])
    return Text(mark, style=f"bold {style}", end="")


def title_cell(hit: Hit, title: str, short_id: str, width: int, mark: Text | None = None) -> Text:
    """The title, then the id (and `@V{N}`, `+N` duplicates) dimmed and ` older v2 of 4` in
    italics, within `width` cells; a judged hit's grade `mark` first."""
    text = Text(no_wrap=True, end="", overflow="ellipsis")
    if mark is not None:
        text.append_text(mark)
    if title:
        text.append(title + "  ")
    older = older_mark(hit)
    suffix = id_suffix(hit)
    text.append(short_id + suffix[: len(suffix) - len(older)], style="dim")
    if older:
        text.append(older, style="italic")
    text.truncate(width, overflow="ellipsis")
    return text


def title_cells(
    hits: list[Hit], width: int, grades: dict[str, int] | None = None, *, unjudged: bool = False
) -> list[Text]:
    """The title column of a result list: ids shortened so that no two look the same; a hit
    with a relevance judgment in `grades` leads with its mark (and, with `unjudged`, a hit
    without one with `? `)."""
    grades = grades or {}
    marks = [
        Text(UNJUDGED_MARK[0], style=UNJUDGED_MARK[1], end="")
        if unjudged and h.id not in grades
        else grade_mark(grades.get(h.id))
        for h in hits
    ]
    titles: list[str] = []
    widths: dict[str, int] = {}
    for hit, mark in zip(hits, marks, strict=True):
        title, room = split_title(hit, width - mark.cell_len)
        titles.append(title)
        widths[hit.id] = min(widths.get(hit.id, room), max(room - len(id_suffix(hit)), 4))
    shown = short_ids(widths)
    return [
        title_cell(h, t, shown[h.id], width, m or None)
        for h, t, m in zip(hits, titles, marks, strict=True)
    ]


def score_cells(hit: Hit, layout: RowLayout, *, scored: bool = True) -> list[Text]:
    """The fixed columns of a hit: score (and sim, bm25, decay when they fit), age; `–` for
    every score of a listed (not searched) document."""
    sc = hit.scores or {}
    values = {
        "score": num(hit.score),
        "sim": num(sc.get("dense", hit.similarity)),
        "bm25": fit_number(sc.get("bm25"), 5),
        "decay": num(sc.get("decay", hit.decay), 2),
        "age": age(hit.updated),
    }
    if not scored:
        values.update(dict.fromkeys(("score", "sim", "bm25", "decay"), "–"))
    return [
        Text(values[c.key][: c.width], justify="right", no_wrap=True, end="")
        for c in layout.columns
    ]


def fit_number(value: object, width: int) -> str:
    """A number with 2 decimals, fewer when it would not fit `width` (`–` for none)."""
    if value is None:
        return "–"
    number = float(value)  # type: ignore[arg-type]
    for digits in (2, 1, 0):
        text = f"{number:.{digits}f}"
        if len(text) <= width:
            return text
    return "9" * width


def hit_cells(
    rank: int, hit: Hit, layout: RowLayout, title: Text, *, scored: bool = True
) -> list[Text]:
    """Every cell of a hit's row, in the layout's order (the title cell from `title_cells`)."""
    return [
        Text(str(rank), justify="right", no_wrap=True, end=""),
        title,
        *score_cells(hit, layout, scored=scored),
    ]

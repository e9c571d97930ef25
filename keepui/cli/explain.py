"""`keepui find --explain`: every hit's score components as a table (stdout, via rich)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from keepui_engine import FindResult


def _num(value: float | int | None, digits: int = 4) -> str:
    if value is None:
        return "–"
    return str(value) if isinstance(value, int) else f"{value:.{digits}f}"


def part_label(part: dict[str, object] | None, width: int = 24) -> str:
    """`2 Mountains` for a part hit (the title cut to `width`), "" for a whole-text hit."""
    if not part:
        return ""
    title = " ".join(str(part.get("title") or "").split())
    if len(title) > width:
        title = title[: width - 1] + "…"
    return f"{part['index']} {title}".rstrip()


def render_explain(result: FindResult) -> None:
    """Print the hits with dense/BM25 scores and ranks, fused score, decay and final score.

    A hit that matched through a part names it (number and title) in the `part` column, and
    the lines under the table quote the part where the query's words occur.
    """
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{result.mode} search for {result.query!r}", title_justify="left")
    names = ("#", "id", "matched", "part", "dense")
    for name in (*names, "rank", "bm25", "rank", "fused", "decay", "final"):
        table.add_column(name, justify="left" if name in ("id", "matched", "part") else "right")
    for n, hit in enumerate(result.hits, 1):
        s = hit.scores
        table.add_row(
            str(n),
            hit.id,
            hit.matched if hit.matched != hit.id else "",
            part_label(hit.part),
            _num(s.get("dense")),
            _num(s.get("dense_rank")),
            _num(s.get("bm25"), 3),
            _num(s.get("bm25_rank")),
            _num(s.get("fused"), 5),
            _num(s.get("decay"), 3),
            _num(s.get("final"), 5),
        )
    console = Console(width=max(Console().width, 100))
    console.print(table)
    for n, hit in enumerate(result.hits, 1):
        if hit.part and hit.part.get("excerpt"):
            place = f" ({hit.part['position']})" if hit.part.get("position") else ""
            line = f"#{n} {hit.matched}{place}: {hit.part['excerpt']}"
            console.print(line, markup=False, highlight=False)
    for note in result.notes:
        console.print(f"[dim]{note}[/dim]")
    console.print(
        f"[dim]{result.searched} versions searched ({result.method}); "
        "final = (fused if hybrid, else the channel's score) x decay[/dim]"
    )

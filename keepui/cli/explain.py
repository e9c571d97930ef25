"""`keepui find --explain`: every hit's score components as a table (stdout, via rich)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from keepui_engine import FindResult


def _num(value: float | int | None, digits: int = 4) -> str:
    if value is None:
        return "–"
    return str(value) if isinstance(value, int) else f"{value:.{digits}f}"


def render_explain(result: FindResult) -> None:
    """Print the hits with dense/BM25 scores and ranks, fused score, decay and final score."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{result.mode} search for {result.query!r}", title_justify="left")
    for name in ("#", "id", "matched", "dense", "rank", "bm25", "rank", "fused", "decay", "final"):
        table.add_column(name, justify="left" if name in ("id", "matched") else "right")
    for n, hit in enumerate(result.hits, 1):
        s = hit.scores
        table.add_row(
            str(n),
            hit.id,
            hit.matched if hit.matched != hit.id else "",
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
    for note in result.notes:
        console.print(f"[dim]{note}[/dim]")
    console.print(
        f"[dim]{result.searched} versions searched ({result.method}); "
        "final = (fused if hybrid, else the channel's score) x decay[/dim]"
    )

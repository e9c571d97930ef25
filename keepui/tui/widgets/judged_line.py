"""JudgedLine: under a result table, how its hits fare on the query's relevance judgments."""

from __future__ import annotations

from collections.abc import Mapping

from textual.widgets import Static

from keepui.tui.widgets.format import num


def judged_text(score: Mapping[str, object]) -> str:
    """`judged 7/20 · nDCG@10 0.81` from `Workbench.judged_score`."""
    shown = f"judged {score.get('judged', 0)}/{score.get('shown', 0)}"
    return f"{shown} · nDCG@10 {num(score.get('ndcg@10'), 2)}"


class JudgedLine(Static):
    """One line, shown only when the tab's query has judgments (`+`/`-` on a hit)."""

    DEFAULT_CSS = """
    JudgedLine { height: 1; padding: 0 1; display: none; }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__("", markup=False, id=id)

    def show_score(self, score: Mapping[str, object] | None) -> None:
        """Show the score line (None: hide it, the query has no judgments)."""
        self.display = score is not None
        self.update(judged_text(score) if score is not None else "")

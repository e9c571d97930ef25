"""The experiments screen's lists: ConfigList (the configurations to run), MetricsTable (an
experiment's scores per configuration, with intervals), its paired tests, and QueryTable (its
queries ordered by how much two configurations differ on them)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable, SelectionList

from keepui.tui.widgets.format import one_line
from keepui.tui.widgets.keys import OPTION_KEYS, TABLE_KEYS
from keepui_engine import Experiment


def interval(low: float, high: float) -> str:
    """`[0.697, 0.776]`."""
    return f"[{low:.3f}, {high:.3f}]"


def metric_cell(exp: Experiment, config: str, metric: str) -> str:
    """`0.7362 [0.697, 0.776]`: the mean and its 95% bootstrap interval."""
    return f"{exp.scores[config][metric]:.4f} {interval(*exp.intervals[config][metric])}"


def paired_lines(exp: Experiment) -> list[str]:
    """Each configuration against the first on the first metric: `words vs default ndcg@10:
    -0.0177 [-0.042, 0.000] p=0.249 · wins 0, losses 3 · no difference`."""
    if not exp.configs:
        return []
    reference, metric = exp.configs[0], exp.metrics[0]
    lines = []
    for t in exp.paired:
        if t["b"] != reference or t["metric"] != metric:
            continue
        p = float(t["p"])
        said = "p<0.001" if p < 0.001 else f"p={p:.3f}"
        spans = t["low"] <= 0 <= t["high"]
        lines.append(
            f"{t['a']} vs {t['b']} {metric}: {t['delta']:+.4f} {interval(t['low'], t['high'])} "
            f"{said} · wins {t['wins']}, losses {t['losses']}"
            + (" · no difference" if spans else "")
        )
    return lines


def query_rows(exp: Experiment) -> list[dict[str, Any]]:
    """The scored queries, the first two configurations side by side on the first metric:
    {"qid", "query", "a", "b" (None with one configuration), "diff" (b - a), "unjudged"},
    the largest difference first (with one configuration: the lowest score first)."""
    metric = exp.metrics[0]
    shown = exp.configs[:2]
    rows = []
    for key, row in exp.per_query.items():
        scores = row["scores"]
        a = scores[shown[0]][metric]
        b = scores[shown[1]][metric] if len(shown) > 1 else None
        pool = {i for c in shown for i in exp.unjudged.get(c, {}).get(key, [])}
        rows.append(
            {
                "qid": key,
                "query": row.get("query") or key,
                "a": a,
                "b": b,
                "diff": None if b is None else b - a,
                "unjudged": len(pool),
            }
        )
    if len(shown) > 1:
        rows.sort(key=lambda r: (-abs(r["diff"]), r["query"]))
    else:
        rows.sort(key=lambda r: (r["a"], r["query"]))
    return rows


def _right(text: str) -> Text:
    return Text(text, justify="right", no_wrap=True, end="")


class ConfigList(SelectionList[str]):
    """The search configurations to run, each with what it changes; Space checks one."""

    BINDINGS = [*OPTION_KEYS, Binding("space", "select", "Check")]


class MetricsTable(DataTable[Text]):
    """One row per configuration: each metric's mean with its 95% interval (what each
    configuration changes is in the configurations list above)."""

    BINDINGS = TABLE_KEYS

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)

    def show(self, exp: Experiment | None) -> None:
        """Show an experiment's scores (None: empty)."""
        self.clear(columns=True)
        if exp is None:
            return
        self.add_column("config", key="config")
        for metric in exp.metrics:
            self.add_column(Text(metric, justify="right"), key=metric)
        for config in exp.configs:
            cells = [_right(metric_cell(exp, config, m)) for m in exp.metrics]
            self.add_row(Text(config, end=""), *cells, key=config)


class QueryTable(DataTable[Text]):
    """The scored queries by how much the first two configurations differ on the first metric;
    Enter on one (`DataTable.RowSelected`, its key the query id) opens them side by side."""

    BINDINGS = [*TABLE_KEYS, Binding("enter", "select_cursor", "Side by side")]

    QUERY_WIDTH = (16, 60)
    """The query column's narrowest and widest (it takes what the scores leave)."""
    SCORES_WIDTH = 41
    """Cells of the score columns with their padding, the borders and the scrollbar."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.entries: list[dict[str, Any]] = []
        """What each row shows, in order (`query_rows`)."""
        self._experiment: Experiment | None = None
        self._shown_width = 0

    def show(self, exp: Experiment | None, keep: str | None = None) -> None:
        """Show an experiment's queries; the cursor stays on query id `keep` (else on the
        row it was on)."""
        at = self.cursor_row
        if keep is None and self.current is not None:
            keep = self.current["qid"]
        self._experiment = exp
        self.clear(columns=True)
        self.entries = query_rows(exp) if exp is not None else []
        if exp is None:
            return
        shown = exp.configs[:2]
        metric = exp.metrics[0]
        low, high = self.QUERY_WIDTH
        width = min(max((self.size.width or 80) - self.SCORES_WIDTH, low), high)
        self._shown_width = width
        self.add_column("query", width=width, key="query")
        for config in shown:
            self.add_column(Text(one_line(config, 12), justify="right"), key=f"score-{config}")
        if len(shown) > 1:
            self.add_column(Text("diff", justify="right"), key="diff")
        self.add_column(Text("unjudged", justify="right"), key="unjudged")
        for row in self.entries:
            cells = [Text(one_line(row["query"], width), no_wrap=True, end="")]
            cells.append(_right(f"{row['a']:.4f}"))
            if row["b"] is not None:
                cells.append(_right(f"{row['b']:.4f}"))
                diff = row["diff"]
                style = "green" if diff > 0 else "red" if diff < 0 else "dim"
                cells.append(Text(f"{diff:+.4f}", style=style, justify="right", end=""))
            count = row["unjudged"]
            cells.append(_right(str(count) if count else "·"))
            self.add_row(*cells, key=row["qid"])
        self.border_subtitle = f"{metric} · {len(self.entries)} judged queries"
        ids = [r["qid"] for r in self.entries]
        if keep in ids:
            self.move_cursor(row=ids.index(keep), scroll=True)
        elif self.entries:
            self.move_cursor(row=min(at, len(self.entries) - 1))

    def on_resize(self) -> None:
        """Give the query column the width the scores leave (once laid out, and on resize)."""
        low, high = self.QUERY_WIDTH
        width = min(max(self.size.width - self.SCORES_WIDTH, low), high)
        if self._experiment is not None and width != self._shown_width:
            self.show(self._experiment)

    @property
    def current(self) -> dict[str, Any] | None:
        """The row under the cursor."""
        if not self.entries or not 0 <= self.cursor_row < len(self.entries):
            return None
        return self.entries[self.cursor_row]

"""FlowResults: a finished flow's final results, grouped by facet when it stopped ambiguous,
each hit's neighbours under it after find-deep; Enter opens a document."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from keepui.tui.widgets.format import first_line, num, plural
from keepui.tui.widgets.keys import OPTION_KEYS

Row = tuple[str, Any]
"""(`heading`, text) or (`hit`, hit dict) or (`related`, neighbour dict): one line of the list."""


def facet_groups(data: dict[str, Any], results: list[dict[str, Any]]) -> list[Row]:
    """One heading a facet value (`project=web · 2 hits`), its branch's hits under it, then
    the results no branch holds (`other`). Empty when the flow did not branch by facets."""
    facets, branches = data.get("facets"), data.get("branches")
    if not isinstance(facets, list) or not isinstance(branches, list):
        return []
    rows: list[Row] = []
    grouped: set[str] = set()
    for facet, branch in zip(facets, branches, strict=False):
        hits = branch.get("results") if isinstance(branch, dict) else None
        if not isinstance(hits, list):
            continue
        rows.append(("heading", f"{facet} · {plural(len(hits), 'hit')}"))
        rows += [("hit", h) for h in hits]
        grouped |= {str(h.get("id")) for h in hits}
    if not rows:
        return []
    rest = [h for h in results if str(h.get("id")) not in grouped]
    if rest:
        rows.append(("heading", f"other · {plural(len(rest), 'hit')}"))
        rows += [("hit", h) for h in rest]
    return rows


def with_neighbours(data: dict[str, Any], results: list[dict[str, Any]]) -> list[Row]:
    """Each hit, then its neighbours (`related` groups of find-deep) indented under it."""
    related = data.get("related")
    groups = related if isinstance(related, dict) else {}
    rows: list[Row] = []
    for hit in results:
        rows.append(("hit", hit))
        rows += [("related", n) for n in groups.get(str(hit.get("id")), []) or []]
    return rows


def flow_rows(results: list[dict[str, Any]], data: dict[str, Any] | None = None) -> list[Row]:
    """The lines to show for a flow's results and its `return: with:` payload."""
    data = data or {}
    return facet_groups(data, results) or with_neighbours(data, results)


def row_prompt(kind: str, value: Any) -> Content:
    """How one line reads."""
    if kind == "heading":
        return Content.styled(str(value), "bold $accent")
    summary = first_line(str(value.get("summary") or ""), 60)
    if kind == "related":
        via = str(value.get("via") or "related")
        return Content.assemble(
            "    ↳ ",
            (f"{via}  ", "dim"),
            (str(value.get("id", "?")), "bold"),
            f"  {num(value.get('score'))}  {summary}",
        )
    return Content.assemble(
        f"{num(value.get('score'))}  ", (str(value.get("id", "?")), "bold"), f"  {summary}"
    )


class FlowResults(OptionList):
    """The hits a flow ended with (hit dicts, as `FlowResult.results` holds them).

    When the flow stopped ambiguous with the results split by facets (`data["branches"]`),
    they are grouped under one heading a facet value; after find-deep each hit has its
    neighbours (`data["related"]`) under it. Enter on a hit or neighbour posts `Chosen`.
    """

    BINDINGS = OPTION_KEYS

    @dataclass
    class Chosen(Message):
        """The user opened a result."""

        doc_id: str
        """The document's id."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.results: list[dict[str, Any]] = []
        self.rows: list[Row] = []
        self.grouped = False
        """The results are shown in groups, one a facet value."""

    def set_results(
        self, results: list[dict[str, Any]], data: dict[str, Any] | None = None
    ) -> None:
        """Show these results, best first (an empty list clears the list)."""
        self.results = list(results)
        self.rows = flow_rows(self.results, data)
        self.grouped = any(kind == "heading" for kind, _ in self.rows)
        self.clear_options()
        self.add_options(
            Option(row_prompt(kind, value), id=f"result-{i}", disabled=kind == "heading")
            for i, (kind, value) in enumerate(self.rows)
        )
        self.border_title = "results by facet" if self.grouped else "results"
        first = next((i for i, (kind, _) in enumerate(self.rows) if kind != "heading"), None)
        self.highlighted = first

    @property
    def current(self) -> dict[str, Any] | None:
        """The hit (or neighbour) under the cursor."""
        index = self.highlighted
        if index is None or not 0 <= index < len(self.rows):
            return None
        kind, value = self.rows[index]
        return value if kind != "heading" else None

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Turn the selected option into a `Chosen` message carrying its id."""
        event.stop()
        if 0 <= event.option_index < len(self.rows):
            kind, value = self.rows[event.option_index]
            if kind != "heading":
                self.post_message(self.Chosen(str(value["id"])))

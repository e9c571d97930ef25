"""FlowResults: a finished flow's final results, best first; Enter opens a document."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from keepui.widgets.format import first_line, num
from keepui.widgets.keys import OPTION_KEYS


class FlowResults(OptionList):
    """The hits a flow ended with (hit dicts, as `FlowResult.results` holds them).

    Enter on one posts `FlowResults.Chosen`.
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

    def set_results(self, results: list[dict[str, Any]]) -> None:
        """Show these results, best first (an empty list clears the list)."""
        self.results = list(results)
        self.clear_options()
        self.add_options(
            Option(
                Content.assemble(
                    f"{num(hit.get('score'))}  ",
                    (str(hit.get("id", "?")), "bold"),
                    f"  {first_line(str(hit.get('summary') or ''), 60)}",
                ),
                id=f"result-{i}",
            )
            for i, hit in enumerate(self.results)
        )
        if self.results:
            self.highlighted = 0

    @property
    def current(self) -> dict[str, Any] | None:
        """The result under the cursor."""
        index = self.highlighted
        if index is None or not 0 <= index < len(self.results):
            return None
        return self.results[index]

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Turn the selected option into a `Chosen` message carrying its id."""
        event.stop()
        if 0 <= event.option_index < len(self.results):
            self.post_message(self.Chosen(str(self.results[event.option_index]["id"])))

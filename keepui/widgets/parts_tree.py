"""PartsTree: the parts of a document (pages, slides, sections) with their summaries."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.message import Message
from textual.widgets import Tree

from keepui.widgets.format import first_line
from keepui.widgets.keys import TREE_KEYS
from keepui_engine import Part


def part_label(part: Part) -> str:
    """`3 · heading · Results — chars 0-2048`."""
    title = part.title or first_line(part.summary, 40) or "(empty)"
    return f"{part.part} · {part.kind} · {title} — {part.position}"


class PartsTree(Tree[Part]):
    """Parts grouped by kind under one root; highlighting a part posts `PartsTree.PartChosen`."""

    BINDINGS = TREE_KEYS

    @dataclass
    class PartChosen(Message):
        """The cursor moved to a part (None for the root or a group)."""

        part: Part | None
        """The part whose text to show."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__("parts", id=id)
        self.show_root = True
        self.parts: list[Part] = []

    def set_parts(self, parts: list[Part]) -> None:
        """Show these parts, grouped under their kind when there are several kinds."""
        self.parts = list(parts)
        self.clear()
        self.root.set_label(f"parts ({len(parts)})" if parts else "no parts")
        kinds = list(dict.fromkeys(p.kind for p in parts))
        for kind in kinds:
            group = self.root if len(kinds) == 1 else self.root.add(kind, expand=True)
            for part in (p for p in parts if p.kind == kind):
                group.add_leaf(Text(part_label(part)), data=part)
        self.root.expand()

    def action_first_line(self) -> None:
        """Go to the first line."""
        self.cursor_line = 0

    def action_last_line(self) -> None:
        """Go to the last line."""
        self.cursor_line = max(self.last_line, 0)

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[Part]) -> None:
        """Report the part under the cursor."""
        event.stop()
        self.post_message(self.PartChosen(event.node.data))

    def on_tree_node_selected(self, event: Tree.NodeSelected[Part]) -> None:
        """Enter shows the part too."""
        event.stop()
        self.post_message(self.PartChosen(event.node.data))

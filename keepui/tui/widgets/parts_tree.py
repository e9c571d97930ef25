"""PartsTree: the parts of a document (pages, slides, sections) with their summaries."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from keepui.tui.widgets.format import first_line
from keepui.tui.widgets.keys import TREE_KEYS
from keepui_engine import Part


def part_label(part: Part) -> str:
    """`3 Results`: the number and the title (or first words); kind and position are shown
    with the part's text, so a narrow tree cuts no more than the title's end."""
    title = part.title or first_line(part.summary, 60) or "(empty)"
    return f"{part.part} {title}"


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
        self.show_root = False  # the count is in the pane's title: one more row for parts
        self.parts: list[Part] = []

    def set_parts(self, parts: list[Part], select: int = 0) -> None:
        """Show these parts, grouped under their kind when there are several kinds.

        Args:
            parts: The parts, in order.
            select: The number of a part to put the cursor on (and scroll to); 0 for none.
        """
        self.parts = list(parts)
        self.clear()
        kinds = list(dict.fromkeys(p.kind for p in parts))
        self.root.set_label(f"parts ({len(parts)})" if parts else "no parts")
        self.border_title = str(self.root.label)
        chosen = None
        for kind in kinds:
            group = self.root if len(kinds) == 1 else self.root.add(kind, expand=True)
            for part in (p for p in parts if p.kind == kind):
                node = group.add_leaf(Text(part_label(part)), data=part)
                if part.part == select:
                    chosen = node
        self.root.expand()
        if chosen is not None:
            self.call_after_refresh(self._select, chosen)

    def unselect(self) -> None:
        """No part under the cursor (the version is shown whole), without reporting one."""
        with self.prevent(Tree.NodeHighlighted):
            self.cursor_line = -1

    def _select(self, node: TreeNode[Part]) -> None:
        self.move_cursor(node)
        self.scroll_to_node(node, animate=False)

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

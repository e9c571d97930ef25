"""DetailPane: the highlighted hit (scores, tags, times, summary) and its text, query marked."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from keepui.tui.widgets.format import (
    age,
    mark_words,
    num,
    pending_text,
    query_terms,
    short_time,
    tag_pairs,
)
from keepui_engine import Hit, Item

PREVIEW_CHARS = 6000
__all__ = ["DetailPane", "older_line", "part_line", "query_terms", "score_line"]


def score_line(hit: Hit) -> str:
    """`score 0.512 = fused 0.61 (dense 0.52 #1 · bm25 3.10 #2) × decay 0.98`."""
    sc = hit.scores or {}
    if not sc and hit.similarity is None and not hit.score:
        return "listed by its tags (a facet tab: no query, no score)"
    parts = []
    if sc.get("dense_rank") or (sc.get("dense") is not None):
        parts.append(f"dense {num(sc.get('dense'))} #{sc.get('dense_rank') or '–'}")
    if sc.get("bm25_rank") or (sc.get("bm25") is not None):
        parts.append(f"bm25 {num(sc.get('bm25'), 2)} #{sc.get('bm25_rank') or '–'}")
    fused = f"fused {num(sc.get('fused'))} " if sc.get("fused") is not None else ""
    decay = num(sc.get("decay", hit.decay), 2)
    return f"score {num(hit.score)} = {fused}({' · '.join(parts) or 'no channel'}) × decay {decay}"


def older_line(hit: Hit) -> str:
    """`matched v2 of 4; the current text differs` for a hit on an older version, else ``."""
    got = hit.archived
    if not got:
        return ""
    differs = "the current text differs" if got.get("text_differs") else "the current tags differ"
    return f"matched v{got['version']} of {got['of']}; {differs}"


def part_line(hit: Hit, item: Item | None = None) -> str:
    """`2 of 3 · Mountains · section 2, chars 1024-2101`: the part a hit matched (its count
    once the item is loaded) and where it sits."""
    part = hit.part or {}
    count = f" of {item.part['count']}" if item is not None and item.part else ""
    title = f" · {part['title']}" if part.get("title") else ""
    where = str(part.get("position") or "")
    place = f" · {where}" if where else ""
    return f"{part.get('index')}{count}{title}{place}"


class DetailPane(VerticalScroll):
    """What the highlighted hit is and says; the text arrives once it is loaded."""

    COMPONENT_CLASSES = {"detail-pane--match", "detail-pane--label", "detail-pane--failed"}
    hit: Hit | None = None
    """The hit shown (None while a hint is shown)."""
    item: Item | None = None
    """Its loaded version (None until the text arrives)."""

    def compose(self) -> ComposeResult:
        """One Static holding the whole description."""
        yield Static(id="detail-body")

    def show_message(self, message: str) -> None:
        """Show a hint instead of a hit."""
        self.hit = None
        self.item = None
        self.query_one("#detail-body", Static).update(Text(message, style="dim"))

    def show_hit(
        self, hit: Hit, query: str, item: Item | None = None, current: Item | None = None
    ) -> None:
        """Describe a hit; with `item`, add its text with the query's words marked.

        Args:
            hit: The hit.
            query: The search's words (marked in the text).
            item: The version that matched, once loaded.
            current: The document's current version, when the hit matched an older one.
        """
        self.hit = hit
        self.item = item
        label = self.get_component_rich_style("detail-pane--label")
        body = Text()
        where = "" if hit.matched == hit.id else f"   (matched {hit.matched})"
        body.append(hit.id, style="bold").append(where + "\n")
        if hit.archived:
            body.append("history ", style=label).append(older_line(hit) + "\n")
        body.append(score_line(hit) + "\n")
        if hit.part:
            body.append("part ", style=label).append(part_line(hit, item) + "\n")
            if hit.part.get("excerpt"):
                body.append("match ", style=label).append(f"{hit.part['excerpt']}\n")
        tags = tag_pairs(hit.tags)
        body.append("tags ", style=label).append((" ".join(tags) or "none") + "\n")
        if current is not None and item is not None and current.version != item.version:
            now_tags = " ".join(tag_pairs(current.tags)) or "none"
            said = "" if hit.archived else f"it matched v{item.version}, an older version; "
            body.append("now ", style=label).append(
                f"{said}the current one is v{current.version} of {current.versions}, "
                f"tags {now_tags}\n"
            )
        body.append("created ", style=label).append(short_time(hit.created))
        body.append("  updated ", style=label).append(
            f"{short_time(hit.updated)} ({age(hit.updated)} ago)\n"
        )
        if hit.duplicates:
            body.append("near-duplicates ", style=label).append(", ".join(hit.duplicates) + "\n")
        if item is not None and item.pending:
            body.append("\nbackground work\n", style=label)
            for entry in item.pending:
                body.append(pending_text(entry) + "\n", style=self._pending_style(entry))
        summary = item.summary if item is not None and item.offset == hit.version else hit.summary
        body.append("\nsummary\n", style=label).append(summary + "\n")
        if item is not None and item.text is not None and item.text != hit.summary:
            text = item.text[:PREVIEW_CHARS]
            more = "" if len(item.text) <= PREVIEW_CHARS else "\n… (e opens the whole text)"
            body.append("\ntext\n", style=label).append(text + more)
        self._mark(body, query)
        self.query_one("#detail-body", Static).update(body)

    def _pending_style(self, entry: dict[str, object]) -> str | Style:
        if entry.get("state") in ("failed", "dead"):
            return self.get_component_rich_style("detail-pane--failed")
        return ""

    def _mark(self, body: Text, query: str) -> None:
        mark_words(body, query, self.get_component_rich_style("detail-pane--match"))

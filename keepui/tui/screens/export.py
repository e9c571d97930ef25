"""Naming a result tab and exporting its hits (JSON or Markdown) to a file the user names."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Input, Label

from keepui.tui.messages import WriteDone
from keepui.tui.screens.base import WorkbenchScreen
from keepui.tui.screens.forms import FormModal
from keepui.tui.widgets.format import first_line, tag_pairs
from keepui.tui.widgets.hit_row import readable_title
from keepui.tui.widgets.keys import focus_now
from keepui.tui.widgets.path_input import PathInput
from keepui.tui.widgets.result_tabs import ResultTabs
from keepui.tui.widgets.search_bar import format_search
from keepui_engine import FindQuery, Hit, UsageError

FORMATS = {".json": "json", ".md": "markdown", ".markdown": "markdown", ".txt": "markdown"}
"""File endings and the format written (anything else: Markdown)."""


def export_format(path: str) -> str:
    """`json` for a `.json` file, else `markdown`."""
    return FORMATS.get(Path(path).suffix.lower(), "markdown")


def default_path(name: str) -> str:
    """`~/keepui-auth-bm25.md`: a file name made from the tab's name."""
    slug = re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-").lower()[:40] or "results"
    return f"~/keepui-{slug}.md"


def hit_record(rank: int, hit: Hit) -> dict[str, Any]:
    """One exported hit: rank, title, id, what matched, scores, summary and user tags."""
    return {
        "rank": rank,
        "title": readable_title(hit),
        "id": hit.id,
        "matched": hit.matched,
        "version": hit.version,
        "score": hit.score,
        "scores": hit.scores,
        "summary": hit.summary,
        "tags": tag_pairs(hit.tags),
        "updated": hit.updated,
    }


def export_json(name: str, q: FindQuery, hits: list[Hit], at: datetime) -> str:
    """The tab as one JSON document (`schema` 1, like `find --json`)."""
    doc = {
        "schema": 1,
        "name": name,
        "query": q.query,
        "search": format_search(q),
        "exported": at.isoformat(timespec="seconds"),
        "hits": [hit_record(i, h) for i, h in enumerate(hits, 1)],
    }
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def export_markdown(name: str, q: FindQuery, hits: list[Hit], at: datetime) -> str:
    """The tab as a Markdown table: rank, title, id, score and its parts, first summary line."""
    lines = [
        f"# {name}",
        "",
        f"Search `{format_search(q)}` · {len(hits)} hits · exported "
        f"{at.isoformat(timespec='minutes')}",
        "",
        "| # | title | id | score | dense | bm25 | summary |",
        "|---:|---|---|---:|---:|---:|---|",
    ]
    for rank, hit in enumerate(hits, 1):
        sc = hit.scores or {}
        dense, bm25 = sc.get("dense"), sc.get("bm25")
        lines.append(
            f"| {rank} | {_cell(readable_title(hit))} | `{_cell(hit.matched)}` "
            f"| {hit.score:.3f} | {'' if dense is None else f'{dense:.3f}'} "
            f"| {'' if bm25 is None else f'{bm25:.2f}'} | {_cell(first_line(hit.summary, 200))} |"
        )
    return "\n".join(lines) + "\n"


def write_export(path: str, name: str, q: FindQuery, hits: list[Hit]) -> Path:
    """Write the tab to `path` (`~` expanded) in the format its ending names.

    Raises:
        OSError: The file cannot be written.
    """
    target = Path(path).expanduser()
    at = datetime.now(UTC)
    maker = export_json if export_format(path) == "json" else export_markdown
    target.write_text(maker(name, q, hits, at), encoding="utf-8")
    return target


@dataclass
class ExportRequest:
    """Where to export a tab."""

    path: str
    """The file, as typed (`~` allowed); `.json` writes JSON, anything else Markdown."""


class ExportModal(FormModal):
    """Ask where to export a result tab (Tab completes the path).

    Args:
        name: The tab's name (the default file name is made from it).
        hits: How many hits it holds.
    """

    KEYS = "Enter exports · .json → JSON, else Markdown · Tab completes · Esc cancels"

    def __init__(self, name: str, hits: int) -> None:
        super().__init__(classes="modal")
        self.tab_name = name
        self.hits = hits

    def compose(self) -> ComposeResult:
        """The path input, buttons."""
        with Vertical(classes="modal-box form-box"):
            yield Label(f"Export {self.hits} hits of “{self.tab_name}”", classes="modal-title")
            yield PathInput(default_path(self.tab_name), id="export-path", select_on_focus=False)
            yield from self.buttons()

    def on_mount(self) -> None:
        """Start in the path."""
        focus_now(self.query_one("#export-path", Input))

    def action_save(self) -> None:
        """Close with an ExportRequest (refuses an empty path)."""
        path = self.query_one("#export-path", Input).value.strip()
        if not path:
            self.fail("give a file name, e.g. ~/results.md or ~/results.json")
            return
        self.dismiss(ExportRequest(path))


class NameModal(FormModal):
    """Name a result tab (an empty name gives it back its query).

    Args:
        current: The tab's current name, or its query.
    """

    def __init__(self, current: str) -> None:
        super().__init__(classes="modal")
        self.current = current

    def compose(self) -> ComposeResult:
        """One input, buttons."""
        with Vertical(classes="modal-box form-box"):
            yield Label("Name this result tab", classes="modal-title")
            yield Input(self.current, placeholder="e.g. auth · bm25 baseline", id="tab-name")
            yield from self.buttons()

    def on_mount(self) -> None:
        """Start in the input."""
        focus_now(self.query_one("#tab-name", Input))

    def action_save(self) -> None:
        """Close with the name ("" for none)."""
        self.dismiss(self.query_one("#tab-name", Input).value.strip())


def ask_name(screen: Screen[Any], tabs: ResultTabs) -> None:
    """Ask for a name for the active tab; its label shows it (empty: the query again)."""
    pane = tabs.current
    if pane is None:
        screen.notify("Run a search first: a result tab can then be named.", severity="warning")
        return

    def named(name: object) -> None:
        if isinstance(name, str):
            tabs.rename(pane, name or None)

    screen.app.push_screen(NameModal(pane.tab_name or pane.q.query), named)


def ask_export(screen: WorkbenchScreen, tabs: ResultTabs) -> None:
    """Ask for a file and write the active tab's hits to it, in a worker."""
    pane = tabs.current
    if pane is None:
        screen.notify("Run a search first: a result tab can then be exported.", severity="warning")
        return
    name, q, hits = pane.tab_name or pane.q.query, pane.q, list(pane.hits)

    def chosen(request: object) -> None:
        if isinstance(request, ExportRequest):
            screen.write(lambda: exported(request.path, name, q, hits))

    screen.app.push_screen(ExportModal(name, len(hits)), chosen)


def exported(path: str, name: str, q: FindQuery, hits: list[Hit]) -> WriteDone:
    """Write the export (in a worker); what to tell the user.

    Raises:
        UsageError: The file cannot be written (the error dialog says why).
    """
    try:
        target = write_export(path, name, q, hits)
    except OSError as exc:
        raise UsageError(
            f"cannot write {path}: {exc.strerror or exc}. Choose another file or folder.",
            "Export failed",
        ) from None
    return WriteDone(f"exported {len(hits)} hits to {target}", "", "exported")

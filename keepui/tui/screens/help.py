"""HelpScreen (F1): the keys of every screen and the inline search syntax."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# keepui workbench

**Everywhere**: `F1` this help · `Ctrl+P` command palette (every action, themes, past searches)
· `Escape` back · `Ctrl+Q` quit · `j`/`k`, `g`/`G` move in lists · `p` (or a click on the queue
line at the bottom right) the background queue: failures with their errors, `r` retry and `x`
purge dead letters.

**Two modes**, named at the left of the key bar: `INPUT` while a text box has the cursor
(letters type) and `LIST` otherwise (letters are keys). The smallest window is 60×15.

## Search (main screen)
| key | action |
|---|---|
| `/` | the search bar (INPUT); `Enter` runs the search in a new tab, its cursor on the first hit |
| after `Enter` | the focus stays in the bar, the query selected: type the next one, `End` refines |
| `↑` / `↓` in the bar | earlier / later queries, to edit (the cursor at the end) |
| `↓` / `Tab` in the bar | into the hits (LIST; `↓` once back at what you were typing) |
| `Escape` in the bar | leave it for the hits |
| `Ctrl+Y` | history on / off: the next searches also search older versions (`+history`) |
| `Tab` / `Shift+Tab` | next / previous pane: bar, hits, detail, history, mode |
| `Enter` on a hit | open the document at what matched: its version, its part, the words marked |
| `[` `]` | previous / next result tab; `w` closes the tab |
| `n` / `s` | name the tab / export it to a file (`.json`: JSON, else Markdown) |
| `c` | compare this tab with the one before: ids that entered, left or moved |
| `+` / `-` / `0` | judge the hit for the tab's query: relevant (again: 2, 3) / not / forget |
| `b` | facets: the tag values of the tab's hits (or the store); `Space` selects, `Enter` filters |
| `r` | run this tab's search again (refresh in place) |
| `h` | show / hide the search history; `Enter` on an entry runs it again |
| `y` / `Y` | copy the hit's id / its JSON |
| `e` | open the document's text in `$EDITOR`; saving a change makes a new version |
| `a` / `f` | add a note / a file, folder or URL (`Tab` completes the path, `Ctrl+O` browses) |
| `t` | edit the hit's tags |
| `x` / `X` | delete (revert to the previous version) / purge with all history |
| `Ctrl+R` / `Ctrl+T` | run query-resolve on this tab's query (or the typed text) / step it |
| `E` | experiments: run a query set under search configurations, judge where they differ |

**Rows**: the title (`title` tag, else the file name, else the first words), the id dimmed
after it (`@V{N}`: an older version matched; `older v2 of 4` in a `+history` tab), then
score, sim, bm25, decay and age. A judged hit leads with `✓` (grade 1; `✓✓`, `✓✓✓`) or `✗`,
and the tab shows `judged 7/20 · nDCG@10 0.81` under its hits. **Facets** list tag values
with counts: values of one key are ORed, keys are ANDed; the new tab keeps the same search
(or, with no tab open, lists the documents).

**Search syntax**: words, plus filters `tag:key=value` (or `tag:key`), `since:P7D`,
`since:2026-11-01`, `until:…`, `as:2026-10-01` (the versions current then),
`mode:dense|bm25|hybrid`, `n:20`, `min:0.3`, `fusion:score|rrf`,
`rerank:relevance|recency|mix`, `dedup:on|off`, `history:on|off` (older versions too; by
default only current versions are searched), `config:NAME` (a search configuration of
keepui.toml, `[search.configs.NAME]`; the mode selector beside the bar offers them too).

## Experiments
`E` on the search screen (or the palette's `Experiments`). Pick a query set and check the
search configurations to compare (the first checked is the reference); the latest stored
experiment of the set shows at once. The metrics table gives each configuration's means with
their 95% bootstrap intervals, the line under it the paired test against the reference
(difference, interval, p); the queries are listed by how much the first two differ.

| key | action |
|---|---|
| `r` | run the experiment (progress live; it is stored as `.experiment/…`) |
| `s` / `c` / `d` | the query set picker / the configurations / the queries |
| `Space` | check or uncheck a configuration |
| `Enter` on a query | both configurations' top 10 side by side |
| `Tab` / `Shift+Tab` | next / previous pane (side by side: the other side) |
| `+` `-` `0` (side by side) | judge the hit: relevant (again: 2, 3) / not relevant / forget |
| `Enter` (side by side) | open the document |
| `Escape` | back (from the side by side the query's row is scored again) |

Side by side, `?` marks the hits not judged yet; after each judgment both sides' marks and
their `judged 3/10 · nDCG@10 0.81` lines follow.

## Document
| key | action |
|---|---|
| `Space` | mark a version |
| `d` / `Enter` | diff the mark (or the previous version) with the cursor's version |
| `y` / `Y` · `e` · `t` · `x` / `X` | as on the search screen |
| `Enter` on a similar item | open it |

## Flow
Runs a state doc (query-resolve by default) on the query and shows each tick as it happens:
the rules (`✓` fired, `·` not) and where they led, each search with its signals (margin,
entropy, lineage) and top hits; then the outcome, its reason and the final results (grouped
by facet value when the flow stopped ambiguous).

| key | action |
|---|---|
| `s` | step mode on / off: pause before each tick |
| `n` | run the next tick (while running: pause before the next one) |
| `c` | continue: leave step mode and run to the end |
| `r` | restart with the params editor's thresholds (cancels the current run) |
| `e` | edit the params: `margin_high=0.2 entropy_high=0.7 budget=8`; `Enter` restarts |
| `f` | pick another state doc (or `Ctrl+P`, `Flow: NAME`) |
| `Enter` on a result | open the document (or a `↳` neighbour after find-deep); `y` copies its id |
| `Escape` | leave the editor; else cancel the run and go back |

## Diff
`n` / `p` next / previous change: every change in turn, its line numbers marked and
`change k of N` above the panes (scrolled away from it, the count follows the view); the view
scrolls sideways when the first changed word is past the edge · `w` wrap long lines or cut
them at the edge (`wrap on` / `wrap off` above the panes) · `u` unified / side by side ·
`j`/`k` scroll (both sides together) · `Escape` back. An edited line sits beside (or under)
its old self, paired by likeness; a line like none on the other side is shown added or
removed on its own.

## Dialogs
`Enter` saves a one-line form · `Ctrl+S` saves the note form · `Tab` next field · `Escape`
cancels.
"""


SECTIONS = {
    "MainScreen": "Search (main screen)",
    "DocumentScreen": "Document",
    "FlowsScreen": "Flow",
    "DiffScreen": "Diff",
    "ExperimentsScreen": "Experiments",
    "SideBySideScreen": "Experiments",
}
"""The section help opens at, by the screen it was called from (a dialog: Dialogs)."""


def section_for(screen: object) -> str | None:
    """The heading to open the help at when called from `screen` (None: the top)."""
    name = type(screen).__name__
    if name in SECTIONS:
        return SECTIONS[name]
    return "Dialogs" if isinstance(screen, ModalScreen) else None


class HelpScreen(ModalScreen[None]):
    """The key reference, opened at the section of the screen it was called from; Escape, F1
    or q closes it."""

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("f1", "close", "Close", show=False),
        Binding("q", "close", "Close", show=False),
    ]

    def __init__(self, section: str | None = None) -> None:
        super().__init__()
        self.section = section
        """The heading to open at; None: the screen below's (see `section_for`)."""

    def compose(self) -> ComposeResult:
        """The help text, scrollable."""
        with VerticalScroll(id="help-box", classes="modal-box"):
            yield Markdown(HELP)

    def on_mount(self) -> None:
        """Pick the section of the screen below, unless one was given."""
        if self.section is None and len(self.app.screen_stack) > 1:
            self.section = section_for(self.app.screen_stack[-2])

    def on_markdown_table_of_contents_updated(self, event: Markdown.TableOfContentsUpdated) -> None:
        """The text is laid out: scroll to the section's heading."""
        for _, title, block_id in event.table_of_contents:
            if block_id and title == self.section:
                heading = self.query_one(f"#{block_id}")
                box = self.query_one("#help-box", VerticalScroll)
                self.call_after_refresh(box.scroll_to_widget, heading, top=True, animate=False)
                return

    def action_close(self) -> None:
        """Close."""
        self.dismiss(None)

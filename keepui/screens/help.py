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

## Search (main screen)
| key | action |
|---|---|
| `/` | focus the search bar; `Enter` runs the search in a new tab |
| `Enter` on a hit | open the document |
| `[` `]` | previous / next result tab; `w` closes the tab |
| `c` | compare this tab with the one before: ids that entered, left or moved |
| `r` | run this tab's search again (refresh in place) |
| `h` | show / hide the search history; `Enter` on an entry runs it again |
| `y` / `Y` | copy the hit's id / its JSON |
| `e` | open the document's text in `$EDITOR`; saving a change makes a new version |
| `a` / `f` | add a note / add a file of any format, a folder, or an http(s) URL |
| `t` | edit the hit's tags |
| `x` / `X` | delete (revert to the previous version) / purge with all history |

**Search syntax**: words, plus filters `tag:key=value` (or `tag:key`), `since:P7D`,
`since:2026-11-01`, `until:…`, `mode:dense|bm25|hybrid`, `n:20`, `min:0.3`,
`fusion:score|rrf`, `rerank:relevance|recency|mix`, `dedup:on|off`.

## Document
| key | action |
|---|---|
| `Space` | mark a version |
| `d` / `Enter` | diff the mark (or the previous version) with the cursor's version |
| `y` / `Y` · `e` · `t` · `x` / `X` | as on the search screen |
| `Enter` on a similar item | open it |

## Diff
`n` / `p` next / previous change · `j`/`k` scroll (both sides together) · `Escape` back.
"""


class HelpScreen(ModalScreen[None]):
    """The key reference; Escape, F1 or q closes it."""

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("f1", "close", "Close", show=False),
        Binding("q", "close", "Close", show=False),
    ]

    def compose(self) -> ComposeResult:
        """The help text, scrollable."""
        with VerticalScroll(id="help-box", classes="modal-box"):
            yield Markdown(HELP)

    def action_close(self) -> None:
        """Close."""
        self.dismiss(None)

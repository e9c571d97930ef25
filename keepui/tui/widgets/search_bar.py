"""SearchBar: the query input with inline filters (`tag:k=v since:P7D mode:bm25 n:20`), a mode
or search configuration, and the history toggle."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Input, Label, Select

from keepui.tui.widgets.query_input import QueryInput
from keepui_engine import FindQuery, UsageError

MODES = ("hybrid", "dense", "bm25")
DEFAULT_LIMIT = 20
_FILTER = re.compile(r'(?<!\S)(?P<key>[A-Za-z_]+):(?P<value>"[^"]*"|\S+)')
_QUOTED = re.compile(r'"[^"]*"')
_KEYS = {
    "tag": "tag",
    "t": "tag",
    "since": "since",
    "until": "until",
    "mode": "mode",
    "m": "mode",
    "n": "limit",
    "limit": "limit",
    "min": "min_score",
    "fusion": "fusion",
    "rerank": "rerank",
    "dedup": "dedup",
    "as": "as_of",
    "history": "history",
    "config": "config",
}
KNOWN = "tag:k=v, since:, until:, as:, mode:, n:, min:, fusion:, rerank:, dedup:, history:, config:"
CONFIG = "config:"
"""How the mode selector's value names a search configuration (`config:words`)."""
PLACEHOLDER = "search…  filters: tag:k=v since:P7D until:2026-12-01 mode:bm25 n:20"
HISTORY_PLACEHOLDER = "search current and older versions…  (Ctrl+Y: current only)"
HISTORY_MARK = "+history"
"""What the bar (and a tab's title) shows when older versions are searched too."""
HISTORY_TOOLTIP = "History: also search older versions (on / off, for the next searches)"
"""The toggle's command (Ctrl+Y) in the palette."""
_ON_OFF = {"on": True, "true": True, "yes": True, "off": False, "false": False, "no": False}
_DURATION = re.compile(r"P(?:\d+[YMWD])*(?:T(?:\d+[HMS])+)?", re.IGNORECASE)


def changes_text(changes: Mapping[str, Any]) -> str:
    """`fusion=rrf bm25_weight=2.0`: what a search configuration changes (`as default`)."""

    def shown(value: object) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        return "-" if value is None else str(value)

    return " ".join(f"{k}={shown(v)}" for k, v in changes.items()) or "as default"


def check_moment(value: str) -> str:
    """`value` when it reads as a moment for `as:` (an ISO date, a date-time, or a duration
    such as P7D); the engine resolves it (a date means the end of that day, local time).

    Raises:
        UsageError: It is none of those (said in the search bar's words).
    """
    try:
        if len(value) == 10:
            date.fromisoformat(value)
        elif not (_DURATION.fullmatch(value) and len(value) > 1):
            datetime.fromisoformat(value.replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"as:{value} is not a date: use as:2026-10-01 (the end of that day), "
            "as:2026-10-01T09:30 (local time) or as:P30D (that long ago)."
        ) from None
    return value


def parse_search(
    text: str,
    mode: str | None = None,
    limit: int = DEFAULT_LIMIT,
    history: bool = False,
    config: str | None = None,
    limits: Mapping[str, int] | None = None,
) -> FindQuery:
    """A FindQuery from the bar's text; `key:value` words are filters, the rest is the query.

    Args:
        text: What the user typed.
        mode: The mode selector's value (an inline `mode:` wins); None means keepui.toml's.
        limit: Hits per search unless `n:` (or the configuration's `limit`) says otherwise.
        history: The history toggle: search older versions too (an inline `history:` wins).
        config: The search configuration picked in the selector (an inline `config:` wins).
        limits: Configuration -> the hit count it sets (those that set one).

    Raises:
        UsageError: A filter value is malformed, or there is nothing to search for.
    """
    opts: dict[str, object] = {"mode": mode, "limit": limit, "history": history}
    opts["config"] = config
    tags: list[str] = []
    words: list[str] = []
    pos = 0
    counted = False  # `n:` given: it wins over a configuration's limit
    quoted = [q.span() for q in _QUOTED.finditer(text)]
    for m in _FILTER.finditer(text):
        if any(a <= m.start() < b for a, b in quoted):
            continue  # "TODO:fix" in quotes is words to search for
        key = _KEYS.get(m.group("key").lower())
        if key is None:
            if m.group("value").startswith("//"):
                continue  # a URL (https://…) is words to search for
            raise UsageError(
                f"{m.group('key')}: is not a filter; the filters are {KNOWN}. To search for "
                f'the words, put them in quotes: "{m.group(0)}".'
            )
        words.append(text[pos : m.start()])
        pos = m.end()
        value = m.group("value").strip('"')
        if key == "tag":
            tags.append(value)
        elif key == "limit":
            if not value.isdigit() or int(value) < 1:
                raise UsageError(f"n:{value}: give a number of hits of 1 or more (e.g. n:20).")
            opts["limit"] = int(value)
            counted = True
        elif key == "min_score":
            try:
                opts["min_score"] = float(value)
            except ValueError:
                raise UsageError(f"min:{value}: give a score such as min:0.3.") from None
        elif key == "as_of":
            opts["as_of"] = check_moment(value)
        elif key == "dedup":
            if value.lower() not in ("on", "off", "true", "false", "yes", "no"):
                raise UsageError(f"dedup:{value}: use dedup:on or dedup:off.")
            opts["dedup"] = value.lower() in ("on", "true", "yes")
        elif key == "history":
            if value.lower() not in _ON_OFF:
                raise UsageError(
                    f"history:{value}: use history:on (older versions too) or history:off."
                )
            opts["history"] = _ON_OFF[value.lower()]
        else:
            opts[key] = value
    words.append(text[pos:])
    own_limit = (limits or {}).get(str(opts["config"]))
    if own_limit and not counted:
        opts["limit"] = own_limit
    query = " ".join(" ".join(words).split())
    if not query:
        raise UsageError("nothing to search for: type some words besides the filters.")
    return FindQuery(query, tags, **opts)  # type: ignore[arg-type]


def format_search(q: FindQuery) -> str:
    """The bar text that `parse_search` turns back into `q` (mode and limit included)."""
    parts = [q.query]
    parts += [f"tag:{t}" if " " not in t else f'tag:"{t}"' for t in q.tags]
    moments = (("since", q.since), ("until", q.until), ("as", q.as_of), ("mode", q.mode))
    for key, value in moments:
        if value:
            parts.append(f"{key}:{value}")
    if q.limit != DEFAULT_LIMIT:
        parts.append(f"n:{q.limit}")
    if q.min_score is not None:
        parts.append(f"min:{q.min_score:g}")
    if q.fusion:
        parts.append(f"fusion:{q.fusion}")
    if q.rerank:
        parts.append(f"rerank:{q.rerank}")
    if q.dedup is not None:
        parts.append(f"dedup:{'on' if q.dedup else 'off'}")
    if q.history:
        parts.append("history:on")
    if q.config:
        parts.append(f"config:{q.config}")
    return " ".join(parts)


class SearchBar(Horizontal):
    """The search input, the mode selector and the history toggle (Ctrl+Y, shown as
    `+history` beside the mode); Enter posts `SearchBar.Submitted`.

    The selector offers keepui.toml's mode, each mode, and each search configuration
    (`[search.configs.NAME]`, shown `config NAME`): searches then use its settings.

    Args:
        limit: Hits per search unless `n:` or a configuration says otherwise.
        configs: `Tuning.configs()`: the store's search configurations (`default` first).
    """

    DEFAULT_CSS = """
    SearchBar { height: auto; }
    SearchBar #search-input { width: 1fr; }
    SearchBar #search-mode { width: 20; }
    SearchBar #search-history { width: auto; height: 100%; display: none; }
    SearchBar.-history #search-history { display: block; }
    """

    BINDINGS = [Binding("ctrl+y", "toggle_older", "History", tooltip=HISTORY_TOOLTIP)]

    history = reactive(False, init=False)
    """Search older versions too (the toggle; an inline `history:on|off` wins)."""

    @dataclass
    class Submitted(Message):
        """The user asked for a search."""

        q: FindQuery
        """What to search for."""

    @dataclass
    class Invalid(Message):
        """The bar's text could not be turned into a search."""

        error: UsageError
        """What is wrong with it."""

    def __init__(
        self,
        limit: int = DEFAULT_LIMIT,
        *,
        configs: list[dict[str, Any]] | None = None,
        id: str | None = None,  # noqa: A002
    ) -> None:
        super().__init__(id=id)
        self.limit = limit
        self.configs = [c for c in configs or [] if c["name"] != "default"]
        """The search configurations the selector offers (`default` is the first option)."""
        self.config_limits = {
            c["name"]: int(c["changes"]["limit"]) for c in self.configs if "limit" in c["changes"]
        }
        """Configuration -> the hit count it sets (when it sets one)."""

    def compose(self) -> ComposeResult:
        """The input and the mode selector (`default` = keepui.toml's mode)."""
        # a query run is selected (typing starts the next one, End refines it); `/` keeps that
        yield QueryInput(placeholder=PLACEHOLDER, id="search-input", select_on_focus=False)
        options = [("default mode", "default")] + [(m, m) for m in MODES]
        options += [(f"config {c['name']}", CONFIG + c["name"]) for c in self.configs]
        mode = Select(options, value="default", allow_blank=False, id="search-mode")
        if self.configs:
            mode.tooltip = "Mode or search configuration:\n" + "\n".join(
                f"{c['name']}: {changes_text(c['changes'])}" for c in self.configs
            )
        yield mode
        yield Label(HISTORY_MARK, id="search-history")

    @property
    def mode(self) -> str | None:
        """The selected mode, or None for keepui.toml's (or a configuration's)."""
        value = self.query_one("#search-mode", Select).value
        if value in ("default", Select.BLANK) or str(value).startswith(CONFIG):
            return None
        return str(value)

    @property
    def config(self) -> str | None:
        """The selected search configuration, or None."""
        value = str(self.query_one("#search-mode", Select).value)
        return value[len(CONFIG) :] if value.startswith(CONFIG) else None

    def watch_history(self, history: bool) -> None:
        """Show the state: `+history` beside the mode, and the placeholder says it."""
        self.set_class(history, "-history")
        box = self.query_one("#search-input", Input)
        box.placeholder = HISTORY_PLACEHOLDER if history else PLACEHOLDER

    def action_toggle_older(self) -> None:
        """Ctrl+Y: search older versions too, or current versions only (the next searches)."""
        self.history = not self.history

    def parse(self, text: str) -> FindQuery:
        """A FindQuery from `text` with the bar's mode (or configuration), limit and history
        toggle.

        Raises:
            UsageError: As `parse_search`.
        """
        return parse_search(
            text, self.mode, self.limit, self.history, self.config, self.config_limits
        )

    @on(Input.Submitted, "#search-input")
    def _submit(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            q = self.parse(event.value)
        except UsageError as exc:
            self.post_message(self.Invalid(exc))
            return
        self.post_message(self.Submitted(q))

    def set_query(self, q: FindQuery) -> None:
        """Show a past search in the bar (its mode and `history:on` inline, so the selector
        goes to default and the toggle off: Enter runs that search again), the cursor at the
        end for editing."""
        self.query_one("#search-input", QueryInput).put(format_search(q))
        self.query_one("#search-mode", Select).value = "default"
        self.history = False

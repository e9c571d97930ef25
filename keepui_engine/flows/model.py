"""State docs as data (FlowDoc, Rule) and what running one yields (FlowTick, FlowResult)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

STATUSES = ("done", "error", "stopped")


@dataclass(frozen=True)
class Rule:
    """One rule of a state doc.

    Attributes:
        id: Binds the action's output under this name for later rules (and `post`).
        when: A predicate; the rule is skipped unless it holds. None means always.
        do: An action name (find, get, expand, pick …).
        args: The action's `with:` arguments, `{expr}` templates not yet filled.
        then: The next state, and params merged into the current ones for it.
        returns: Ends the flow: a status (done/error/stopped) and the data to return.
    """

    id: str | None = None
    when: str | None = None
    do: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    then: str | None = None
    then_with: dict[str, Any] = field(default_factory=dict)
    returns: str | None = None
    return_with: dict[str, Any] | None = None

    def label(self, index: int) -> str:
        """The rule's id, or its position when it has none."""
        return self.id or f"#{index + 1}"


@dataclass(frozen=True)
class FlowDoc:
    """A parsed state doc.

    Attributes:
        name: Its name (`query-resolve`), used in `then:` of other docs.
        match: `sequence` (top to bottom, the first then/return ends the tick) or `all`
            (every rule whose `when` holds fires, then `post` runs as a sequence).
        rules: The rules.
        post: Rules run after a `match: all` block.
        description: The doc's first comment line, shown in listings.
    """

    name: str
    match: str
    rules: tuple[Rule, ...]
    post: tuple[Rule, ...] = ()
    description: str = ""


@dataclass(frozen=True)
class RuleTrace:
    """What one rule did in a tick.

    Attributes:
        rule: The rule's id or `#N`.
        when: Its predicate, if any.
        fired: Whether it ran (its `when` held).
        action: The action it ran, if any.
        outcome: `then STATE`, `return STATUS`, or "" when it only ran an action.
    """

    rule: str
    when: str | None
    fired: bool
    action: str | None = None
    outcome: str = ""


@dataclass(frozen=True)
class ActionCall:
    """One action run in a tick: its filled-in arguments and its output."""

    rule: str
    action: str
    args: dict[str, Any]
    output: Any
    elapsed_ms: float


@dataclass(frozen=True)
class FlowTick:
    """One evaluation of one state doc.

    Attributes:
        tick: 1-based tick number within the run (resumed runs continue the count).
        state: The state doc evaluated.
        params: The params it saw (bulky values such as result lists left out).
        rules: What each rule did.
        actions: The actions it ran, with outputs (a find's output carries its signals).
        outcome: `then STATE`, `return STATUS` or `stop REASON`.
        elapsed_ms: Wall time of the tick.
    """

    tick: int
    state: str
    params: dict[str, Any]
    rules: list[RuleTrace]
    actions: list[ActionCall]
    outcome: str
    elapsed_ms: float

    @property
    def searches(self) -> list[ActionCall]:
        """The actions of this tick that returned ranked results (find)."""
        return [a for a in self.actions if isinstance(a.output, dict) and "results" in a.output]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FlowTick:
        """Rebuild from `to_dict` output."""
        return cls(
            d["tick"],
            d["state"],
            d["params"],
            [RuleTrace(**r) for r in d["rules"]],
            [ActionCall(**a) for a in d["actions"]],
            d["outcome"],
            d["elapsed_ms"],
        )


@dataclass(frozen=True)
class FlowResult:
    """How a flow ended.

    Attributes:
        flow: The state doc it started from.
        status: `done`, `error` or `stopped`.
        reason: Why it ended that way, in words.
        state: The state it was in when it ended.
        data: The `return: with:` payload (or all bindings of the last tick).
        results: The final ranked results (hit dicts), best first.
        ticks: Every tick, in order.
        history: The state names of the ticks, in order.
        tried: Each distinct search it ran, as `query [tags] mode`.
        cursor: A token to resume a stopped flow (`keepui flow --cursor`), else None.
        budget: The tick budget it had.
        elapsed_ms: Wall time of the run.
        warnings: Problems met on the way (a stored state doc that did not parse, run as the
            shipped default instead).
        applied: The write actions (summarize, tag, put, analyze) applied after their ticks,
            each {"tick", "action", "args", "result"} or {"…", "error"}.
    """

    flow: str
    status: str
    reason: str
    state: str
    data: dict[str, Any]
    results: list[dict[str, Any]]
    ticks: list[FlowTick]
    history: list[str]
    tried: list[str]
    cursor: str | None
    budget: int
    elapsed_ms: float
    warnings: list[str] = field(default_factory=list)
    applied: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FlowResult:
        """Rebuild from `to_dict` output."""
        return cls(**{**d, "ticks": [FlowTick.from_dict(t) for t in d["ticks"]]})


@dataclass(frozen=True)
class FlowInfo:
    """A state doc that can be run: its name, where it comes from and what it does."""

    name: str
    origin: str
    description: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FlowInfo:
        """Rebuild from `to_dict` output."""
        return cls(**d)

"""Every operation a Workbench can call, declared once.

An operation is a name (what `Workbench.call` and the store socket carry), the function that
runs it on an open store (a lazy "module:qualified.name", called as `function(engine, **args)`),
how its arguments and answer cross the socket, and how it is routed:

- `reads`: it only reads (its cache and access-time writes are best effort): in an owner it
  runs while a writer computes (see work.gate), and a read-only store answers it;
- `client_write`: a client's write: the owner's queue worker waits while it runs and is woken
  after it (it may have queued work: summaries, analysis, re-embedding);
- `starts_owner`: when no owner runs, the call starts one (`keepui serve --auto`): it needs the
  model, or it queues work that the owner's worker then drains;
- `self_checking`: the store opens without the model and lost-writes checks (reindex changes
  the model; doctor reports and repairs what those checks refuse);
- `read_only_ok`: a store that cannot be written still answers it, though it is not a read
  (`answers_read_only` is true for every read too).

Nothing here imports the operations themselves: a target is imported on its first call.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from keepui_engine.core.errors import UsageError

_TYPES = "keepui_engine.core.types"
_TRANSFER = "keepui_engine.transfer"


@dataclass(frozen=True)
class Op:
    """One operation (see the module docstring)."""

    name: str
    target: str
    result: str | None = None  # "module:Class" of the answer (from_dict); None: plain data
    many: bool = False  # the answer is a list of `result`
    inputs: dict[str, str] = field(default_factory=dict)  # argument -> "module:Class"
    reads: bool = False
    client_write: bool = False
    starts_owner: bool = False
    self_checking: bool = False
    read_only_ok: bool = False

    @property
    def answers_read_only(self) -> bool:
        """Whether a store that cannot be written answers it."""
        return self.reads or self.read_only_ok

    def decode(self, answer: Any) -> Any:
        """The answer as it came over the socket, back to its type."""
        if self.result is None:
            return answer
        cls = resolve(self.result)
        return [cls.from_dict(x) for x in answer] if self.many else cls.from_dict(answer)

    def decode_args(self, args: dict[str, Any]) -> dict[str, Any]:
        """The arguments as they came over the socket, back to their types."""
        out = dict(args)
        for name, spec in self.inputs.items():
            if name in out and out[name] is not None:
                cls = resolve(spec)
                value = out[name]
                out[name] = (
                    [cls.from_dict(x) for x in value]
                    if isinstance(value, list)
                    else cls.from_dict(value)
                )
        return out


def _engine(method: str, **kw: Any) -> Op:
    """An operation run by the Engine's method of the same name."""
    return Op(method, f"keepui_engine.ops.engine:Engine.{method}", **kw)


def _reading(name: str, **kw: Any) -> Op:
    """An operation of ops/reading.py."""
    return _op("reading", name, **kw)


def _op(module: str, name: str, target: str | None = None, **kw: Any) -> Op:
    """An operation run by function `target` (default: its name) of keepui_engine.ops.MODULE."""
    return Op(name, f"keepui_engine.ops.{module}:{target or name}", **kw)


_QUERY = {"q": f"{_TYPES}:FindQuery"}


def _finding(name: str) -> Op:
    """A search that ranks documents for a FindQuery (its first call loads the model)."""
    return _op(
        "searching",
        name,
        result=f"{_TYPES}:FindResult",
        inputs=_QUERY,
        reads=True,
        starts_owner=True,
    )


OPERATIONS: dict[str, Op] = {
    op.name: op
    for op in (
        # writing
        _engine(
            "put_many",
            result=f"{_TYPES}:PutResult",
            many=True,
            inputs={"specs": f"{_TYPES}:PutSpec"},
            client_write=True,
            starts_owner=True,
        ),
        _op("writing", "tag", result=f"{_TYPES}:PutResult", client_write=True, starts_owner=True),
        _engine("delete", result=f"{_TYPES}:DeleteResult", client_write=True, starts_owner=True),
        _engine("reindex", result=f"{_TYPES}:Stats", self_checking=True),
        Op(
            "import_page",
            f"{_TRANSFER}.importing:import_items",
            client_write=True,
            starts_owner=True,
        ),
        # reading
        _reading("get", result=f"{_TYPES}:Item", reads=True),
        _reading("history", result=f"{_TYPES}:VersionInfo", many=True, reads=True),
        _reading("parts", result=f"{_TYPES}:Part", many=True, reads=True),
        _reading("list_items", result=f"{_TYPES}:Item", many=True, reads=True),
        _reading("facets", reads=True),
        _op("reading", "stats", result=f"{_TYPES}:Stats", reads=True),
        _op("diff", "diff", target="version_diff", result=f"{_TYPES}:VersionDiff", reads=True),
        Op(
            "export_header", f"{_TRANSFER}.exporting:header", read_only_ok=True
        ),  # its BM25 base read as it is
        Op("export_page", f"{_TRANSFER}.exporting:page", reads=True),
        # searching
        *(_finding(name) for name in ("find", "find_deep")),
        _op(
            "searching",
            "why",
            result="keepui_engine.search.why:WhyResult",
            inputs=_QUERY,
            reads=True,
        ),
        _op("searching", "related", reads=True, starts_owner=True),
        _op("searching", "reflect", reads=True, starts_owner=True),
        _op("searching", "record_search", result=f"{_TYPES}:SearchRecord", inputs=_QUERY),
        _op("searching", "searches", result=f"{_TYPES}:SearchRecord", many=True, reads=True),
        _op(
            "searching",
            "judge",
            result="keepui_engine.search.judgments:Judgment",
            client_write=True,
        ),
        _op("searching", "unjudge", client_write=True),
        _op(
            "searching",
            "judgments",
            result="keepui_engine.search.judgments:Judgment",
            many=True,
            reads=True,
        ),
        # tuning: judgments in bulk, and one retrieval fused many ways (ops/tuning.py)
        _op("tuning", "judge_many", client_write=True),
        _op("tuning", "sweep", reads=True, starts_owner=True),
        # the queue
        _op("queue", "work_once", starts_owner=True),
        _op("queue", "pending", reads=True),
        _op("queue", "pending_retry", client_write=True, starts_owner=True),
        _op("queue", "pending_purge"),
        _op("writing", "summarize", client_write=True, starts_owner=True),
        _op("writing", "analyze", client_write=True, starts_owner=True),
        # the store itself
        _op(
            "doctor",
            "doctor",
            target="run",
            result="keepui_engine.ops.doctor:DoctorReport",
            self_checking=True,
        ),
    )
}


def get(name: str) -> Op:
    """The operation called `name`.

    Raises:
        UsageError: No operation has that name (a client of another build, or a typo).
    """
    op = OPERATIONS.get(name)
    if op is None:
        raise UsageError(f"unknown operation {name!r}")
    return op


def run(engine: Any, name: str, args: dict[str, Any]) -> Any:
    """Run the operation called `name` on an open store's engine."""
    return resolve(get(name).target)(engine, **args)


_RESOLVED: dict[str, Any] = {}


def resolve(spec: str) -> Any:
    """The object a "module:qualified.name" names (imported on first use)."""
    got = _RESOLVED.get(spec)
    if got is None:
        module, _, qualname = spec.partition(":")
        got = importlib.import_module(module)
        for part in qualname.split("."):
            got = getattr(got, part)
        _RESOLVED[spec] = got
    return got


def encode(result: Any) -> Any:
    """An answer (or argument) as it crosses the socket: dataclasses as their dicts."""
    if isinstance(result, list):
        return [encode(x) for x in result]
    return result.to_dict() if hasattr(result, "to_dict") else result

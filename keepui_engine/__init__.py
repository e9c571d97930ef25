"""keepui's engine: a versioned, searchable memory store; front ends use only these exports."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: the CLI's fast path must not pay for importing it
if TYPE_CHECKING:
    from typing import Any

    from keepui_engine.client.beir import evaluate
    from keepui_engine.client.settings import load_settings
    from keepui_engine.client.tuning.experiments import Experiment
    from keepui_engine.client.tuning.querysets import QuerySet
    from keepui_engine.client.workbench import Workbench, open_workbench
    from keepui_engine.core.config import Settings, resolve_store, store_exists
    from keepui_engine.core.errors import (
        ConfigError,
        FlowError,
        Interrupted,
        KeepuiError,
        NotFound,
        ProviderError,
        StoreError,
        UsageError,
    )
    from keepui_engine.core.inputs import looks_like_path, now_id, source_kind
    from keepui_engine.core.interrupts import install as install_interrupts
    from keepui_engine.core.private import use_private_umask
    from keepui_engine.core.types import (
        DeleteResult,
        DiffRow,
        FindQuery,
        FindResult,
        Hit,
        IngestEntry,
        IngestReport,
        Item,
        Part,
        PutResult,
        PutSpec,
        ResultComparison,
        SearchRecord,
        Stats,
        VersionDiff,
        VersionInfo,
    )
    from keepui_engine.flows.model import (
        ActionCall,
        FlowInfo,
        FlowResult,
        FlowTick,
        RuleTrace,
    )
    from keepui_engine.search.context import ContextResult, Passage
    from keepui_engine.search.evaluation import EvalResult, write_runs
    from keepui_engine.search.judgments import Judgment, qrels_lines, queries_lines
    from keepui_engine.search.reflection import Reflection
    from keepui_engine.search.searches import compare_results
    from keepui_engine.store.postgres.local import start_local_postgres, stop_local_postgres
    from keepui_engine.transfer import ImportReport

# Every export is imported when first asked for: a command that talks to the store's owner
# imports the facade, the types and the socket client, never numpy, DuckDB or the model.
_TYPES = (
    "DeleteResult DiffRow FindQuery FindResult Hit IngestEntry IngestReport Item Part PutResult "
    "PutSpec ResultComparison SearchRecord Stats VersionDiff VersionInfo"
)
_ERRORS = (
    "ConfigError FlowError Interrupted KeepuiError NotFound ProviderError StoreError UsageError"
)
_LAZY = {
    **dict.fromkeys(_TYPES.split(), "keepui_engine.core.types"),
    **dict.fromkeys(_ERRORS.split(), "keepui_engine.core.errors"),
    "Workbench": "keepui_engine.client.workbench",
    "open_workbench": "keepui_engine.client.workbench",
    "Settings": "keepui_engine.core.config",
    "load_settings": "keepui_engine.client.settings",
    "Experiment": "keepui_engine.client.tuning.experiments",
    "QuerySet": "keepui_engine.client.tuning.querysets",
    "resolve_store": "keepui_engine.core.config",
    "store_exists": "keepui_engine.core.config",
    "ActionCall": "keepui_engine.flows.model",
    "FlowInfo": "keepui_engine.flows.model",
    "FlowResult": "keepui_engine.flows.model",
    "FlowTick": "keepui_engine.flows.model",
    "RuleTrace": "keepui_engine.flows.model",
    "looks_like_path": "keepui_engine.core.inputs",
    "now_id": "keepui_engine.core.inputs",
    "source_kind": "keepui_engine.core.inputs",
    "use_private_umask": "keepui_engine.core.private",
    "EvalResult": "keepui_engine.search.evaluation",
    "evaluate": "keepui_engine.client.beir",
    "write_runs": "keepui_engine.search.evaluation",
    "compare_results": "keepui_engine.search.searches",
    "start_local_postgres": "keepui_engine.store.postgres.local",
    "stop_local_postgres": "keepui_engine.store.postgres.local",
    "ContextResult": "keepui_engine.search.context",
    "Passage": "keepui_engine.search.context",
    "Reflection": "keepui_engine.search.reflection",
    "Judgment": "keepui_engine.search.judgments",
    "qrels_lines": "keepui_engine.search.judgments",
    "queries_lines": "keepui_engine.search.judgments",
    "ImportReport": "keepui_engine.transfer",
}


def __getattr__(name: str) -> Any:
    """An export, imported when first asked for (and then kept as a module attribute)."""
    if name == "install_interrupts":
        from keepui_engine.core.interrupts import install

        globals()[name] = install
        return install
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'keepui_engine' has no attribute {name!r}")


def parse_flow_params(raw: list[str] | None) -> dict[str, Any]:
    """Parse repeated `-p KEY=VALUE` flow params (see `flow_bindings.coerce_params`).

    Imported on call: the flow bindings are not needed on the start-up path of other commands.
    """
    from keepui_engine.client.flow_bindings import coerce_params

    return coerce_params(raw)


__all__ = [
    "ImportReport",
    "Judgment",
    "qrels_lines",
    "queries_lines",
    "ActionCall",
    "FlowError",
    "FlowInfo",
    "FlowResult",
    "FlowTick",
    "RuleTrace",
    "ConfigError",
    "ContextResult",
    "Passage",
    "Reflection",
    "DeleteResult",
    "DiffRow",
    "EvalResult",
    "Experiment",
    "QuerySet",
    "FindQuery",
    "FindResult",
    "Hit",
    "Interrupted",
    "IngestEntry",
    "IngestReport",
    "Item",
    "KeepuiError",
    "NotFound",
    "Part",
    "ProviderError",
    "PutResult",
    "PutSpec",
    "ResultComparison",
    "SearchRecord",
    "Settings",
    "Stats",
    "StoreError",
    "UsageError",
    "VersionDiff",
    "VersionInfo",
    "Workbench",
    "install_interrupts",
    "use_private_umask",
    "load_settings",
    "looks_like_path",
    "open_workbench",
    "parse_flow_params",
    "resolve_store",
    "source_kind",
    "start_local_postgres",
    "stop_local_postgres",
    "store_exists",
    "now_id",
    "evaluate",
    "write_runs",
    "compare_results",
]

"""keepui's engine: a versioned, searchable memory store; front ends use only these exports."""

from __future__ import annotations

from keepui_engine.api import Workbench, open_workbench
from keepui_engine.config import Settings, load_settings, resolve_store
from keepui_engine.errors import (
    ConfigError,
    KeepuiError,
    NotFound,
    ProviderError,
    StoreError,
    UsageError,
)
from keepui_engine.evaluation import EvalResult, evaluate, write_runs
from keepui_engine.types import (
    DeleteResult,
    FindQuery,
    FindResult,
    Hit,
    Item,
    PutResult,
    PutSpec,
    Stats,
    VersionInfo,
)

__all__ = [
    "ConfigError",
    "DeleteResult",
    "EvalResult",
    "FindQuery",
    "FindResult",
    "Hit",
    "Item",
    "KeepuiError",
    "NotFound",
    "ProviderError",
    "PutResult",
    "PutSpec",
    "Settings",
    "Stats",
    "StoreError",
    "UsageError",
    "VersionInfo",
    "Workbench",
    "load_settings",
    "open_workbench",
    "resolve_store",
    "evaluate",
    "write_runs",
]

"""`keepui.langchain`, the import path the LangGraph and LangChain adapters were first published
under: the same objects as `keepui.agents.langchain`, where they live now (with the MCP server),
and its modules under their old names (`keepui.langchain.store` …)."""

from __future__ import annotations

import importlib
import sys

from keepui.agents.langchain import KeepuiRetriever, KeepuiStore, keepui_tools

for _name in ("filters", "mapping", "retriever", "store", "tools"):
    sys.modules[f"{__name__}.{_name}"] = importlib.import_module(f"keepui.agents.langchain.{_name}")

__all__ = ["KeepuiRetriever", "KeepuiStore", "keepui_tools"]

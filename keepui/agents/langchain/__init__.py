"""LangGraph and LangChain adapters over a keepui store (needs `pip install 'keepui[langchain]'`).

- `KeepuiStore`: a LangGraph `BaseStore` (long-term memory for graphs) whose items are keepui
  documents, tagged by namespace and searchable by meaning.
- `KeepuiRetriever`: a LangChain retriever over keepui's find.
- `keepui_tools(workbench)`: `remember`, `recall` and `get_context` tools for agents.
"""

from __future__ import annotations

try:
    import langchain_core  # noqa: F401
    import langgraph.store.base  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        f"keepui.agents.langchain needs LangGraph and LangChain ({exc.name} is missing): "
        "pip install 'keepui[langchain]'"
    ) from exc

from keepui.agents.langchain.retriever import KeepuiRetriever  # noqa: E402
from keepui.agents.langchain.store import KeepuiStore  # noqa: E402
from keepui.agents.langchain.tools import keepui_tools  # noqa: E402

__all__ = ["KeepuiRetriever", "KeepuiStore", "keepui_tools"]

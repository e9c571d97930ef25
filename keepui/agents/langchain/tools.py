"""LangChain tools for agents: remember, recall and get_context over a keepui store."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, Field

from keepui_engine import KeepuiError, Workbench


class RememberInput(BaseModel):
    """Arguments of `remember`."""

    text: str = Field(description="What to remember, as plain text.")
    tags: list[str] = Field(
        default_factory=list, description="Tags as KEY=VALUE strings, e.g. topic=travel."
    )
    id: str | None = Field(
        default=None,
        description="An id to store it under (a new version if it exists); default: derived "
        "from the text.",
    )


class RecallInput(BaseModel):
    """Arguments of `recall`."""

    query: str = Field(description="What to look for, in words.")
    tags: list[str] = Field(
        default_factory=list, description="Only memories with these tags (KEY or KEY=VALUE)."
    )
    limit: int = Field(default=5, ge=1, le=50, description="At most this many memories.")


class ContextInput(BaseModel):
    """Arguments of `get_context`."""

    query: str = Field(description="The question or topic the context is for.")
    top_k: int = Field(default=5, ge=1, le=50, description="At most this many passages.")
    max_tokens: int = Field(default=2048, ge=1, description="Word budget of the context.")
    tags: list[str] = Field(
        default_factory=list, description="Only passages from memories with these tags."
    )


@contextmanager
def _as_tool_errors() -> Iterator[None]:
    """keepui errors become ToolExceptions, which the agent sees as the tool's answer."""
    try:
        yield
    except KeepuiError as exc:
        raise ToolException(f"{exc.title}: {exc.message}") from exc


def remember_tool(workbench: Workbench) -> BaseTool:
    """A tool that stores a text with tags and says what it stored."""

    def remember(text: str, tags: list[str] | None = None, id: str | None = None) -> str:  # noqa: A002
        with _as_tool_errors():
            done = workbench.put(text, id=id, tags=list(tags or []), source="agent")
        return f"{done.action} {done.id} (version {done.version})"

    return _tool(
        remember,
        RememberInput,
        "Store a note in long-term memory so it can be recalled later by meaning. "
        "Returns the id it was stored under.",
    )


def recall_tool(workbench: Workbench) -> BaseTool:
    """A tool that searches the store and answers with the hits as JSON."""

    def recall(query: str, tags: list[str] | None = None, limit: int = 5) -> str:
        with _as_tool_errors():
            found = workbench.find(query, tags=list(tags or []), limit=limit)
        hits = [
            {
                "id": h.id,
                "matched": h.matched,
                "score": round(h.score, 4),
                "summary": h.summary,
                "tags": {k: v for k, v in h.tags.items() if not k.startswith("_")},
                "updated": h.updated,
            }
            for h in found.hits
        ]
        return json.dumps({"query": query, "hits": hits}, ensure_ascii=False)

    return _tool(
        recall,
        RecallInput,
        "Search long-term memory by meaning and words. Returns JSON: the matching memories "
        "(id, score, summary, tags), best first.",
    )


def context_tool(workbench: Workbench) -> BaseTool:
    """A tool that answers with the top passages for a query, each cited `[Source: ID]`."""

    def get_context(
        query: str, top_k: int = 5, max_tokens: int = 2048, tags: list[str] | None = None
    ) -> str:
        with _as_tool_errors():
            result = workbench.context(
                query, top_k=top_k, max_tokens=max_tokens, tags=list(tags or []) or None
            )
        return result.text or f"No stored memory matches {query!r}."

    return _tool(
        get_context,
        ContextInput,
        "Retrieve passages from long-term memory relevant to a question, formatted for a "
        "prompt: each passage is followed by [Source: ID]. Cite those sources.",
    )


def keepui_tools(workbench: Workbench) -> list[BaseTool]:
    """The toolkit: `remember`, `recall` and `get_context` over one keepui store."""
    return [remember_tool(workbench), recall_tool(workbench), context_tool(workbench)]


def _tool(func: Callable[..., str], schema: type[BaseModel], description: str) -> BaseTool:
    return StructuredTool.from_function(
        func=func,
        name=func.__name__,
        description=description,
        args_schema=schema,
        handle_tool_error=True,
    )


__all__ = [
    "ContextInput",
    "RecallInput",
    "RememberInput",
    "context_tool",
    "keepui_tools",
    "recall_tool",
    "remember_tool",
]

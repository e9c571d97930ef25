"""What agents ask of a store (context, reflection, the now note), built on the Workbench
facade alone, so it works the same in the owning process and in a client of `keepui serve`."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from keepui_engine.core.errors import NotFound, UsageError
from keepui_engine.core.inputs import now_id
from keepui_engine.core.types import FindResult, Hit, Item
from keepui_engine.search import context as ctx
from keepui_engine.search.reflection import Reflection, check_kind

if TYPE_CHECKING:
    from keepui_engine.client.workbench import Workbench


class Scope(NamedTuple):
    """What a context or reflection may cite beyond current research documents."""

    history: bool = False  # archived versions too (find --history)
    include_system: bool = False  # the now notes and system documents (find --all)

    def find(
        self, wb: Workbench, query: str, tags: list[str] | None, top_k: int, mode: str | None
    ) -> FindResult:
        """The hits a context or reflection draws on, within this scope."""
        return wb.find(
            query,
            tags=tags,
            limit=top_k,
            mode=mode,
            history=self.history,
            include_system=self.include_system,
        )


NOW = Scope()  # current research documents only: the default


def _positive(value: int, flag: str) -> int:
    if value < 1:
        raise UsageError(f"{flag} {value}: give a whole number of 1 or more.")
    return value


def passage_text(wb: Workbench, hit: Hit) -> str:
    """What a hit matched: its passage's text, else its version's text (the summary when the
    store keeps no text). A long text matched as a whole (its whole-text vector, which sees
    its first window) hands over its first passage, never the whole text."""
    item = None
    if hit.part is None:
        try:
            item = wb.get(f"{hit.matched}@P{{1}}")
        except NotFound:
            item = None  # not split: the whole text is one passage
    if item is None:
        item = wb.get(hit.matched)
    return item.text if item.text else item.summary


def context(
    wb: Workbench,
    query: str,
    top_k: int,
    min_score: float,
    max_tokens: int,
    tags: list[str] | None,
    mode: str | None,
    header: bool,
    scope: Scope = NOW,
) -> ctx.ContextResult:
    """See `Workbench.context`."""
    _positive(top_k, "--top-k")
    _positive(max_tokens, "--max-tokens")
    with wb.session("find"):  # one store open for the search and the passages
        found = scope.find(wb, query, tags, top_k, mode)
        return ctx.build(
            found,
            lambda hit: passage_text(wb, hit),
            min_score=min_score,
            max_tokens=max_tokens,
            header=header,
        )


def reflect(
    wb: Workbench,
    query: str,
    kind: str,
    top_k: int,
    tags: list[str] | None,
    mode: str | None,
    store_back: bool,
    scope: Scope = NOW,
) -> Reflection:
    """See `Workbench.reflect`."""
    check_kind(kind)
    _positive(top_k, "--top-k")
    with wb.session("find"):
        found = scope.find(wb, query, tags, top_k, mode)
        passages = [
            {"id": h.id, "matched": h.matched, "text": passage_text(wb, h)} for h in found.hits
        ]
        sources = [h.id for h in found.hits]
        if not passages:
            note = f"no hits for {query!r}: nothing to reflect on"
            if store_back:
                note += " (nothing stored)"
            return Reflection(query, kind, "", [], [], "none", None, [note])
        got = wb.call("reflect", query=query, kind=kind, passages=passages)
        stored = None
        notes: list[str] = []
        if store_back and got["text"]:
            one_line = " ".join(query.split())
            reflection_tags = [
                "type=reflection",
                f"query={one_line}",
                f"kind={kind}",
                *[f"source={s}" for s in sources],
            ]
            stored = wb.put(got["text"], tags=reflection_tags, source="reflection").id
        elif store_back:
            notes.append("the hits hold no sentence to reflect on: nothing stored")
    return Reflection(
        query, kind, got["text"], got["points"], sources, got["method"], stored, notes
    )


def now(wb: Workbench, text: str | None, scope: str | None, tags: list[str] | None) -> Item:
    """See `Workbench.now`."""
    doc_id = now_id(scope)
    if text is not None:
        wb.put(text, id=doc_id, tags=tags)
    elif tags:
        raise UsageError("tags go with a new text: keepui now TEXT -t KEY=VALUE.")
    try:
        return wb.get(doc_id)
    except NotFound:
        return Item(doc_id, 0, 0, 0, "", "", {}, "", "", "")

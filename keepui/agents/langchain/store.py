"""KeepuiStore: a LangGraph BaseStore over a keepui Workbench (long-term memory for graphs).

Every operation is a call on the `keepui_engine.Workbench` facade, so the store works the same
in the process that owns the keepui store and in a client of `keepui serve`. See
`keepui.agents.langchain.mapping` for how items become documents (ids, tags, text, record).

Semantics, where keepui and LangGraph differ:

- Delete (`put(..., None)` / `delete`): the document is purged with its whole history
  (keepui's plain delete would revert to the previous version, and the item would come back).
- Overwrite: a new keepui version (`keepui history ID` shows the item's past values);
  `created_at` stays the first put's time. Putting the same value again changes nothing.
- `index=False`: the item is stored, read and filtered as usual, and a `query` search gives it
  no score: it comes after the scored items, with `score=None`, when they leave room under
  `limit` (as LangGraph's stores do). `index=[paths]` embeds the texts at those paths, each as
  a part of its own (see `keepui.agents.langchain.mapping`), so an item scores by its best field.
- Search without `query`: newest first (by `updated_at`). With `query`: keepui's find (the
  store's search mode) over the current values in the namespace's tags, ranked by relevance
  (see `KeepuiStore` for what `score` is); every item that passes the filter is returned up to
  `limit`, with no evidence or a little (as LangGraph's stores do), unless `min_score` is set.
  A hit on a part comes back with the item's current value. Filters are applied to current
  values after the search, which is over-fetched until `offset + limit` items pass or the
  candidates run out.
- Ops in one batch run in order (a get after a put sees it); consecutive puts are written in
  one `put_many` (the last put of a (namespace, key) wins). TTLs are not supported.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from keepui.agents.langchain.filters import matches, namespace_matches
from keepui.agents.langchain.mapping import (
    INDEX_TAG,
    NOT_INDEXED,
    Layout,
    Record,
    indexed_text,
    record_json,
)
from keepui_engine import FindQuery, NotFound, PutSpec, StoreError, Workbench, open_workbench

if TYPE_CHECKING:
    import os

    from keepui_engine import Hit
    from keepui_engine import Item as KeepuiItem

ALL = 1_000_000_000  # "no limit" for list_items
_PutKey = tuple[tuple[str, ...], str]


class KeepuiStore(BaseStore):
    """A LangGraph store whose items are keepui documents, searchable by meaning.

    `SearchItem.score` of a `query` search is keepui's relevance of the item's current value
    (its best field with `index=[paths]`), higher is better, rounded to 6 decimals (the
    vectors are float32); what it measures depends on the search mode:

    - dense (the default here, as LangGraph's own stores search): the cosine similarity of
      the query and the item's best field, -1 to 1.
    - hybrid (`search_mode="hybrid"`, keepui's own default, with `[search] fusion = "score"`):
      meaning and words together: the mean of the cosine
      similarity (a negative one counts 0) and the words' BM25 score converted to cosine units
      for this query. 0 means no evidence (no query word, and no closer in meaning than
      unrelated text); a close match in meaning that shares no word scores half its cosine;
      a text equal to the query about 1. Not capped, but rarely above 1.
      (`fusion = "rrf"` scores by ranks instead: at most 2/61 with the default settings.)
    - bm25: the BM25 score, 0 (no query word) upwards, unbounded.

    Unlike `keepui find`, recency does not count (LangGraph's scores are similarities, so an old
    memory does not fade; of equal scores the newest comes first), and an item put with
    `index=False` (or with no text at its index paths) has `score=None`.

    Args:
        workbench: The keepui store to use (owned or a client of `keepui serve`); to open a
            store directory, use `KeepuiStore.from_store(path)`.
        namespace_keys: Tag keys for the first namespace labels, e.g. ("user", "project"):
            ("alice", "p1") is then tagged user=alice, project=p1; further labels get `ns2`,
            `ns3`, ... (their position). `keepui find -t user=alice` sees the same items.
        collection: First segment of every id and value of the `lg_collection` tag; two
            KeepuiStores with different collections share a keepui store without mixing.
        index_fields: Paths of the value to embed by default, each as its own vector
            (LangGraph path syntax, e.g. ["text", "notes[*].body"]); None embeds every string
            in the value together.
        search_mode: keepui search mode for `query` searches: dense (default: LangGraph's
            cosine scores), hybrid (meaning and words: keepui's own default) or bm25; None
            means the store's keepui.toml `[search] mode`.
        min_score: Leave out `query` results scoring below this (and those with no score);
            None (default) returns every item that passes the filter, up to `limit`.
            keepui.toml's `[search] min_score` does not apply here.
        close_workbench: Close the workbench in `close()` (set by `from_store`).

    Raises:
        TypeError: `workbench` is not a keepui Workbench.
    """

    supports_ttl = False

    def __init__(
        self,
        workbench: Workbench,
        *,
        namespace_keys: Sequence[str] = (),
        collection: str = "langgraph",
        index_fields: Sequence[str] | None = None,
        search_mode: str | None = "dense",
        min_score: float | None = None,
        close_workbench: bool = False,
    ) -> None:
        if not isinstance(workbench, Workbench):
            raise TypeError(
                f"KeepuiStore needs a keepui Workbench, not {type(workbench).__name__}; "
                "to open a store directory, use KeepuiStore.from_store(path)."
            )
        self.workbench = workbench
        self.layout = Layout(collection, tuple(namespace_keys))
        self.index_fields = None if index_fields is None else list(index_fields)
        self.search_mode = search_mode
        self.min_score = min_score
        self._close_workbench = close_workbench

    @classmethod
    def from_store(
        cls,
        store: str | os.PathLike[str] | None = None,
        *,
        own: bool | None = None,
        serve: bool = True,
        create: bool = True,
        **kwargs: Any,
    ) -> KeepuiStore:
        """Open a keepui store directory and wrap it.

        Args:
            store: The store directory; None means $KEEPUI_STORE or ~/.keepui.
            own: Hold the store (one model load for the process's lifetime); False makes
                every call a client call; None (default) owns it unless another process
                already serves it, and then is its client.
            serve: When owning, answer other keepui processes (the CLI, the TUI) over the
                store socket, as `keepui serve` does; otherwise they wait for the store lock.
            create: Create the store when there is none.
            **kwargs: The constructor's keyword arguments.
        """
        if own is None:
            try:
                wb = open_workbench(store, own=True, create=create)
            except StoreError as exc:
                if exc.title != "Store already open":
                    raise
                wb = open_workbench(store, create=create)
        else:
            wb = open_workbench(store, own=own, create=create)
        if serve and wb.owns_store:
            wb.serve()
        return cls(wb, close_workbench=True, **kwargs)

    def close(self) -> None:
        """Close the workbench when this store opened it (`from_store`)."""
        if self._close_workbench:
            self.workbench.close()

    def __enter__(self) -> KeepuiStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- BaseStore ------------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ops in order; results match them one for one (None for puts)."""
        results: list[Result] = []
        puts: dict[_PutKey, PutOp] = {}
        for op in ops:
            if isinstance(op, PutOp):
                puts.pop((tuple(op.namespace), op.key), None)
                puts[(tuple(op.namespace), op.key)] = op
                results.append(None)
                continue
            self._write(puts)
            if isinstance(op, GetOp):
                results.append(self._get(tuple(op.namespace), op.key))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                raise ValueError(f"unknown operation type: {type(op).__name__}")
        self._write(puts)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """`batch` in a worker thread (the facade's calls block)."""
        return await asyncio.to_thread(self.batch, list(ops))

    # -- writing ----------------------------------------------------------------------------------
    def _write(self, puts: dict[_PutKey, PutOp]) -> None:
        """Store the pending puts in one put_many and purge the deleted items; empty `puts`."""
        specs = [self._spec(op) for op in puts.values() if op.value is not None]
        gone = [self.layout.doc_id(ns, key) for (ns, key), op in puts.items() if op.value is None]
        puts.clear()
        if specs:
            self.workbench.put_many(specs)
        for doc_id in gone:
            with contextlib.suppress(NotFound):  # never stored, or already gone
                self.workbench.delete(doc_id, purge=True)

    def _spec(self, op: PutOp) -> PutSpec:
        namespace, value = tuple(op.namespace), op.value or {}
        if not namespace:
            raise ValueError("a LangGraph namespace needs at least one label.")
        fields = self.index_fields if op.index is None or op.index is False else list(op.index)
        indexed = indexed_text(value, fields)
        return PutSpec(
            indexed.text,
            id=self.layout.doc_id(namespace, op.key),
            tags=self.layout.tags(
                namespace, op.key, indexed=op.index is not False and indexed.has_text
            ),
            summary=record_json(namespace, op.key, value),
            source="langgraph",
            blocks=indexed.blocks,
        )

    # -- reading ----------------------------------------------------------------------------------
    def _record(self, item: KeepuiItem) -> Record | None:
        return self.layout.read(item.id, item.summary, item.tags, (item.created, item.updated))

    def _head(self, doc_id: str) -> Record | None:
        """The current record of a document (a read that does not touch its access time)."""
        found = self.workbench.list_items(doc_id, sort="id", limit=1)
        if not found or found[0].id != doc_id:
            return None
        return self._record(found[0])

    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        rec = self._head(self.layout.doc_id(namespace, key))
        if rec is None or rec.namespace != namespace or rec.key != key:
            return None
        return Item(
            value=rec.value,
            key=rec.key,
            namespace=rec.namespace,
            created_at=rec.created,
            updated_at=rec.updated,
        )

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        offset, limit = max(op.offset, 0), max(op.limit, 0)
        want = offset + limit
        if limit == 0:
            return []
        tags = self.layout.filter_tags(prefix)

        def keep(rec: Record | None) -> bool:
            return (
                rec is not None
                and rec.namespace[: len(prefix)] == prefix
                and matches(rec.value, op.filter)
            )

        if op.query:
            ranked: list[tuple[Record, float | None]] = []
            ranked += self._ranked(op.query, tags, want, keep)
            if len(ranked) < want and self.min_score is None:  # room for the unscored
                unscored = self._listed([*tags, f"{INDEX_TAG}={NOT_INDEXED}"], want, keep)
                ranked += [(rec, None) for rec in unscored[: want - len(ranked)]]
            return [_search_item(rec, score) for rec, score in ranked[offset:want]]
        return [_search_item(rec, None) for rec in self._listed(tags, want, keep)[offset:want]]

    def _listed(
        self, tags: list[str], want: int, keep: Callable[[Record | None], bool]
    ) -> list[Record]:
        """Newest first, over-fetched until `want` records pass `keep` or none are left."""
        fetch = max(want * 4, 64)
        while True:
            items = self.workbench.list_items(None, tags=tags, sort="updated", limit=fetch)
            kept = [rec for rec in map(self._record, items) if rec is not None and keep(rec)]
            if len(kept) >= want or len(items) < fetch:
                return kept
            fetch *= 4

    def _ranked(
        self, query: str, tags: list[str], want: int, keep: Callable[[Record | None], bool]
    ) -> list[tuple[Record, float]]:
        """Indexed records by relevance, best first, over-fetched from keepui's find until
        `want` pass `keep` (and `min_score`) or the candidates run out."""
        fetch = max(want * 3, 30)
        while True:
            found = self.workbench.find_query(
                FindQuery(
                    query,
                    tags,
                    limit=fetch,
                    mode=self.search_mode,
                    min_score=-math.inf,  # keepui.toml's threshold is not the adapter's
                    dedup=False,  # near-identical memories are still distinct items
                    rerank="relevance",
                    keep_weak=True,  # LangGraph returns every item that passes the filter
                    decay=False,  # relevance alone, so an old item is not cut before the sort
                )
            )
            kept: list[tuple[Record, float, str]] = []
            for hit in found.hits:
                score = relevance(hit)
                if self.min_score is not None and score < self.min_score:
                    continue
                rec = self._hit_record(hit)
                if rec is not None and rec.indexed and keep(rec):
                    kept.append((rec, score, hit.updated))
            kept.sort(key=lambda r: r[2], reverse=True)  # ties of relevance: newest first
            kept.sort(key=lambda r: r[1], reverse=True)
            exhausted = len(found.hits) < fetch
            # Enough, and nothing past the cut can tie the last wanted one (find orders by
            # the unrounded score, so a later hit rounds to no more than the cut's last), so
            # pages of different sizes agree on the order of tied items.
            if (
                exhausted
                or want < 1
                or (len(kept) >= want and relevance(found.hits[-1]) < kept[want - 1][1])
            ):
                return [(rec, score) for rec, score, _ in kept]
            fetch *= 4

    def _hit_record(self, hit: Hit) -> Record | None:
        """The current record of a hit's document (its own summary when the head matched)."""
        if hit.version == 0 and hit.part is None:
            rec = self.layout.read(hit.id, hit.summary, hit.tags, (hit.created, hit.updated))
            if rec is not None:
                return rec
        return self._head(hit.id)

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = tuple(op.match_conditions or ())
        prefix = next((c.path for c in conditions if c.match_type == "prefix"), ())
        items = self.workbench.list_items(
            None, tags=self.layout.filter_tags(tuple(prefix)), sort="id", limit=ALL
        )
        found = {rec.namespace for rec in map(self._record, items) if rec is not None}
        found = {ns for ns in found if all(namespace_matches(ns, c) for c in conditions)}
        if op.max_depth is not None:
            found = {ns[: op.max_depth] for ns in found}
        offset = max(op.offset, 0)
        return sorted(found)[offset : offset + max(op.limit, 0)]


SCORE_DIGITS = 6  # keepui's vectors are float32: the digits past this are rounding noise


def relevance(hit: Hit) -> float:
    """A find hit's relevance before recency decay: the fused score (hybrid), else the one
    channel's score (the cosine in dense mode, BM25 in bm25 mode), to SCORE_DIGITS decimals
    (so the same text scores the same, whichever row of the index holds it)."""
    scores = hit.scores
    value = next((v for v in map(scores.get, ("fused", "dense", "bm25")) if v is not None), None)
    return round(float(hit.score if value is None else value), SCORE_DIGITS)


def _search_item(rec: Record, score: float | None) -> SearchItem:
    return SearchItem(
        namespace=rec.namespace,
        key=rec.key,
        value=rec.value,
        created_at=rec.created,
        updated_at=rec.updated,
        score=score,
    )

"""Workbench: the one facade the CLI and the TUI use, whichever process holds the store."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from keepui_engine.client.session import StoreAccess, _unexpected
from keepui_engine.client.settings import load_settings
from keepui_engine.core.config import resolve_store, store_exists, store_url
from keepui_engine.core.errors import KeepuiError, NotFound, StoreError, UsageError
from keepui_engine.core.types import (
    DeleteResult,
    FindQuery,
    FindResult,
    IngestReport,
    Item,
    Part,
    PutResult,
    PutSpec,
    SearchRecord,
    Stats,
    VersionDiff,
    VersionInfo,
)

if TYPE_CHECKING:
    from keepui_engine.client.tuning import Tuning
    from keepui_engine.flows.model import FlowInfo, FlowResult, FlowTick
    from keepui_engine.ops.doctor import DoctorReport
    from keepui_engine.providers.base import Embedder
    from keepui_engine.search.context import ContextResult
    from keepui_engine.search.evaluation import EvalResult
    from keepui_engine.search.judgments import Judgment
    from keepui_engine.search.reflection import Reflection
    from keepui_engine.store.postgres.notify import ChangeFeed
    from keepui_engine.transfer import ImportReport


class Workbench(StoreAccess):
    """Every user-visible operation on one store (how calls reach it: see StoreAccess)."""

    def put(
        self,
        text: str,
        *,
        id: str | None = None,  # noqa: A002
        tags: list[str] | None = None,
        summary: str | None = None,
        source: str = "inline",
        content_type: str = "text/plain",
    ) -> PutResult:
        """Store one text (a new document, a new version, or a no-op when unchanged)."""
        spec = PutSpec(text, id, list(tags or []), summary, source, content_type)
        return self.put_many([spec])[0]

    def put_many(self, specs: list[PutSpec]) -> list[PutResult]:
        """Store many texts in one batch (one encode pass, one transaction)."""
        result: list[PutResult] = self.call("put_many", specs=specs)
        return result

    def get(self, address: str, offset: int | None = None) -> Item:
        """A document by `ID` or `ID@V{N}`; `offset` picks a version (0 current, -1 oldest)."""
        result: Item = self.call("get", address=address, offset=offset)
        return result

    def resolve_id(self, arg: str, *, whole: bool = False) -> str:
        """The address a command's ID argument names: itself when stored, else the `file://`
        id `put` gave the file it names (relative to the working directory), suffix kept.

        Args:
            arg: An id, `ID@V{N}`/`ID@P{N}`, or a file's path as it was given to `put`.
            whole: Refuse addresses of a version or a part (tag, del, analyze).

        Raises:
            NotFound: The file's `file://` id is not stored either (the message names it).
            UsageError: `whole`, and the argument addresses a version or a part.
        """
        from keepui_engine.ingest.sources import resolve_address

        def stored(doc_id: str) -> bool:
            found = self.list_items(doc_id, sort="id", limit=1, include_system=True)
            return bool(found) and found[0].id == doc_id  # ids sort by code point

        return resolve_address(arg, stored, whole=whole)

    def ingest(
        self,
        targets: list[str],
        *,
        id: str | None = None,  # noqa: A002 - the CLI's name for it
        tags: list[str] | None = None,
        exclude: list[str] | None = None,
        progress: Any = None,
        strict: bool = False,
    ) -> IngestReport:
        """Store files, directories and http(s) URLs (see `ingesting.ingest`).

        Extraction runs in this process; documents are stored through put_many in batches.
        The store's `.ignore` document (one glob per line) adds to `exclude`.
        """
        from keepui_engine.ingest.ingesting import ignore_globs, ingest

        with self.session("put_many"):  # the store's owner (started now) stores them all
            try:
                ignore = ignore_globs(self.get(".ignore").text)
            except NotFound:
                ignore = []
            return ingest(
                self.put_many,
                self.settings,
                targets,
                doc_id=id,
                tags=tags,
                exclude=exclude,
                ignore=ignore,
                progress=progress,
                strict=strict,
            )

    # -- background work --------------------------------------------------------------------
    def pending(self, doc_id: str | None = None) -> dict[str, Any]:
        """The queue: counts by task and state, failures with errors, next due time."""
        result: dict[str, Any] = self.call("pending", doc_id=doc_id)
        return result

    def work_once(self) -> dict[str, Any] | None:
        """Run the next runnable task here (or in the store's owner); None when none is due."""
        from keepui_engine.store.tables.pending import owner_id

        mine = owner_id()
        result: dict[str, Any] | None = self.call("work_once", owner=mine, live_owners=[mine])
        return result

    def drain(self, progress: Any = None) -> list[dict[str, Any]]:
        """Run tasks until nothing is runnable now; `progress(done, result)` after each."""
        done: list[dict[str, Any]] = []
        while (result := self.work_once()) is not None:
            done.append(result)
            if progress is not None:
                progress(len(done), result)
        return done

    def pending_retry(self) -> int:
        """Move dead letters back to the queue; return how many."""
        result: int = self.call("pending_retry")
        return result

    def pending_purge(self) -> int:
        """Delete dead letters; return how many."""
        result: int = self.call("pending_purge")
        return result

    def analyze(self, doc_id: str, *, queue: bool = False, force: bool = False) -> dict[str, Any]:
        """Split a document into parts now (or queue it); skipped when unchanged."""
        result: dict[str, Any] = self.call("analyze", doc_id=doc_id, queue=queue, force=force)
        return result

    def summarize(self, doc_id: str) -> dict[str, Any]:
        """Queue a new summary of a document's current version: {"id", "queued": task id}."""
        result: dict[str, Any] = self.call("summarize", doc_id=doc_id)
        return result

    def parts(self, address: str, offset: int | None = None) -> list[Part]:
        """The parts of a document version (current by default), in order; [] when unsplit."""
        result: list[Part] = self.call("parts", address=address, offset=offset)
        return result

    def history(self, address: str) -> list[VersionInfo]:
        """The version timeline of a document, newest first."""
        result: list[VersionInfo] = self.call("history", address=address)
        return result

    def find(
        self,
        query: str,
        *,
        tags: list[str] | None = None,
        limit: int | None = None,
        since: str | None = None,
        until: str | None = None,
        mode: str | None = None,
        min_score: float | None = None,
        fusion: str | None = None,
        dedup: bool | None = None,
        rerank: str | None = None,
        as_of: str | None = None,
        include_system: bool = False,
        history: bool = False,
        config: str | None = None,
    ) -> FindResult:
        """Search by meaning (dense), words (bm25) or both (hybrid) after tag and time filters.

        Current versions (and their parts) only, filtered by their current tags and time;
        `history` also searches archived versions, `as_of` the versions current at that
        moment (see FindQuery). None for mode, min_score, fusion, dedup or rerank means the
        search configuration `config` (`keepui config --configs`), else keepui.toml's
        [search]; None for limit means the configuration's, else 10.

        Raises:
            UsageError: No search configuration is called `config`.
        """
        from keepui_engine.core.search_configs import limit_of

        return self.find_query(
            FindQuery(
                query,
                list(tags or []),
                limit_of(self.settings, config) if limit is None else limit,
                since,
                until,
                mode,
                min_score,
                fusion,
                dedup,
                rerank,
                as_of,
                include_system,
                history,
                config=config,
            )
        )

    def related(
        self, doc_id: str, *, seen: list[str] | None = None, per_hit: int = 3
    ) -> list[dict[str, Any]]:
        """A document's neighbours: [{"id", "via": "edge:VERB" or "similar", "score",
        "summary"}], its edges first, then its `per_hit` nearest by vector; none in `seen`."""
        result: list[dict[str, Any]] = self.call(
            "related", doc_id=doc_id, seen=list(seen or []), per_hit=per_hit
        )
        return result

    def find_deep(self, q: FindQuery, per_hit: int = 3) -> FindResult:
        """`find`, each hit with `related`: its edge neighbours and its `per_hit` nearest
        documents by vector, none repeating a hit or an earlier neighbour."""
        result: FindResult = self.call("find_deep", q=q, per_hit=per_hit)
        return result

    def find_query(self, q: FindQuery) -> FindResult:
        """`find` for a query already built (the TUI's search bar, `find --why`)."""
        result: FindResult = self.call("find", q=q)
        return result

    # -- for agents: context, reflection, the now note ---------------------------------------
    def context(
        self,
        query: str,
        *,
        top_k: int = 5,
        min_score: float = 0.1,
        max_tokens: int = 2048,
        tags: list[str] | None = None,
        mode: str | None = None,
        header: bool = False,
        history: bool = False,
        include_system: bool = False,
    ) -> ContextResult:
        """The top passages for `query`, each followed by `[Source: ADDRESS]`, in at most
        `max_tokens` words (see `keepui_engine.search.context`). Current versions only unless
        `history`; the now notes and system documents only with `include_system`."""
        from keepui_engine.client import agents

        return agents.context(
            self,
            query,
            top_k,
            min_score,
            max_tokens,
            tags,
            mode,
            header,
            agents.Scope(history, include_system),
        )

    def reflect(
        self,
        query: str,
        *,
        kind: str = "summary",
        top_k: int = 5,
        tags: list[str] | None = None,
        mode: str | None = None,
        store_back: bool = False,
        history: bool = False,
        include_system: bool = False,
    ) -> Reflection:
        """A summary (or 3-5 key points) of the top hits for `query`; `store_back` saves it as
        an item tagged type=reflection, query=QUERY and source=ID for each hit. Current
        versions only unless `history`; now notes and system documents only with
        `include_system`."""
        from keepui_engine.client import agents

        return agents.reflect(
            self,
            query,
            kind,
            top_k,
            tags,
            mode,
            store_back,
            agents.Scope(history, include_system),
        )

    def now(
        self, text: str | None = None, *, scope: str | None = None, tags: list[str] | None = None
    ) -> Item:
        """The working-intentions note (`now`, or `now:SCOPE`); with `text`, replace it (the
        previous text stays as a version). Before the first write: an empty Item, version 0."""
        from keepui_engine.client import agents

        return agents.now(self, text, scope, tags)

    # -- export and import ----------------------------------------------------------------------
    def export(
        self,
        write: Callable[[str], object],
        *,
        versions: bool = False,
        parts: bool = False,
        system: bool = False,
        vectors: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Write the store as JSONL lines (a header, then one item a line, in id order) through
        `write`; return how many items. See `keepui_engine.transfer.records` for the format."""
        from keepui_engine import transfer

        include = {"versions": versions, "parts": parts, "system": system, "vectors": vectors}
        return transfer.export(self, write, include, progress)

    def import_lines(
        self,
        lines: Iterable[str],
        *,
        mode: str = "merge",
        skip_bad: bool = False,
        progress: Callable[[str, int, int], None] | None = None,
    ) -> ImportReport:
        """Read an export (or plain JSONL of {"text", "id", "tags"}) into the store.

        Every line is checked first: a bad one is a UsageError naming its number and nothing
        is written, unless `skip_bad` (merge mode only) skips it. See `transfer.importing`.
        """
        from keepui_engine import transfer

        return transfer.import_lines(self, lines, mode, skip_bad, progress)

    # -- flows --------------------------------------------------------------------------------
    def flows(self) -> list[FlowInfo]:
        """The state docs that can be run: the shipped ones and the store's `.state/NAME`."""
        from keepui_engine.client.flow_bindings import FlowHost

        return FlowHost(self).flows()

    def get_context(self, doc_id: str, *, similar: int = 5) -> dict[str, Any]:
        """A document with what to show beside it: {"id", "item", "similar", "edges",
        "parts", "versions", "meta"} (see `doc_context`)."""
        from keepui_engine.client.doc_context import get_context

        if not doc_id:
            raise UsageError("get-context needs an id.")
        return get_context(self, doc_id, similar)

    def state_diagram(self) -> str:
        """A Mermaid stateDiagram-v2 of every state doc (shipped and stored) and its
        transitions."""
        from keepui_engine.client.flow_bindings import FlowHost
        from keepui_engine.flows.diagram import mermaid

        with self.session():
            host = FlowHost(self, install=False)
            docs = [host.load_flow(info.name) for info in host.flows()]
        return mermaid(docs)

    def reset_system_docs(self) -> list[dict[str, str]]:
        """Store every shipped state doc as `.state/NAME` again (a new version where the
        stored one differs, so edits stay in its history); [{"id", "action"}]."""
        from keepui_engine.client.flow_bindings import STATE_PREFIX, FlowHost
        from keepui_engine.flows import loader

        with self.session():
            host = FlowHost(self, install=False)
            return [
                {"id": STATE_PREFIX + name, "action": host.install_doc(name)}
                for name in loader.builtin_names()
            ]

    def flow_defaults(self) -> dict[str, Any]:
        """The params a flow starts with (shipped defaults, then keepui.toml [flows]), and
        `budget`."""
        from keepui_engine.client.flow_bindings import DEFAULT_PARAMS

        return {**DEFAULT_PARAMS, **self.settings.flow_params, "budget": self.settings.flow_budget}

    def run_flow(
        self,
        name: str,
        params: dict[str, Any] | None = None,
        *,
        budget: int | None = None,
        doc: str | None = None,
        cursor: str | None = None,
        on_tick: Callable[[FlowTick], None] | None = None,
        gate: Callable[[int, str, dict[str, Any]], bool] | None = None,
    ) -> FlowResult:
        """Run a state doc (query-resolve, …) tick by tick over this store.

        Args:
            name: The state doc to start with (the store's `.state/NAME`, else a shipped one).
            params: Params such as `query`, `tags` and thresholds; keepui.toml [flows] and the
                shipped defaults fill the rest (not on resume: the cursor holds them).
            budget: Most ticks for this run; default keepui.toml [flows] budget.
            doc: YAML of a state doc to run as `name` instead of a stored or shipped one.
            cursor: Resume a stopped run (with a fresh budget).
            on_tick: Called with each FlowTick as it happens (on the calling thread).
            gate: Called before each tick; return False to stop (step mode blocks in it).

        Raises:
            NotFound: No state doc of that name. FlowError: a malformed doc or param.
        """
        from keepui_engine.client.flow_bindings import run

        return run(self, name, params, budget, doc, cursor, on_tick, gate)

    def why(self, doc_id: str, q: FindQuery) -> Any:
        """Where `doc_id` ranked in each channel for the query `q`, and which step removed it."""
        return self.call("why", q=q, doc_id=doc_id)

    def list_items(
        self,
        prefix: str | None = None,
        *,
        tags: list[str] | None = None,
        sort: str = "updated",
        limit: int = 20,
        any_tags: dict[str, list[str]] | None = None,
        include_system: bool = False,
    ) -> list[Item]:
        """Current documents by prefix and tags, in the asked order; `any_tags` (facet
        selections) needs, for each key, one of its values. System documents (ids starting
        with `.`) only with `include_system` or a prefix starting with `.`."""
        result: list[Item] = self.call(
            "list_items",
            prefix=prefix,
            tags=list(tags or []),
            sort=sort,
            limit=limit,
            any_tags=any_tags,
            include_system=include_system,
        )
        return result

    def facets(
        self,
        *,
        tags: list[str] | None = None,
        any_tags: dict[str, list[str]] | None = None,
        ids: list[str] | None = None,
        prefix: str | None = None,
    ) -> dict[str, dict[str, int]]:
        """Tag KEY -> VALUE -> how many current documents carry it (system tags and system
        documents left out), over the documents passing the filters, or over `ids` (a result
        set)."""
        result: dict[str, dict[str, int]] = self.call(
            "facets", tags=list(tags or []), any_tags=any_tags, ids=ids, prefix=prefix
        )
        return result

    # -- relevance judgments -----------------------------------------------------------------------
    def judge(self, query: str, doc_id: str, grade: int) -> Judgment:
        """Record that `doc_id` is relevant to `query` with `grade` 0..3 (latest wins)."""
        result: Judgment = self.call("judge", query=query, doc_id=doc_id, grade=grade)
        return result

    def unjudge(self, query: str, doc_id: str) -> bool:
        """Forget the judgment of `doc_id` for `query`; whether there was one."""
        result: bool = self.call("unjudge", query=query, doc_id=doc_id)
        return result

    def judgments(self, query: str | None = None) -> list[Judgment]:
        """Every judgment, or those of one query."""
        result: list[Judgment] = self.call("judgments", query=query)
        return result

    def judged_score(self, query: str, ids: list[str]) -> dict[str, Any]:
        """How a ranked list fares on the query's judgments: {"judged": shown ids judged,
        "shown", "relevant": judged relevant anywhere, "ndcg@10": None without judgments}."""
        from keepui_engine.search.evaluation import ndcg_at

        grades = {j.id: j.grade for j in self.judgments(query)}
        return {
            "judged": sum(i in grades for i in ids),
            "shown": len(ids),
            "relevant": sum(g > 0 for g in grades.values()),
            "ndcg@10": ndcg_at(ids, grades) if grades else None,
        }

    @property
    def tuning(self) -> Tuning:
        """Query sets, search configurations, experiments and the optimizer (see
        `keepui_engine.client.tuning`)."""
        from keepui_engine.client.tuning import Tuning

        return Tuning(self)

    def eval_judged(self, modes: list[str] | None = None, progress: Any = None) -> EvalResult:
        """Score every mode on this store's judged queries (nDCG@10, R@100, MRR@10)."""
        from keepui_engine.search.evaluation import evaluate_judged

        return evaluate_judged(self, modes, progress)

    def tag(
        self, doc_id: str, *, tags: list[str] | None = None, remove: list[str] | None = None
    ) -> PutResult:
        """Set (`KEY=VALUE`) or remove tags, archiving the previous version."""
        result: PutResult = self.call(
            "tag", doc_id=doc_id, tags=list(tags or []), remove=list(remove or [])
        )
        return result

    def delete(self, doc_id: str, *, purge: bool = False) -> DeleteResult:
        """Revert to the previous version (or delete); `purge` removes all history."""
        result: DeleteResult = self.call("delete", doc_id=doc_id, purge=purge)
        return result

    def diff(self, address: str, a: int | None = None, b: int | None = None) -> VersionDiff:
        """Compare two versions of a document, line by line with changed words marked.

        Args:
            address: `ID`, or `ID@V{N}` (N is then the left version unless `a` is given).
            a: Offset of the left version (0 current, 1 previous, -1 oldest); default 1.
            b: Offset of the right version; default 0 (current).
        """
        result: VersionDiff = self.call("diff", address=address, a=a, b=b)
        return result

    def record_search(self, q: FindQuery, ids: list[str]) -> SearchRecord:
        """Add a search and the ids it returned to the store's search history."""
        result: SearchRecord = self.call("record_search", q=q, ids=list(ids))
        return result

    def searches(self, limit: int = 100) -> list[SearchRecord]:
        """The search history, newest first."""
        result: list[SearchRecord] = self.call("searches", limit=limit)
        return result

    def stats(self) -> Stats:
        """Counts and size of the store."""
        result: Stats = self.call("stats")
        return result

    def change_feed(self) -> ChangeFeed | None:
        """A feed whose `wait(timeout)` returns as soon as any process commits a write, on a
        PostgreSQL store (LISTEN/NOTIFY on a connection of its own; `close()` it after). None
        on a DuckDB store, where every other process's write comes through this one's server
        or its lock: poll `stats()` there."""
        if self.settings.url is None:
            return None
        from keepui_engine.store.postgres.notify import ChangeFeed

        try:
            return ChangeFeed(self.settings.url)
        except KeepuiError:
            raise
        except Exception as exc:
            raise _unexpected("change_feed", exc) from exc

    def reindex(self, progress: Any = None) -> Stats:
        """Re-embed everything with the model keepui.toml names (after a model change);
        `progress(done, total)` after each committed batch (when this process does the work).
        An interrupted run keeps its finished batches, and the next run skips them."""
        result: Stats = self.call("reindex", progress=progress)
        return result

    def doctor(self, *, repair: bool = False) -> DoctorReport:
        """Check every file of the store (on PostgreSQL, its derived tables) against what it
        derives from; with `repair`, rebuild what can be rebuilt. Damage is in the report,
        check by check (`healthy` says whether any remains), not raised.

        Raises:
            StoreError: The store cannot be opened at all (the message says what to do).
        """
        if self.settings.url is None:
            from keepui_engine.ops.doctor import missing_database

            gone = missing_database(self.settings.store)  # opening would create an empty one
            if gone is not None:
                return gone
        result: DoctorReport = self.call("doctor", repair=repair)
        return result


def open_workbench(
    store: str | os.PathLike[str] | None = None,
    *,
    own: bool = False,
    embedder: Embedder | None = None,
    create: bool = True,
    lean: bool = False,
) -> Workbench:
    """Open a store directory (created with a default keepui.toml on first use).

    Args:
        store: The store directory; None means $KEEPUI_STORE or ~/.keepui.
        own: Hold the store for the Workbench's lifetime (see Workbench).
        embedder: An embedder to use instead of the one keepui.toml names (tests).
        create: Create the store when there is none; False raises StoreError instead
            (commands that only read must not turn a mistyped path into an empty store).
        lean: A long-lived server: keep memory small (the model's batches without torch).
    """
    url = store_url(store)
    if not create and url is not None:
        from keepui_engine.store.postgres.store import is_url, redact, settings_text

        # a directory whose keepui.toml points at the URL is a store, as on DuckDB
        given = is_url(str(store or os.environ.get("KEEPUI_STORE") or ""))
        if given and settings_text(url) is None:
            raise StoreError(
                f"no keepui store in {redact(url)}",
                "No store",
                hint="create one with keepui put, or check --store / KEEPUI_STORE",
            )
    elif not create:
        root = resolve_store(store)
        if not store_exists(root):
            raise StoreError(
                f"no store at {root}",
                "No store",
                hint="create one with keepui put, or check --store / KEEPUI_STORE",
            )
    return Workbench(load_settings(store), own=own, embedder=embedder, lean=lean)

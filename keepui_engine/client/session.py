"""How the Workbench reaches a store: it owns it, or calls the process that does, or holds
the store lock for one call (routing, serving, sessions)."""

from __future__ import annotations

import atexit
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from keepui_engine.core import owner, server, wire
from keepui_engine.core.config import Settings
from keepui_engine.core.errors import KeepuiError, StoreError, UsageError
from keepui_engine.core.gate import Gate
from keepui_engine.core.locking import StoreLock
from keepui_engine.core.writable import not_writable
from keepui_engine.ops import registry

if TYPE_CHECKING:
    from keepui_engine.core.gate import Mode
    from keepui_engine.ops.engine import Engine
    from keepui_engine.providers.base import Embedder

# Seconds after a client's write before the background worker takes the next task: a client's
# `put DIR` sends batch after batch, and its reading between them is not idleness.
FOREGROUND_GRACE_S = 3.0
EXIT_JOIN_S = 10.0  # longest that a normal exit waits for a task close() abandoned


# The stores this process serves: another Workbench of this process on one of them (a
# command a client handed to `keepui serve`) calls the serving one directly, not its socket.
_SERVING: dict[Path, StoreAccess] = {}


class _NoLock:
    """The StoreLock of a PostgreSQL store: there is nothing to hold."""

    def acquire(self, *args: Any, **kwargs: Any) -> bool:
        return True

    def release(self) -> None:
        return None

    def holder(self) -> None:
        return None


def _unexpected(what: str, exc: Exception) -> StoreError:
    """A non-keepui exception, wrapped so that only KeepuiErrors leave the facade."""
    if "corrupt" in str(exc).lower():  # DuckDB found a block whose checksum fails
        return StoreError(
            f"{what} failed: the database file is damaged ({type(exc).__name__}: {exc}). "
            "Restore keepui.duckdb from a backup; `keepui doctor` names the tables it can "
            "still read, and `keepui export` saves what they hold.",
            "Database damaged",
        )
    return StoreError(
        f"{what} failed unexpectedly: {type(exc).__name__}: {exc}. The store was not "
        "changed by the failed step; please report this with the command you ran.",
        "Unexpected error",
    )


class StoreAccess:
    """Every user-visible operation on one store.

    A Workbench either owns the store (a long-lived process such as the TUI or `keepui serve`:
    it holds the store lock and serves other processes over a socket) or is a client: each call
    goes to the owner's socket when one is up, else takes the store lock for that call alone.

    Args:
        settings: The store's settings.
        own: Hold the store for the Workbench's lifetime and keep everything loaded.
        embedder: An embedder to use instead of the one keepui.toml names (tests).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        own: bool = False,
        embedder: Embedder | None = None,
        lean: bool = False,
    ) -> None:
        self.settings = settings
        self._embedder = embedder
        self._lean = lean  # a long-lived server: an embedder that keeps memory small
        # PostgreSQL: every process connects directly; no lock, no socket server
        self._pg = settings.url is not None
        self._lock: Any = _NoLock() if self._pg else StoreLock(settings.store)
        self._engine: Engine | None = None
        self._server: server.StoreServer | None = None
        self._worker: Any = None
        self._stopped: Any = None  # the worker, once close() has stopped it
        # One DuckDB connection: the owner's own threads (TUI workers), socket requests and
        # the queue worker take turns on it (reads while a writer computes: see work.gate).
        self._gate = Gate()
        # Foreground writes in flight and when the last one ended: background work waits for
        # them (a put from another process must not share two cores with summaries).
        self._foreground = 0
        self._foreground_end = 0.0
        self._last_work = time.monotonic()  # when the queue worker last ran (or looked)
        # Why the store cannot be written, while this Workbench has it open read-only.
        self._read_only: str | None = None
        if own and self._pg:
            self._engine = self._open_engine()
        elif own:
            why = not_writable(settings.store)
            if why is not None:
                raise StoreError(
                    f"cannot hold {settings.store} to serve it: {why}. Reading commands "
                    "(find, get, list, stats, export) work on it without a server.",
                    "Store is read-only",
                )
            if server.is_up(settings.store) and not self._took_over(settings.store):
                raise StoreError(
                    f"another keepui process (pid {self._lock.holder() or '?'}) already holds "
                    f"{settings.store} and serves it; use that one, or stop it first.",
                    "Store already open",
                )
            self._lock.acquire(settings.lock_timeout_s)
            self._engine = self._open_engine()

    @staticmethod
    def _took_over(store: Path) -> bool:
        """Stop the server keepui started on its own for the store (an owner started on
        purpose, the workbench or `keepui serve`, takes over from it); False when the store's
        server is not one of those, or did not stop."""
        info = owner.hello(str(store))
        if info is None or info.get("kind") != "auto":
            return False
        owner.stop(str(store))
        return not server.is_up(store)

    @property
    def store(self) -> Path:
        """The store directory."""
        return self.settings.store

    @property
    def owns_store(self) -> bool:
        """Whether this Workbench holds the store."""
        return self._engine is not None

    @property
    def embedder(self) -> Embedder:
        """The embedder, created on first use."""
        if self._embedder is None:
            from keepui_engine.providers import create_embedder

            self._embedder = create_embedder(self.settings, lean=self._lean)
        return self._embedder

    def _open_engine(self, check_model: bool = True, read_only: bool = False) -> Engine:
        from keepui_engine.ops.engine import Engine
        from keepui_engine.store.duckdb.readonly import ReadOnlyStore
        from keepui_engine.store.duckdb.store import Store

        emb = self.embedder
        if self.settings.url is not None:
            from keepui_engine.core.config import seed_toml
            from keepui_engine.store.postgres.store import PgStore

            pg = PgStore(
                self.settings.url,
                emb.name,
                emb.dim,
                check_model=check_model,
                settings_toml=seed_toml(self.settings.store),
                exact_max=self.settings.exact_max_vectors,
            )
            return Engine(self.settings, pg, emb)
        store = (ReadOnlyStore if read_only else Store)(
            self.settings.store,
            emb.name,
            emb.dim,
            self.settings.exact_max_vectors,
            check_model=check_model,
        )
        return Engine(self.settings, store, emb)

    def call(self, op: str, **args: Any) -> Any:
        """Run one operation (a name in ops.registry) wherever the store is: in this process,
        in its owner over the socket, or here under the store lock for this call alone."""
        try:
            return self._route(op, args)
        except KeepuiError:
            raise
        except Exception as exc:  # the one error model: nothing else leaves the facade
            raise _unexpected(op, exc) from exc

    def _route(self, op: str, args: dict[str, Any]) -> Any:
        if self._stopped is not None:  # a late call from a thread of a closed owner
            raise StoreError(f"cannot {op}: this keepui process has closed the store.", "Closed")
        spec = registry.get(op)
        if self._engine is None and self._pg:  # connect on first use, then keep the connection
            self._engine = self._open_engine(check_model=not spec.self_checking)
        if self._engine is not None:
            if self._read_only is not None:
                self._refuse_write(op)
            return self._owned(op, args, "read" if spec.reads else "write")
        store = self.settings.store
        serving = _SERVING.get(store)
        if serving is not None and serving._server is not None:  # we serve it: no socket
            with serving._in_foreground(spec.client_write):
                return serving._owned(op, args, "read" if spec.reads else "write")
        wait = self.settings.answer_timeout_s
        expected = wire.expect(str(store))
        started = False
        while True:
            sock = server.connect(store, timeout=wait)
            if sock is None and not started and self._may_start_owner(op):
                started = True  # once: an owner that does not start leaves us in-process
                if owner.ensure(str(store), owner.say):
                    continue
            if sock is not None:
                # callbacks (a progress function) stay here
                sent = {k: registry.encode(v) for k, v in args.items() if not callable(v)}
                try:
                    return spec.decode(server.call(sock, op, sent, wait, expected))
                except server.Retry:
                    continue  # the server is stopping: its lock frees up in a moment
                except owner.Stale as exc:
                    self._replace_stale(exc)
                    continue
            why = not_writable(store)
            if why is not None:  # nobody can hold it: read it as it is, without the lock
                self._read_only = why
                try:
                    self._refuse_write(op)
                    with self._read_only_engine() as engine:
                        return registry.run(engine, op, args)
                finally:
                    self._read_only = None
            if self._lock.acquire(
                self.settings.lock_timeout_s, give_up=lambda: server.is_up(store)
            ):
                with self._held(check_model=not spec.self_checking) as engine:
                    return registry.run(engine, op, args)

    def _may_start_owner(self, op: str) -> bool:
        """Whether this call starts the store's owner when none runs: it needs the model or
        queues work, and neither `KEEPUI_NO_SERVER` nor a read-only store forbids it."""
        return registry.get(op).starts_owner and not wire.no_server() and not self._pg

    def _replace_stale(self, exc: owner.Stale) -> None:
        """Stop a server of another keepui build or keepui.toml (it ran nothing)."""
        store = str(self.settings.store)
        info = owner.hello(store) or {}
        if info.get("kind") not in ("auto", "serve"):  # the workbench: never stopped for us
            raise StoreError(
                f"the keepui process holding {store} (pid {info.get('pid', '?')}) runs "
                f"another keepui build or read another keepui.toml ({exc}); close it and run "
                "the command again.",
                "Store held by another keepui",
            )
        if owner.say is not None:
            owner.say(f"keepui: replacing the server of {store} ({exc} changed)")
        owner.stop(store)
        if server.is_up(self.settings.store):
            raise StoreError(
                f"the keepui server of {store} (pid {info.get('pid', '?')}) is another keepui "
                f"build or read another keepui.toml ({exc}) and did not stop; stop it (keepui "
                "serve --stop, or kill it) and run the command again.",
                "Server not stopping",
            )

    def _refuse_write(self, op: str) -> None:
        """Raise for an operation that writes, while the store is open read-only."""
        if not registry.get(op).answers_read_only:
            raise StoreError(
                f"cannot {op.split('_')[0]}: {self._read_only}, so keepui opened the store "
                "read-only. Reading commands (find, get, list, stats, export) work; to change "
                "it, make it writable (chmod u+w, or remount it read-write) or copy it "
                "somewhere writable.",
                "Store is read-only",
            )

    @contextmanager
    def _read_only_engine(self) -> Iterator[Engine]:
        """An engine on the store opened read-only (no lock: nobody can write it either)."""
        engine = self._open_engine(read_only=True)
        try:
            yield engine
        finally:
            engine.store.close()

    def _owned(
        self, op: str, args: dict[str, Any], mode: Mode, ready: Callable[[], None] | None = None
    ) -> Any:
        """Run an operation on the engine this process holds, in its turn (`ready` is called
        once the turn has come, before anything runs: it may still refuse the request)."""
        with self._gate.enter(mode):
            if ready is not None:
                ready()
            result = registry.run(self._engine, op, args)
        if self._worker is not None and registry.get(op).client_write:
            self._worker.wake()
        return result

    # -- serving ------------------------------------------------------------------------------
    def serve(
        self,
        *,
        worker: bool = True,
        on_note: Callable[[str], None] | None = None,
        kind: str = "workbench",
        front: dict[str, Callable[[dict[str, Any], Callable[[], None]], Any]] | None = None,
    ) -> None:
        """Answer other processes on the store socket and drain the queue (owners only).

        Args:
            worker: Run the queue worker too.
            on_note: Called with a line about what the server did on its own (a request
                dropped because its client had gone); for the owner's log.
            kind: `workbench` (a front end holding the store), `serve` (`keepui serve`) or
                `auto` (started by a command, see `owner`): a server (`serve`, `auto`) refuses
                clients of another build or keepui.toml, and an `auto` one gives the store up
                to any other owner that starts.
            front: Requests the front end answers itself (name -> callable(args, ready)).
        """
        if self._engine is None:
            raise UsageError("only a Workbench that owns the store can serve it.")
        if self._pg:  # other processes reach PostgreSQL themselves: only the worker runs
            if worker:
                self.start_worker()
            return
        self._server = server.StoreServer(self.settings.store, self._dispatch, on_note=on_note)
        self._server.front.update(front or {})
        started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        store = str(self.settings.store)
        if kind != "workbench":
            self._server.stamp = wire.expect(store)
        self._server.about = lambda: {
            "kind": kind,
            "store": store,
            "version": wire.VERSION,
            "model": self.settings.embedding_model,
            "started": started,
            "log": str(self.settings.store / owner.LOG_NAME) if kind == "auto" else None,
        }
        self._server.start()
        _SERVING[self.settings.store] = self
        if worker:
            self.start_worker()

    @property
    def stop_asked(self) -> bool:
        """Whether a client asked this owner's server to stop (`keepui serve --stop`, an
        owner taking over from a server keepui started on its own)."""
        return self._server is not None and self._server.stop_asked.is_set()

    def idle_seconds(self) -> float:
        """How long this owner has had nothing to do: no request from another process and
        no queued task run (0 while either runs)."""
        served = self._server.idle_for() if self._server is not None else float("inf")
        return min(served, time.monotonic() - self._last_work)

    def start_worker(self, on_result: Any = None) -> None:
        """Start the thread that drains the pending queue (owners only; idempotent)."""
        if self._engine is None:
            raise UsageError("only a Workbench that owns the store runs a worker.")
        if self._worker is None:
            from keepui_engine.work.worker import WorkerThread

            self._worker = WorkerThread(self._background_step, on_result=on_result)
            self._worker.start()

    def _background_step(self, me: str, live: list[str]) -> dict[str, Any] | None:
        """One queued task, unless a put is running or ended less than FOREGROUND_GRACE_S ago."""
        if self._foreground or time.monotonic() - self._foreground_end < FOREGROUND_GRACE_S:
            return None
        if self._engine is None:
            return None  # closing
        # a background task lets go of the store while it summarizes or embeds (work.gate)
        args = {"owner": me, "live_owners": live}
        try:
            result: dict[str, Any] | None = self._owned("work_once", args, "background")
        except KeepuiError:
            raise
        except Exception as exc:
            self._last_work = time.monotonic()
            raise _unexpected("work_once", exc) from exc
        if result is not None:  # a task ran: the owner was not idle
            self._last_work = time.monotonic()
        return result

    @contextmanager
    def _in_foreground(self, counts: bool = True) -> Iterator[None]:
        """Mark a write done for another process, so the background worker waits for it."""
        if not counts:
            yield
            return
        self._foreground += 1
        try:
            yield
        finally:
            self._foreground -= 1
            self._foreground_end = time.monotonic()

    def _dispatch(self, op: str, args: dict[str, Any], ready: Callable[[], None]) -> Any:
        spec = registry.get(op)  # UsageError for a name that is not an operation
        mode: Mode = "read" if spec.reads else "write"
        with self._in_foreground(spec.client_write):
            return registry.encode(self._owned(op, spec.decode_args(args), mode, ready))

    def warm_up(self) -> None:
        """Load the model and the vector index now rather than on the first request."""
        self.embedder.embed(["warm up"])
        with self._gate.enter("write"):
            if self._engine is not None:
                _ = self._engine.store.index

    def close(self) -> None:
        """Stop the worker and the server, close the store and release it.

        Waits for at most one short store step of the worker, never for a task: a task in
        its slow step (a summary being computed) is abandoned, its claim given back to the
        queue (the attempt uncounted: it runs again next time), and its thread drops what it
        computes (`background_running` says whether it is still at it).
        """
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.request_stop()
            self._gate.close()
        if self._server is not None:
            _SERVING.pop(self.settings.store, None)
            self._server.stop()
            self._server = None
        with self._gate.enter("write"):
            if self._engine is not None:
                try:
                    if worker is not None:
                        from keepui_engine.work.service import give_back

                        give_back(self._engine, worker.owner)
                    self._engine.flush()
                finally:
                    self._engine.store.close()
                    self._engine = None
        self._lock.release()
        self._stopped = worker or self._stopped
        if worker is not None and worker.is_alive():  # a process ending while it is in the
            atexit.register(worker.join, EXIT_JOIN_S)  # model may abort (os._exit skips this)

    @property
    def background_running(self) -> bool:
        """Whether the queue worker of a closed owner is still computing an abandoned task (it
        will not touch the store again: a front end may exit without waiting for it)."""
        return self._stopped is not None and self._stopped.is_alive()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- operations -----------------------------------------------------------------------------
    @contextmanager
    def session(self, runs: str | None = None) -> Iterator[None]:
        """Hold the store for a run of many calls when nobody serves it (one model load).

        Args:
            runs: An operation the run makes: one that starts the store's owner
                (`starts_owner` in ops.registry) starts it now, and every call goes to it.
        """
        if self._pg or self._engine is not None or server.is_up(self.settings.store):
            yield
            return
        if (
            runs is not None
            and self._may_start_owner(runs)
            and owner.ensure(str(self.settings.store), owner.say)
        ):
            yield
            return
        why = not_writable(self.settings.store)
        if why is not None:
            with self._read_only_engine() as engine:
                self._engine, self._read_only = engine, why
                try:
                    yield
                finally:
                    self._engine, self._read_only = None, None
            return
        if not self._lock.acquire(
            self.settings.lock_timeout_s, give_up=lambda: server.is_up(self.settings.store)
        ):
            yield  # a server came up meanwhile: each call goes to it
            return
        with self._held() as engine:
            self._engine = engine
            try:
                yield
            finally:
                self._engine = None

    @contextmanager
    def _held(self, check_model: bool = True) -> Iterator[Engine]:
        """An engine on the store whose lock this process has just taken: flushed when the
        work succeeds, closed and the lock released however it ends."""
        engine = None
        try:
            engine = self._open_engine(check_model=check_model)
            yield engine
            engine.flush()
        finally:
            if engine is not None:
                engine.store.close()
            self._lock.release()

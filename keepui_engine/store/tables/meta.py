"""SQL for `meta`: the embedding model and dimension a store's vectors were made with."""

from __future__ import annotations

from typing import Any

from keepui_engine.core.errors import StoreError


def check_model(store: Any, settings: str, reindex: str) -> None:
    """Record the store's model on first open; refuse a model other than the recorded one
    while vectors exist (a store without any takes the new one).

    Args:
        store: The open store (con, root, model, dim, set_model).
        settings: Where the model is set, as the message names it ("keepui.toml", ...).
        reindex: The reindex command to tell.

    Raises:
        StoreError: The settings ask for another model than the vectors were made with.
    """
    meta = dict(store.con.execute("SELECT key, value FROM meta").fetchall())
    if not meta:
        store.con.execute(
            "INSERT INTO meta VALUES ('model', $1), ('dim', $2) ON CONFLICT DO NOTHING",
            [store.model, str(store.dim)],
        )
        return
    (keys,) = store.con.execute("SELECT count(*) FROM vector_keys").fetchone() or (0,)
    if not keys:
        store.set_model(store.model, store.dim)
        return
    if meta.get("model") != store.model or meta.get("dim") != str(store.dim):
        raise StoreError(
            f"the store {store.root} was indexed with {meta.get('model')} "
            f"({meta.get('dim')} dimensions) but {settings} now asks for {store.model} "
            f"({store.dim}). Run `{reindex}` to re-embed everything with the new model, or set "
            f"the old model back in {settings}.",
            "Embedding model changed",
        )

"""Opening a store's settings: keepui.toml in its directory, or the `settings` table of a
PostgreSQL store (shared by every process and machine that opens it). The parsing and the
defaults are core.config's; reading them from a database is why this sits above the store."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from keepui_engine.core.config import (
    CONFIG_NAME,
    DEFAULT_TOML,
    Settings,
    _from_toml,
    _parsed,
    resolve_store,
    seed_toml,
    store_url,
)
from keepui_engine.core.errors import ConfigError
from keepui_engine.core.private import make_private_dir


def load_settings(store: str | os.PathLike[str] | None = None, *, create: bool = True) -> Settings:
    """Read (and on first use create) keepui.toml in the store directory.

    Args:
        store: Store directory; None means $KEEPUI_STORE or ~/.keepui.
        create: Create the directory and a commented keepui.toml when missing.

    Returns:
        The settings.

    Raises:
        ConfigError: keepui.toml cannot be parsed or holds a wrong value.
    """
    url = store_url(store)
    if url is not None:
        return _url_settings(url, store)
    root = resolve_store(store)
    path = root / CONFIG_NAME
    if not path.exists():
        if not create:
            return Settings(store=root)
        try:
            make_private_dir(root)
            tmp = path.with_suffix(".toml.tmp")
            tmp.write_text(DEFAULT_TOML, encoding="utf-8")
            os.replace(tmp, path)
        except OSError as exc:
            from keepui_engine.core.errors import StoreError

            raise StoreError(
                f"cannot create the store at {root}: {exc}. "
                "Choose a writable directory with --store."
            ) from exc
    try:
        data = _parsed(path)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}. Fix the file or delete it to get the defaults.") from exc
    return _from_toml(data, str(path), root)


def _url_settings(url: str, store: str | os.PathLike[str] | None) -> Settings:
    """Settings of a PostgreSQL store: its `settings` table, shared by every process and
    machine that opens it (the defaults for a new database)."""
    import tempfile

    from keepui_engine.store.postgres.store import redact, settings_text

    text = settings_text(url) or seed_toml(store)
    where = f"the settings table of {redact(url)}"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: {exc}. Fix the row named keepui.toml.") from exc
    raw = store or os.environ.get("KEEPUI_STORE")  # a bare URL has no directory: a placeholder
    given = raw is not None and str(raw) == url
    root = Path(tempfile.gettempdir()) / "keepui-pg" if given else resolve_store(store)
    return _from_toml(data, where, root, url)

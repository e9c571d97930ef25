"""A store is private: its directories 0700 and its files 0600, whatever the umask.

keepui's own processes (the CLI, the workbench, `serve`, `mcp`) run with umask 077, so every
file they write, the database's WAL, logs and exports included, is created private. A program
that embeds the engine keeps its own umask; for it `tighten` closes the files keepui knows of
each time the store is opened, and the store directory is created 0700 (nobody else can
reach a file inside a 0700 directory, whatever the file's own mode).
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False  # the CLI's fast path imports this module: no typing, pathlib, contextlib
if TYPE_CHECKING:
    from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600
UMASK = 0o077

# The store's own entries (a store may live in a folder that also holds other files: those
# are left as they are).
_OWN = ("keepui.sock", "store.lock", "store.queue", "bm25")
_OWN_PREFIXES = ("keepui.duckdb", "keepui.toml", "vectors.", "keepui.log")


def use_private_umask() -> None:
    """Make every file this process creates from now on private (keepui's own processes)."""
    os.umask(UMASK)


def make_private_dir(path: str | Path) -> None:
    """Create a directory (and missing parents) 0700, whatever the umask; leave an existing
    one's mode alone unless keepui just created it."""
    existed = os.path.exists(path)
    os.makedirs(path, mode=DIR_MODE, exist_ok=True)
    if not existed:
        os.chmod(path, DIR_MODE)


def is_own(name: str) -> bool:
    """Whether a name in the store directory is one of keepui's own files."""
    return name in _OWN or name.startswith(_OWN_PREFIXES)


def tighten(root: str | Path) -> None:
    """Close keepui's own files in a store to their owner (0600, directories 0700), and the
    store directory itself when it holds nothing else; files the user keeps beside them are
    not touched. Best effort: a file that vanished or cannot be changed (a read-only mount,
    another owner) is left."""
    import contextlib

    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for entry in entries:
        if is_own(entry.name):
            _close(entry.path)
    if entries and all(is_own(e.name) for e in entries):  # a folder of keepui's alone
        with contextlib.suppress(OSError):
            if os.stat(root).st_mode & 0o077:
                os.chmod(root, DIR_MODE)


def _close(path: str) -> None:
    import contextlib

    with contextlib.suppress(OSError):
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            return
        if stat.S_ISDIR(info.st_mode):
            if info.st_mode & 0o077:
                os.chmod(path, DIR_MODE)
            for child in os.scandir(path):
                _close(child.path)
        elif info.st_mode & 0o077:
            os.chmod(path, FILE_MODE)

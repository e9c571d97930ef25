"""vectors.json: the manifest of the vector files (generation, rows, CRC-32s, stat stamps, the
HNSW graph's checksum, the highest committed key) and the checks made against it."""

from __future__ import annotations

import re
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from keepui_engine.core.errors import StoreError
from keepui_engine.store.duckdb import manifest

META_NAME = "vectors.json"
BLOCK_ROWS = 20000  # rows read at a time when checking values
_DATA = re.compile(r"vectors\.(\d+)\.(keys|f32|hnsw)$")


def attested_max_key(root: Path) -> int:
    """The highest key the vector files say the database committed (0: none, or unknown).

    Keys are appended after their transaction commits, so a database whose key sequence ends
    below it has lost committed writes (its WAL was deleted or cut)."""
    meta = manifest.read_json(root / META_NAME) or {}
    value = meta.get("max_key", 0)
    return value if isinstance(value, int) else 0


class VectorFiles:
    """The manifest of one store's vector files, and where those files are.

    Args:
        root: The store directory.
        model: Embedding model name the vectors come from.
        dim: Vector dimension.
        readonly: Never write or delete anything (`keepui doctor` without --repair).
    """

    def __init__(self, root: Path, model: str, dim: int, *, readonly: bool = False) -> None:
        self.root, self.model, self.dim, self.readonly = root, model, dim, readonly
        self.damage: str | None = None  # what makes the files unusable, found on reading
        meta = manifest.read_json(root / META_NAME)
        old = [int(m.group(1)) for p in root.glob("vectors.*") if (m := _DATA.match(p.name))]
        if meta is None and old:
            self.damage = f"{META_NAME} is missing or unreadable"
        gen = (meta or {}).get("generation")
        if (
            meta is None
            or meta.get("model") != model
            or meta.get("dim") != dim
            or not isinstance(gen, int)
        ):
            meta = self.fresh(max([gen if isinstance(gen, int) else 0, *old]) + 1)
        self.meta: dict[str, Any] = meta

    # -- paths and sizes ----------------------------------------------------------------------
    def paths(self, generation: int | None = None) -> tuple[Path, Path]:
        """(keys file, vectors file) of a generation (the current one by default)."""
        g = self.meta["generation"] if generation is None else generation
        return self.root / f"vectors.{g}.keys", self.root / f"vectors.{g}.f32"

    def graph_path(self, generation: int | None = None) -> Path:
        """The HNSW graph file of a generation (the current one by default)."""
        g = self.meta["generation"] if generation is None else generation
        return self.root / f"vectors.{g}.hnsw"

    def file_rows(self) -> int:
        """Rows in the vectors file, from its size (no loading)."""
        _, vpath = self.paths()
        return vpath.stat().st_size // (4 * self.dim) if vpath.exists() else 0

    def stamps(self) -> list[list[int] | None]:
        """The stat stamps of the keys and vectors files as they are now."""
        return [manifest.stamp(p) for p in self.paths()]

    @property
    def attested(self) -> int | None:
        """Rows the manifest vouches for (None: an older keepui's files, none vouched)."""
        rows = self.meta.get("rows")
        return rows if isinstance(rows, int) else None

    # -- writing the manifest ----------------------------------------------------------------
    def fresh(self, generation: int) -> dict[str, Any]:
        """The manifest of a new, empty generation, written; every other file is dropped."""
        meta = {
            "model": self.model,
            "dim": self.dim,
            "generation": generation,
            "rows": 0,
            "keys_crc": 0,
            "f32_crc": 0,
            "stamps": [None, None],
            "max_key": attested_max_key(self.root),
        }
        if not self.readonly:
            for path in self.root.glob("vectors.*"):
                if _DATA.match(path.name):
                    path.unlink(missing_ok=True)
            manifest.write_json(self.root / META_NAME, meta)
        return meta

    def write(self, *, best_effort: bool = False) -> None:
        """Save the manifest (best effort: a read-only store still answers)."""
        if self.readonly:
            return
        if best_effort:
            manifest.try_write_json(self.root / META_NAME, self.meta)
        else:
            manifest.write_json(self.root / META_NAME, self.meta)

    def appended(self, rows: int, follows: bool, kbytes: bytes, vbytes: bytes, top: int) -> None:
        """Record rows appended after `rows` vouched ones (keys up to `top`, committed). When
        the files were as the manifest left them (`follows`), the checksums carry on over the
        new bytes; otherwise the rows wait as a tail the next open compares with the database."""
        meta = self.meta
        meta["max_key"] = max(int(meta.get("max_key", 0)), top)
        if follows:
            meta["rows"] = rows + len(kbytes) // 8
            meta["keys_crc"] = zlib.crc32(kbytes, meta["keys_crc"])
            meta["f32_crc"] = zlib.crc32(vbytes, meta["f32_crc"])
            meta["stamps"] = self.stamps()
        else:
            meta["stamps"] = [None, None]
        self.write()

    def adopt(self, rows: int) -> None:
        """Vouch for the files' first `rows` rows as they are now (checked by the caller):
        the checksums carry on from the vouched rows (which `verify` found intact) over the
        rows after them."""
        kpath, vpath = self.paths()
        done = min(self.attested or 0, rows)
        widths = {"keys_crc": (kpath, 8), "f32_crc": (vpath, 4 * self.dim)}
        for key, (path, width) in widths.items():
            start = self.meta.get(key, 0) if done else 0
            self.meta[key] = manifest.crc(path, width * (rows - done), start, width * done)
        self.meta["rows"] = rows
        self.meta["stamps"] = self.stamps()
        self.write(best_effort=True)

    def restart(self) -> None:
        """Drop the files and start the next generation empty (the caller fills it)."""
        max_key = int(self.meta.get("max_key", 0))
        self.damage = None
        self.meta = self.fresh(int(self.meta["generation"]) + 1)
        self.meta["max_key"] = max(max_key, int(self.meta["max_key"]))
        self.write()

    def unrepairable(self, problem: str) -> StoreError:
        """The error for damage found where nothing may be written (a read-only store)."""
        return StoreError(
            f"the vector files in {self.root} are damaged ({problem}) and the store cannot be "
            "written here to rebuild them: copy it somewhere writable and run "
            "`keepui doctor --repair` there.",
            "Vector files damaged",
        )

    def next_generation(self, keys: bytes, vecs: bytes) -> tuple[Path, Path]:
        """Write a compacted copy as the next generation and switch to it; the graph goes."""
        meta = {k: v for k, v in self.meta.items() if k not in ("hnsw", "graph")}
        meta["generation"] = self.meta["generation"] + 1
        kpath, vpath = self.paths(meta["generation"])
        kpath.write_bytes(keys)
        vpath.write_bytes(vecs)
        meta["rows"] = len(keys) // 8
        meta["keys_crc"], meta["f32_crc"] = zlib.crc32(keys), zlib.crc32(vecs)
        meta["stamps"] = [manifest.stamp(kpath), manifest.stamp(vpath)]
        old = [*self.paths(), self.graph_path()]
        self.meta = meta
        self.write()
        for path in old:
            path.unlink(missing_ok=True)
        return kpath, vpath

    # -- checking -----------------------------------------------------------------------------
    def verify(self, *, full: bool = False) -> str | None:
        """Why the files' vouched rows differ from the manifest, or None. Sizes always; the
        bytes (CRC-32) only when a stamp moved; with `full`, the bytes and a scan for NaN and
        infinity whatever the stamps say."""
        if self.damage:
            return self.damage
        rows = self.attested or 0
        for path, size in zip(self.paths(), (8 * rows, 4 * self.dim * rows), strict=True):
            got = manifest.stamp(path)
            if rows and got is None:
                return f"{path.name} is missing"
            if got is not None and got[0] < size:
                return f"{path.name} holds {got[0]} bytes, {META_NAME} says {size}"
        if not rows or (not full and self.stamps() == self.meta.get("stamps")):
            return None
        kpath, vpath = self.paths()
        sizes = {"keys_crc": (kpath, 8 * rows), "f32_crc": (vpath, 4 * self.dim * rows)}
        for key, (path, size) in sizes.items():
            if manifest.crc(path, size) != self.meta.get(key):
                return f"{path.name} does not match its checksum in {META_NAME}"
        if not full:  # the checksum vouches for every value: they were finite when written
            return None
        mat = np.memmap(vpath, np.float32, "r", shape=(rows, self.dim))
        for start in range(0, rows, BLOCK_ROWS):
            if not np.isfinite(mat[start : start + BLOCK_ROWS]).all():
                return f"{vpath.name} holds NaN or infinite values"
        return None

    def graph_problem(self, *, full: bool = False) -> str | None:
        """Why the HNSW graph file differs from its manifest entry, or None (no graph is
        fine). A graph an older keepui wrote (no entry) is taken as it is, once."""
        path = self.graph_path()
        if not self.meta.get("hnsw"):
            return None
        if "graph" not in self.meta and path.exists():
            self.meta["graph"] = manifest.entry(path)
            self.write(best_effort=True)
        return manifest.check(path, self.meta.get("graph") or {}, full=full)

    def graph_built(self, rows: int) -> None:
        """Record a graph just saved that covers the first `rows` rows."""
        self.meta = dict(self.meta, hnsw=rows, graph=manifest.entry(self.graph_path()))
        self.write()

    def drop_graph(self) -> None:
        """Forget the HNSW graph (searches are exact until the next write rebuilds it)."""
        self.meta = {k: v for k, v in self.meta.items() if k not in ("hnsw", "graph")}
        self.write(best_effort=True)
        if not self.readonly:
            self.graph_path().unlink(missing_ok=True)

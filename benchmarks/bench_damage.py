"""What checking the vector files for damage costs when a store opens (issue 23, point 6).

Synthetic unit vectors (384 dimensions, the default model's) at 10k and 100k rows, written
through keepui's VectorIndex so that vectors.json holds their manifest. Figures (median of 5
runs, files in the page cache), per size:
  * open_unchecked_ms: VectorIndex.open with the manifest check switched off (what an open
    cost before issue 23);
  * open_ms: the default open: sizes and stat stamps against the manifest (no byte of the
    vectors file is read while the stamps are unchanged);
  * open_restamped_ms: the open after a stamp moved (a copy, `touch`, any write): CRC-32 of
    both files, then the new stamps are kept;
  * doctor_check_ms: the check `keepui doctor` makes whatever the stamps: CRC-32 and a scan
    for NaN and infinity (its comparison with the database is not timed here);
  * crc32_gbps / blake2b_gbps: the two hashes considered, over the vectors file.

Run: .venv/bin/python benchmarks/bench_damage.py [--quick]   (--quick: 10k only)
Writes benchmarks/results/bench_damage.json.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import tempfile
import time
import zlib
from pathlib import Path

import _common as c
import numpy as np

DIM = 384
REPEAT = 5


def build(root: Path, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Write `rows` synthetic unit vectors through VectorIndex; return (keys, vectors)."""
    from keepui_engine.store.duckdb.vectors import VectorIndex

    rng = np.random.default_rng(23)
    keys = np.arange(1, rows + 1, dtype=np.int64)
    vecs = rng.normal(size=(rows, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    index = VectorIndex(root, "synthetic", DIM, exact_max=10**9)
    for at in range(0, rows, 20000):
        index.append(keys[at : at + 20000], vecs[at : at + 20000])
    return keys, vecs


def median_ms(run: object, before: object = None) -> float:
    samples = []
    for _ in range(REPEAT):
        if callable(before):
            before()
        t0 = time.perf_counter()
        run()  # type: ignore[operator]
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1000


def measure(report: c.Report, rows: int) -> None:
    from keepui_engine.store.duckdb.vectors import VectorIndex

    with tempfile.TemporaryDirectory(prefix="bench-damage-") as tmp:
        root = Path(tmp)
        keys, vecs = build(root, rows)
        by_key = dict(zip(keys.tolist(), range(rows), strict=True))

        def fetch(wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            rows_ = [by_key[int(k)] for k in wanted]
            return keys[rows_], vecs[rows_]

        files = VectorIndex(root, "synthetic", DIM).files
        _, vpath = files.paths()

        def opened(check: bool = True) -> None:
            index = VectorIndex(root, "synthetic", DIM, exact_max=10**9)
            if not check:
                index.files.verify = lambda **_: None  # type: ignore[method-assign]
            index.open(keys, fetch)
            assert index.repaired is None

        def touch() -> None:
            os.utime(vpath)  # moves mtime and ctime: the next open checksums

        tag = f"{rows // 1000}k"
        report.add(f"open_unchecked_ms_{tag}", median_ms(lambda: opened(check=False)), "ms")
        report.add(f"open_ms_{tag}", median_ms(opened), "ms")
        report.add(f"open_restamped_ms_{tag}", median_ms(opened, touch), "ms")
        report.add(f"doctor_check_ms_{tag}", median_ms(lambda: files.verify(full=True)), "ms")
        data = vpath.read_bytes()
        for name, digest in (
            ("crc32", lambda: zlib.crc32(data)),
            ("blake2b", lambda: hashlib.blake2b(data).digest()),
        ):
            ms = median_ms(digest)
            report.add(f"{name}_gbps_{tag}", len(data) / ms / 1e6, "GB/s")
        report.add(f"vectors_file_mb_{tag}", vpath.stat().st_size / 1e6, "MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="10k vectors only")
    args = parser.parse_args()
    report = c.Report("bench_damage", args.quick)
    for rows in (10_000,) if args.quick else (10_000, 100_000):
        measure(report, rows)
    report.note(
        "default open = sizes and stamps only; a moved stamp costs one CRC-32 pass, then the "
        "new stamp is kept; keepui doctor checksums and scans for NaN always"
    )
    report.finish()


if __name__ == "__main__":
    main()

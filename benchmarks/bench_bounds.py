"""What one hostile put costs with the default caps and the real model (issue 23, point 9).

Each case runs `keepui put` in a child process on a new store (the default embedding model,
KEEPUI_NO_SERVER=1 so the put owns the store) and records its exit code, wall time and peak
resident memory (os.wait4's rusage: that process alone). The target is a peak of at most
1 GB for any single put with the default caps, and a refusal that names its cap.

Cases (inputs are generated in a temporary folder):
  * html_4mb_text: a page whose text is just under max_text_mb (4): the worst a put may
    store, split into parts, every part embedded with torch;
  * html_row_2mb: one table row of 400,000 cells (was past 300 s before the cap);
  * html_40k_attributes: one tag with 40,000 attributes (578 KB; was 41-89 s);
  * png_240_megapixels: 0.2 MB on disk, 240 MB decoded (was 2.5 GB): put from its header;
  * stdin_150mb: 150 MB of text through `put -`, over max_file_mb (100): refused;
  * html_random_bytes: 1 MB of random bytes named .html: refused as binary.

Run: .venv/bin/python benchmarks/bench_bounds.py [--quick]   (--quick: skips the 4 MB page)
Writes benchmarks/results/bench_bounds.json.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import _common as c

sys.path.insert(0, str(c.REPO / "tests"))  # the tests' grey PNG maker (no pytest import)
from support import grey_png  # noqa: E402

GB = 1024**3
MB = 1024**2


def _png(path: Path, width: int, height: int) -> None:
    path.write_bytes(grey_png(width, height))


def _words_page(path: Path, sentences: int) -> None:
    body = " ".join(f"word{i % 5000} is here." for i in range(sentences))
    path.write_text(f"<html><body><p>{body}</p></body></html>")


def _stdin_text(path: Path, size: int) -> None:
    line = "a line of plain text that repeats until the file is large enough\n"
    with path.open("w") as out:
        for _ in range(size // (len(line) * 1000) + 1):
            out.write(line * 1000)


CASES: dict[str, tuple[Callable[[Path], None], bool]] = {  # name: (make input, is stdin)
    "html_4mb_text": (lambda p: _words_page(p, 225_000), False),
    "html_row_2mb": (
        lambda p: p.write_text("<html><body><table><tr>" + "<td>a" * 400_000 + "</table>"),
        False,
    ),
    "html_40k_attributes": (
        lambda p: p.write_text(
            "<html><body><div " + " ".join(f'a{i}="v{i}"' for i in range(40_000)) + ">x</div>"
        ),
        False,
    ),
    "png_240_megapixels": (lambda p: _png(p, 16_000, 15_000), False),
    "stdin_150mb": (lambda p: _stdin_text(p, 150 * MB), True),
    "html_random_bytes": (lambda p: p.write_bytes(os.urandom(MB)), False),
}


def run(root: Path, name: str) -> tuple[int, float, float, str]:
    """Put one case on a new store; (exit code, seconds, peak MB, last stderr line)."""
    make, from_stdin = CASES[name]
    suffix = ".png" if name.startswith("png") else ".txt" if from_stdin else ".html"
    source = root / f"{name}{suffix}"
    make(source)
    store = root / f"store-{name}"
    target = "-" if from_stdin else str(source)
    env = dict(os.environ, KEEPUI_NO_SERVER="1")
    err = root / f"{name}.err"
    with source.open("rb") if from_stdin else open(os.devnull, "rb") as stdin, err.open("wb") as e:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "keepui", "put", target, "--store", str(store)],
            stdin=stdin,
            stdout=subprocess.DEVNULL,
            stderr=e,
            env=env,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
    lines = err.read_text().strip().splitlines()
    code = os.waitstatus_to_exitcode(status)
    return code, seconds, usage.ru_maxrss * 1024 / MB, lines[-1] if lines else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="skip the 4 MB page")
    args = parser.parse_args()
    report = c.Report("bench_bounds", args.quick)
    names = [n for n in CASES if not (args.quick and n == "html_4mb_text")]
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            code, seconds, peak, said = run(Path(tmp), name)
            report.add(f"{name}_peak_mb", peak, "MB", "<= 1024", peak <= 1024)
            report.add(f"{name}_seconds", seconds, "s")
            report.add(f"{name}_exit", code, "code")
            report.note(f"{name}: {said[:160]}")
    report.finish()


if __name__ == "__main__":
    main()

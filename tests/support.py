"""Test helpers importable from every test module (tests/ is on pythonpath)."""

from __future__ import annotations

import struct
import subprocess
import sys
import zlib
from pathlib import Path

from keepui_engine.config import DEFAULT_TOML

FAKE_TOML = DEFAULT_TOML.replace('provider = "sentence-transformers"', 'provider = "fake"')


def make_fake_store(path: Path, **overrides: object) -> Path:
    """Create a store directory whose keepui.toml selects the fake embedder."""
    path.mkdir(parents=True, exist_ok=True)
    text = FAKE_TOML
    for key, value in overrides.items():
        rendered = str(value).lower() if isinstance(value, bool) else str(value)
        lines = [
            f"{key} = {rendered}" if line.startswith(f"{key} =") else line
            for line in text.splitlines()
        ]
        text = "\n".join(lines) + "\n"
    (path / "keepui.toml").write_text(text)
    return path


def break_summarizer(store: Path, *, port: int = 9, timeout_s: int = 1, **queue: int) -> None:
    """Point the store's summarizer at a local port: by default a closed one (every summary
    fails fast); a test's own listener on `port` can hold a request instead."""
    toml = (store / "keepui.toml").read_text()
    toml = toml.replace('provider = "extractive"', 'provider = "openai-compatible"')
    toml = toml.replace(
        '# base_url = "http://127.0.0.1:11434/v1"', f'base_url = "http://127.0.0.1:{port}/v1"'
    )
    toml = toml.replace('# model = "llama3.2"', 'model = "m"').replace(
        "timeout_s = 60", f"timeout_s = {timeout_s}"
    )
    for key, value in queue.items():
        toml = "\n".join(
            f"{key} = {value}" if line.startswith(f"{key} =") else line
            for line in toml.splitlines()
        )
    (store / "keepui.toml").write_text(toml + "\n")


def run_cli(
    store: Path, *args: str, stdin: str | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`python -m keepui ARGS --store STORE` as a real subprocess, output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "keepui", *args, "--store", str(store)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def grey_png(width: int, height: int, exif_after_pixels: bytes | None = None) -> bytes:
    """A grey PNG of zeros, compressed row by row (tiny on disk, huge once decoded)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    pack = zlib.compressobj(1)
    row = bytes(width + 1)
    idat = b"".join(pack.compress(row) for _ in range(height)) + pack.flush()
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    tail = chunk(b"eXIf", exif_after_pixels) if exif_after_pixels else b""
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", idat)
        + tail
        + chunk(b"IEND", b"")
    )


WAIT_S = 60.0  # generous: a loaded machine is slow, but never this slow
AUTH_V1 = " ".join(f"Sentence {i} tells how the auth service checks a token." for i in range(40))
AUTH_V2 = AUTH_V1 + " A new closing sentence says who rotates the signing keys."
AUTH_SUMMARY = "The auth service checks tokens."


class BlockingSummarizer:
    """A summarizer whose every call waits until the test lets it go (`release`)."""

    name = "blocking"
    uses_context = False

    def __init__(self) -> None:
        import threading

        self.entered = threading.Event()
        self.release = threading.Event()

    def summarize(self, text: str, *, context: list[str] | None = None) -> str:
        self.entered.set()
        assert self.release.wait(WAIT_S), "the test never let the summary finish"
        return AUTH_SUMMARY

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


def break_summarizer(store: Path, **queue: int) -> None:
    """Point the store's summarizer at a closed local port (every summary fails fast)."""
    toml = (store / "keepui.toml").read_text()
    toml = toml.replace('provider = "extractive"', 'provider = "openai-compatible"')
    toml = toml.replace(
        '# base_url = "http://127.0.0.1:11434/v1"', 'base_url = "http://127.0.0.1:9/v1"'
    )
    toml = toml.replace('# model = "llama3.2"', 'model = "m"').replace(
        "timeout_s = 60", "timeout_s = 1"
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

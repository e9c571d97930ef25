"""Test helpers importable from every test module (tests/ is on pythonpath)."""

from __future__ import annotations

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

"""Boundaries: the engine never loads a front end; the data CLI never loads Textual or torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def loaded(statement: str, modules: list[str]) -> dict[str, bool]:
    code = f"import sys; {statement}; print(','.join(str(m in sys.modules) for m in {modules!r}))"
    out = (
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
        )
        .stdout.strip()
        .split(",")
    )
    return dict(zip(modules, [x == "True" for x in out], strict=True))


def test_engine_imports_no_front_end() -> None:
    got = loaded("import keepui_engine", ["textual", "typer", "click", "rich", "keepui"])
    assert not any(got.values()), got


def test_cli_imports_neither_textual_nor_torch() -> None:
    got = loaded("import keepui.cli", ["textual", "torch", "sentence_transformers", "duckdb"])
    assert not any(got.values()), got


def test_find_fast_path_skips_typer_and_torch() -> None:
    got = loaded(
        "import keepui.cli.fastfind as f; f.parse(['find', 'q', '--json'])",
        ["typer", "click", "textual", "torch", "sentence_transformers"],
    )
    assert not any(got.values()), got


def test_import_contracts_hold() -> None:
    exe = Path(sys.executable).with_name("lint-imports")
    if not exe.exists():
        pytest.skip("lint-imports is not installed (pip install -e '.[test]')")
    result = subprocess.run([str(exe)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr

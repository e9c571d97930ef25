"""themes/ (as keepui/themes), the shipped state docs and the `keepui` script are inside the
wheel, and the themes are found there."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from keepui.tui import theming

ROOT = Path(__file__).resolve().parents[2]


def test_wheel_contains_the_themes(tmp_path: Path) -> None:
    pytest.importorskip("hatchling")  # the build backend (the test extra installs it)
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("keepui", "keepui_engine", "themes"):
        shutil.copytree(ROOT / name, src / name, symlinks=True, ignore=ignore)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path / "dist"), str(src)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    wheel = next((tmp_path / "dist").glob("keepui-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"keepui/themes/{n}" for n in theming.THEME_FILES} <= names
    assert "keepui_engine/flows/builtin/query-resolve.yaml" in names  # the shipped state docs
    script = next(n for n in names if n.endswith(".data/scripts/keepui"))
    assert zipfile.ZipFile(wheel).read(script).startswith(b"#!python\n")
    assert zipfile.ZipFile(wheel).getinfo(script).external_attr >> 16 & 0o111  # executable
    installed = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(installed)
    code = "from keepui.tui import theming; print(theming.themes_dir())"
    found = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(installed), "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
    )
    assert found.returncode == 0, found.stderr
    assert Path(found.stdout.strip()) == installed / "keepui" / "themes"

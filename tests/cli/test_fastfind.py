"""The Typer-free `find` path parses like Typer and prints exactly what the Typer path prints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from keepui.cli import _run_typer, fastfind
from keepui_engine import PutSpec, open_workbench


def _steady(text: str) -> str:
    """Blank the fields that move with the clock between two runs (decay and the score)."""
    return re.sub(r'"(score|decay|final)": [0-9.e-]+', r'"\1": _', text)


@pytest.mark.parametrize(
    "argv",
    [
        ["find"],
        ["find", "a", "b"],
        ["find", "q", "--help"],
        ["find", "q", "-h"],
        ["find", "q", "-n", "x"],
        ["find", "q", "--json", "--ids"],
        ["find", "q", "--bogus"],
        ["find", "q", "-t"],
        ["get", "q"],
        [],
        ["find", "q", "-tk=v"],
        ["find", "q", "-n=3"],
        ["find", "q", "--min-score", "abc"],
    ],
)
def test_leaves_anything_unusual_to_typer(argv: list[str]) -> None:
    assert fastfind.parse(argv) is None


def test_parses_every_option_form() -> None:
    got = fastfind.parse(
        [
            "--store",
            "S",
            "find",
            "--tag=a=1",
            "-t",
            "b",
            "q",
            "--limit=3",
            "--since",
            "P1D",
            "--until=2026-01-01",
            "--nl",
            "--mode=bm25",
            "--as-of",
            "2026-10-01",
        ]
    )
    assert got == {
        "tag": ["a=1", "b"],
        "limit": 3,
        "since": "P1D",
        "until": "2026-01-01",
        "store": "S",
        "json_": False,
        "nl": True,
        "ids": False,
        "mode": "bm25",
        "min_score": None,
        "fusion": None,
        "rerank": None,
        "dedup": None,
        "as_of": "2026-10-01",
        "history": False,
        "all_": False,
        "query": "q",
    }
    more = fastfind.parse(["find", "q", "--no-dedup", "--fusion", "rrf", "--rerank=mix"])
    assert more is not None
    assert (more["dedup"], more["fusion"], more["rerank"]) == (False, "rrf", "mix")
    assert fastfind.parse(["find", "q", "--dedup"])["dedup"] is True  # type: ignore[index]
    assert fastfind.parse(["find", "q", "--dedup", "--no-dedup"]) is None
    flags = fastfind.parse(["find", "q", "--history", "--all"])
    assert flags is not None and (flags["history"], flags["all_"]) == (True, True)
    assert fastfind.parse(["find", "--", "-leading dash"])["query"] == "-leading dash"  # type: ignore[index]


@pytest.mark.parametrize(
    "extra",
    [
        ["--json"],
        ["--nl"],
        ["--ids"],
        [],
        ["-t", "kind=a", "--json"],
        ["-n", "2", "--json"],
        ["--since", "P1D", "--ids"],
        ["-t", "nope=x"],
        ["--since", "garbage"],
        ["-n", "0"],
        ["--mode", "hybrid", "--json"],
        ["-m", "bm25"],
        ["--mode", "nope"],
        ["--min-score", "0.5", "--json"],
        ["--min-score=-1"],
        ["--history"],
        ["--history", "--json"],
        ["--history", "-t", "kind=b"],
        ["--all", "--json"],
    ],
)
def test_same_output_as_typer(
    store_dir: Path, capsys: pytest.CaptureFixture[str], extra: list[str]
) -> None:
    with open_workbench(store_dir) as wb:
        wb.put_many(
            [
                PutSpec(f"note on rivers {i}", id=f"r{i}", tags=[f"kind={'ab'[i % 2]}"])
                for i in range(5)
            ]
        )
        wb.put("note on lakes", id="r1", tags=["kind=a"])  # r1's rivers are history now
    argv = ["find", "rivers", "--store", str(store_dir), *extra]
    fast_code = fastfind.run(argv)
    fast = capsys.readouterr()
    typer_code = _run_typer(argv)
    slow = capsys.readouterr()
    assert fast_code == typer_code
    assert _steady(fast.out) == _steady(slow.out)
    assert fast.err == slow.err

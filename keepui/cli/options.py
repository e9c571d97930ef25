"""Shared option declarations for every command."""

from __future__ import annotations

from typing import Annotated

import typer

from keepui.cli import numbers

StoreOpt = Annotated[
    str | None,
    typer.Option(
        "--store",
        "-s",
        envvar="KEEPUI_STORE",
        show_envvar=True,
        help="Store directory [default: ~/.keepui].",
    ),
]
JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document to stdout.")]
NlFlag = Annotated[bool, typer.Option("--nl", help="Print one JSON record per line.")]
IdsFlag = Annotated[bool, typer.Option("--ids", help="Print only ids, one per line.")]
TagOpt = Annotated[
    list[str] | None, typer.Option("--tag", "-t", help="Tag KEY=VALUE (repeatable).")
]
FilterOpt = Annotated[
    list[str] | None,
    typer.Option("--tag", "-t", help="Filter: KEY (present) or KEY=VALUE; repeat to AND."),
]


def _option(param: typer.CallbackParam) -> str:
    return max(param.opts, key=len) if param.opts else str(param.name)


def finite_score(param: typer.CallbackParam, value: float | None) -> float | None:
    """Option callback: refuse nan and inf (a usage error naming the option)."""
    return numbers.finite(_option(param), value)


def bounded_count(param: typer.CallbackParam, value: int | None) -> int | None:
    """Option callback: refuse counts over numbers.MAX_COUNT (a usage error naming the option)."""
    return numbers.count(_option(param), value)

"""Shared option declarations for every command."""

from __future__ import annotations

from typing import Annotated

import typer

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

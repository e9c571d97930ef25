"""`keepui config`: the store's settings file, its system documents, and the state diagram."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from keepui.cli.options import JsonFlag, StoreOpt
from keepui.cli.output import emit_json, note, out
from keepui_engine import UsageError, open_workbench


def config(
    reset_system_docs: Annotated[
        bool,
        typer.Option(
            "--reset-system-docs",
            help="Store the shipped state docs again as .state/NAME (edits stay in history).",
        ),
    ] = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Do not ask before resetting (for scripts).")
    ] = False,
    state_diagram: Annotated[
        bool,
        typer.Option("--state-diagram", help="Print a Mermaid stateDiagram-v2 of the flows."),
    ] = False,
    configs: Annotated[
        bool,
        typer.Option(
            "--configs",
            help="List the search configurations ([search] as `default`, then each "
            "[search.configs.NAME]) with what each changes from the default.",
        ),
    ] = False,
    store: StoreOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Show the store's settings file, reset its system docs, or draw its flows.

    \b
    Examples:
      keepui config                          # where keepui.toml is, and the model
      keepui config --state-diagram > flows.mmd
      keepui config --reset-system-docs --yes
      keepui config --configs
    """
    if reset_system_docs + state_diagram + configs > 1:
        raise UsageError("choose one of --reset-system-docs, --state-diagram and --configs.")
    with open_workbench(store, create=False) as wb:
        if configs:
            from keepui.cli.tuning_text import render_configs

            render_configs(wb.tuning.configs(), json_=json_)
            return
        if state_diagram:
            diagram = wb.state_diagram()
            if json_:
                emit_json({"mermaid": diagram})
            else:
                sys.stdout.write(diagram)
            return
        if reset_system_docs:
            if not yes:
                if not sys.stdin.isatty():
                    raise UsageError(
                        "--reset-system-docs replaces the stored state docs with the shipped "
                        "ones (your edits stay in their history); add --yes to confirm."
                    )
                typer.confirm(
                    "Store the shipped state docs as new versions of .state/NAME?", abort=True
                )
            done = wb.reset_system_docs()
            if json_:
                emit_json({"reset": done})
                return
            for row in done:
                out(f"{row['id']}\t{row['action']}")
            return
        settings = wb.settings
        stats = wb.stats()
    info = {
        "store": str(settings.store),
        "config": str(settings.store / "keepui.toml"),
        "model": stats.model,
        "items": stats.items,
        "system_items": stats.system_items,
    }
    if json_:
        emit_json(info)
        return
    for key, value in info.items():
        out(f"{key + ':':<14}{value}")
    note("edit keepui.toml to change settings; keepui config --help for more")

"""`keepui find` without Typer: the scripting hot path parses its few options by hand.

Importing and running Typer costs about 100 ms, more than a warm find through `keepui serve`
takes in all. Anything this parser does not recognise (help, a typo, a bad number, clashing
flags) returns None and the Typer CLI handles it with its full messages; both paths render
through the same function, and a test checks they print the same thing.
"""

from __future__ import annotations

import math

from keepui.cli.numbers import MAX_COUNT

VALUE_OPTS = {
    "-t": "tag",
    "--tag": "tag",
    "-n": "limit",
    "--limit": "limit",
    "--since": "since",
    "--until": "until",
    "-s": "store",
    "--store": "store",
    "-m": "mode",
    "--mode": "mode",
    "--min-score": "min_score",
    "--fusion": "fusion",
    "--rerank": "rerank",
    "--as-of": "as_of",
}
FLAGS = {
    "--json": "json_",
    "--nl": "nl",
    "--ids": "ids",
    "--dedup": "dedup",
    "--no-dedup": "dedup",
    "--history": "history",
    "--all": "all_",
}


def parse(argv: list[str]) -> dict[str, object] | None:
    """Options of `[--store S] find QUERY [options]`, or None to leave it to Typer."""
    args: dict[str, object] = {
        "tag": [],
        "limit": 10,
        "since": None,
        "until": None,
        "store": None,
        "json_": False,
        "nl": False,
        "ids": False,
        "mode": None,
        "min_score": None,
        "fusion": None,
        "rerank": None,
        "dedup": None,
        "as_of": None,
        "history": False,
        "all_": False,
    }
    rest = list(argv)
    while rest and rest[0] in ("-s", "--store") and len(rest) > 1:
        args["store"] = rest[1]
        rest = rest[2:]
    if not rest or rest[0] != "find":
        return None
    query: str | None = None
    tokens = iter(rest[1:])
    only_positional = False
    for token in tokens:
        if only_positional or not token.startswith("-") or token == "-":
            if query is not None:
                return None
            query = token
            continue
        if token == "--":
            only_positional = True
            continue
        name, eq, inline = token.partition("=")
        if name in FLAGS and not eq:
            if FLAGS[name] == "dedup" and args["dedup"] is not None:
                return None
            args[FLAGS[name]] = name != "--no-dedup"
        elif name in VALUE_OPTS and (eq and name.startswith("--") or not eq):
            value = inline if eq else next(tokens, None)
            if value is None:
                return None
            key = VALUE_OPTS[name]
            if key == "tag":
                args["tag"].append(value)  # type: ignore[attr-defined]
            elif key == "limit":
                if not value.lstrip("-").isdigit() or int(value) > MAX_COUNT:
                    return None
                args["limit"] = int(value)
            elif key == "min_score":
                try:
                    args["min_score"] = float(value)
                except ValueError:
                    return None
                if not math.isfinite(float(value)):
                    return None
            else:
                args[key] = value
        else:
            return None
    if query is None or sum(bool(args[k]) for k in ("json_", "nl", "ids")) > 1:
        return None
    args["query"] = query
    return args


def run(argv: list[str]) -> int | None:
    """Run `find` if the arguments are simple; return the exit code, or None to use Typer."""
    args = parse(argv)
    if args is None:
        return None
    from keepui.cli.output import render_find, report_error
    from keepui_engine import KeepuiError, open_workbench

    tags = [str(t) for t in args["tag"]]  # type: ignore[attr-defined]
    since = None if args["since"] is None else str(args["since"])
    until = None if args["until"] is None else str(args["until"])
    try:
        with open_workbench(args["store"], create=False) as wb:  # type: ignore[arg-type]
            result = wb.find(
                str(args["query"]),
                tags=tags,
                limit=int(args["limit"]),  # type: ignore[call-overload]
                since=since,
                until=until,
                mode=None if args["mode"] is None else str(args["mode"]),
                min_score=None if args["min_score"] is None else float(args["min_score"]),  # type: ignore[arg-type]
                fusion=None if args["fusion"] is None else str(args["fusion"]),
                dedup=None if args["dedup"] is None else bool(args["dedup"]),
                rerank=None if args["rerank"] is None else str(args["rerank"]),
                as_of=None if args["as_of"] is None else str(args["as_of"]),
                include_system=bool(args["all_"]),
                history=bool(args["history"]),
            )
    except KeepuiError as exc:
        return report_error(exc, bool(args["json_"]) or bool(args["nl"]))
    render_find(result, json_=bool(args["json_"]), nl=bool(args["nl"]), ids=bool(args["ids"]))
    return 0

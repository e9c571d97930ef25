"""The CLI's fast path: an everyday command line, handed whole to the store's server.

`keepui find|get|list|tag|del|context|reflect|now|stats|put NOTE` runs in the store's owner
(`keepui serve`, started on demand: see keepui_engine.core.owner), which parses it with the same
Typer CLI and sends back its stdout, stderr and exit code. This process imports no more than
the socket client: no Typer, numpy, DuckDB or model.

A command goes the usual way (returns None here) when it reads this process's files or
standard input (`put FILE|DIR|URL|-`, an argument that names a path), asks for help, when
KEEPUI_NO_SERVER is set, the store is a PostgreSQL database, no owner runs and the command
would not start one, or the owner cannot run it (the workbench holds the store).
"""

from __future__ import annotations

import os
import sys

FORWARDED = {"find", "get", "list", "tag", "del", "context", "reflect", "now", "stats", "put"}
# Commands that start the store's owner when none runs (they need the model or queue work).
STARTS_OWNER = {"find", "put", "tag", "del", "context", "reflect"}
# Options that take a value, per command whose arguments may name a path (the others never
# read this process's files, whatever their arguments say).
VALUES = {
    "get": {"-V", "--version", "-s", "--store"},
    "tag": {"-t", "--tag", "-r", "--remove", "-s", "--store"},
    "del": {"-s", "--store"},
    "put": {"-i", "--id", "-t", "--tag", "-T", "--text", "--summary", "-x", "--exclude"}
    | {"-s", "--store"},
}
FLAGS = {
    "get": {"-H", "--history", "-P", "--parts", "-C", "--context", "--json"},
    "tag": {"--json"},
    "del": {"--purge", "--json"},
    "put": {"--json"},
}


def run(args: list[str]) -> int | None:
    """Run the command in the store's owner; its exit code, or None to run it here."""
    from keepui_engine.core import wire

    if wire.no_server():
        return None
    store, at = _root_store(args)
    if at >= len(args) or args[at] not in FORWARDED:
        return None
    command, rest = args[at], args[at + 1 :]
    options = rest[: rest.index("--")] if "--" in rest else rest
    if any(a in ("-h", "--help") for a in options):
        return None
    store = _command_store(options) or store
    raw = store or os.environ.get("KEEPUI_STORE") or ""
    if wire.is_url(raw):
        return None  # PostgreSQL: every process connects to the database itself
    if command in VALUES and not _positional_is_text(command, rest):
        return None
    path = wire.store_dir(store)
    request = {"argv": args, "tty": {name: _isatty(name) for name in ("stdin", "stdout", "stderr")}}
    reply = wire.ask(path, "__cli__", request)
    if reply is None:  # no server answers: start one if the command needs it
        starts = command in STARTS_OWNER or (command == "now" and _now_writes(rest))
        if not starts or not (wire.store_exists(path) or command in ("put", "now")):
            return None  # the usual way says "no store", or reads without an owner
        if not _started(path):
            return None
        reply = wire.ask(path, "__cli__", request)
    elif reply.get("stale") and _replaced(path):
        reply = wire.ask(path, "__cli__", request)
    if reply is None or not reply.get("ok"):
        return None  # stopping, stale, or an owner that runs no commands: the usual way
    result = reply["result"]
    if result.get("stderr"):
        sys.stderr.write(result["stderr"])
        sys.stderr.flush()
    if result.get("stdout"):
        sys.stdout.write(result["stdout"])
    return int(result.get("code") or 0)


def _started(path: str) -> bool:
    """Start the store's owner (saying so on stderr); True once it answers."""
    from keepui.cli import install_reporters
    from keepui_engine.core import owner

    install_reporters()
    return bool(owner.ensure(path, _say))


def _replaced(path: str) -> bool:
    """Stop a server of another build or keepui.toml and start this one's; True when the new
    one answers. The workbench is never stopped for us."""
    from keepui.cli import install_reporters
    from keepui_engine.core import owner

    info = owner.hello(path) or {}
    if info.get("kind") not in ("auto", "serve"):
        return False
    install_reporters()
    _say(f"keepui: replacing the server of {path} (another keepui build or keepui.toml)")
    owner.stop(path)
    return bool(owner.ensure(path, _say))


def _isatty(name: str) -> bool:
    stream = getattr(sys, name)
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _say(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _root_store(args: list[str]) -> tuple[str | None, int]:
    """`--store S` before the command, and where the command is."""
    store, at = None, 0
    while at < len(args):
        if args[at] in ("-s", "--store") and at + 1 < len(args):
            store, at = args[at + 1], at + 2
        elif args[at].startswith("--store="):
            store, at = args[at].partition("=")[2], at + 1
        else:
            break
    return store, at


def _command_store(options: list[str]) -> str | None:
    store = None
    for i, arg in enumerate(options):
        if arg in ("-s", "--store") and i + 1 < len(options):
            store = options[i + 1]
        elif arg.startswith("--store="):
            store = arg.partition("=")[2]
    return store


def _positional_is_text(command: str, rest: list[str]) -> bool:
    """Whether the command's argument is plain text: not a path (existing or meant), a URL,
    standard input, nor anything this parser does not know (then the usual way decides)."""
    from keepui_engine.core.pathlike import looks_like_path

    values, flags = VALUES[command], FLAGS[command]
    found: list[str] = []
    has_text = False
    tokens = iter(rest)
    for token in tokens:
        if token == "--":
            found.extend(tokens)
            break
        name = token.partition("=")[0] if token.startswith("--") else token
        if name in values:
            has_text = has_text or name in ("-T", "--text")
            if "=" not in token and next(tokens, None) is None:
                return False
        elif token in flags:
            continue
        elif token.startswith("-") and token != "-":
            return False  # an option we do not know (or `-V1`): the usual way
        else:
            found.append(token)
    if command == "put" and has_text:
        return not found
    if len(found) != 1:
        return False
    arg = found[0]
    if command == "put" and (arg == "-" or arg.startswith(("file:", "http://", "https://"))):
        return False  # read here: standard input, a file, a page
    if arg.startswith(("file://", "http://", "https://")):
        return True  # an id as it is stored: the same from any working directory
    base = arg.split("@", 1)[0] if command != "put" else arg
    for candidate in {arg, base}:
        if os.path.lexists(candidate) or looks_like_path(candidate):
            return False
    return True


def _now_writes(rest: list[str]) -> bool:
    """Whether `now` is given a new text (a positional argument)."""
    tokens = iter(rest)
    for token in tokens:
        if token in ("--scope", "-t", "--tag", "-s", "--store"):
            next(tokens, None)
        elif not token.startswith("-") or token == "--":
            return True
    return False

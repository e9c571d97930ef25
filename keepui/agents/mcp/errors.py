"""Engine errors in an MCP caller's words: tool arguments where the engine names CLI flags."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from keepui_engine import KeepuiError

Rewrite = tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]


def _versions(m: re.Match[str]) -> str:
    doc, n = m["id"], int(m["n"])
    return (
        f"{m['quoted']} has {n} version(s): address them as {doc}@V{{0}} (current) to "
        f"{doc}@V{{{n - 1}}}, or {doc}@V{{-1}} (oldest) to {doc}@V{{-{n}}}"
    )


def _flag(m: re.Match[str]) -> str:
    return f"`{m[1].replace('-', '_')}`"


def _example(m: re.Match[str]) -> str:
    return f'e.g. {m[1].replace("-", "_")}="{m[2]}"'


# The engine words its messages for the CLI (its flags, its commands); these say the same
# with the tools' arguments, in order. The last turns any other --flag into the argument of
# that name, which is what every tool calls the option it shares with the CLI.
_REWRITES: list[Rewrite] = [
    (re.compile(r"\(e\.g\. -t ([^)\s]+)\)"), r'(e.g. tags=["\1"])'),
    (re.compile(r"use -t (\S+?)\.?$"), r'give "\1" in `tags`.'),
    (re.compile(r"keepui now TEXT -t KEY=VALUE"), "give `text` with `tags`"),
    (re.compile(r"`?keepui list`? shows the ids"), "The list tool shows the ids"),
    (re.compile(r"`keepui get (\S+) --parts`"), r"\1@P{1} is its first part, if it was split"),
    (re.compile(r"\(keepui get (\S+) --parts lists them\)"), r"(only a split document has parts)"),
    (
        re.compile(
            r"(?P<quoted>(?P<q>['\"])(?P<id>.*?)(?P=q)) has (?P<n>\d+) version\(s\): "
            r"use -V .*\(from the oldest\)"
        ),
        _versions,
    ),
    (re.compile(r"with -p (\w+)=\S+"), r"with the `\1` argument"),
    (re.compile(r"(?<![\w-])-p (\w+)"), r"`\1`"),
    (re.compile(r"e\.g\. --([a-z][a-z-]*) ([^\s`]+?)(?=\.?$|[,;)])"), _example),
    (re.compile(r"Give some text, a file path, or - to read standard input\."), "Give `text`."),
    (re.compile(r"run the (?:same )?command again"), "call the tool again"),
    (re.compile(r"(?<![\w-])--([a-z][a-z-]*)"), _flag),
]

# Which argument a usage error is about, when the message names none in backticks.
_ARGUMENT_OF: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^tag\b|tag key|system tags"), "tags"),
    (re.compile(r"^the query is empty"), "query"),
    (re.compile(r"^nothing to store"), "text"),
    (re.compile(r"^id\b"), "id"),
    (re.compile(r"a (?:version|part) is a (?:whole )?number"), "address"),
]

# What to do about an unknown document, per tool that names one.
_NOT_FOUND = {
    "get": "check the `address` argument: an id as the list tool shows it, ID@V{N} with N "
    "below the document's `versions` (get ID says how many), or ID@P{N} for a part.",
    "delete": "check the `id` argument: a document's id as the list tool shows it (delete "
    "takes no ID@V{N}; it removes the latest version).",
}


def tool_words(text: str) -> str:
    """`text` with the CLI's flags and commands said as tool arguments and tools."""
    for pattern, replacement in _REWRITES:
        text = pattern.sub(replacement, text)
    return text


def _argument(message: str) -> str | None:
    named = re.search(r"`([a-z_]+)`", message)
    if named:
        return named[1]
    for pattern, argument in _ARGUMENT_OF:
        if pattern.search(message):
            return argument
    return None


def _hint(err: KeepuiError, tool: str | None, message: str) -> str | None:
    if err.hint:
        return tool_words(err.hint)
    if tool is None:
        return None
    if err.public_kind == "not_found":
        return _NOT_FOUND.get(tool, f"check the arguments of {tool}: the list tool shows the ids.")
    if err.public_kind == "usage":
        argument = _argument(message)
        if argument is None:
            return f"check the arguments of {tool} against its input schema and call it again."
        return f"change the `{argument}` argument as the message says and call {tool} again."
    return None


def error_text(err: KeepuiError, tool: str | None = None) -> str:
    """What an agent reads about a failure: title, message, kind and what to do.

    Args:
        err: The engine's error.
        tool: The tool that failed, so the hint can name its argument; None for a resource.
    """
    message = tool_words(err.message)
    text = f"{err.title}: {message} (kind: {err.public_kind})"
    hint = _hint(err, tool, message)
    return f"{text}\nHint: {hint}" if hint else text

"""The README and docs/ agree with the CLI: every command and flag of `keepui --help` is in
docs/commands.md, every `keepui` line in their shell blocks parses, and every link resolves.

Modelled on sqlite-utils' docs tests. The command tree is the Click command `--help` is
rendered from (`keepui.cli.app.command()`), so nothing here runs a command.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from keepui.cli.app import command

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
COMMANDS = DOCS / "commands.md"
PAGES = [README, *sorted(DOCS.glob("*.md"))]

# Documented once, in the commands reference's section of this title.
COMMON_TITLE = "Options every command takes"
COMMON = {"-s", "--store", "--json", "-h", "--help"}

# Flags being built while these docs were written. A line that uses one is skipped while the
# installed CLI lacks it, and checked like any other once the CLI has it.
UNDER_CONSTRUCTION = {("serve", "--status"), ("serve", "--stop"), ("serve", "--auto")}
NO_SERVER = "--no-server"  # accepted anywhere on a command line

SHELL_BLOCKS = {"", "bash", "sh", "shell", "console", "zsh"}
SEPARATORS = {"|", "||", "&&", ";", "&"}
ENV_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*([\w+-]*)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.MULTILINE)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


@cache
def root() -> Any:
    """The Click command tree behind `keepui --help`."""
    return command()


def walk(cmd: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every visible command under cmd, cmd first, as (path of names, command)."""
    yield path, cmd
    for name, sub in sorted(getattr(cmd, "commands", {}).items()):
        if not sub.hidden:
            yield from walk(sub, (*path, name))


def flags(cmd: Any) -> set[str]:
    """The option strings a command's --help lists (`--dedup` and `--no-dedup` both)."""
    found = {"-h", "--help"}
    for param in cmd.params:
        if param.param_type_name == "option" and not getattr(param, "hidden", False):
            found.update(param.opts)
            found.update(param.secondary_opts)
    return found


def mentions(text: str, word: str) -> bool:
    """Whether text has word on its own (`--tag` is not found inside `--tags`)."""
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


def code_blocks(path: Path) -> Iterator[tuple[int, str, list[str]]]:
    """Fenced blocks of a Markdown file: (line number of the fence, info string, lines)."""
    fence: str | None = None
    start, info, body = 0, "", list[str]()
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if fence is None:
            if match := FENCE.match(line):
                fence, start, info, body = match.group(1), number, match.group(2).lower(), []
        elif line.strip().startswith(fence) and not line.strip().strip(fence[0]):
            yield start, info, body
            fence = None
        else:
            body.append(line)


def fenced(lines: list[str]) -> list[bool]:
    """For each line, whether it belongs to a fenced block (its fences included)."""
    out, fence = [], None
    for line in lines:
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
            out.append(True)
        elif fence is not None:
            out.append(True)
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
        else:
            out.append(False)
    return out


def prose(path: Path) -> str:
    """A Markdown file without its fenced blocks and inline code spans."""
    lines = path.read_text().splitlines()
    kept = [line for line, hidden in zip(lines, fenced(lines), strict=True) if not hidden]
    return "\n".join(re.sub(r"(`+).*?\1", "", line) for line in kept)


def shell_lines(body: list[str]) -> Iterator[tuple[int, str]]:
    """Command lines of a shell block with their index in it: continuations joined; with `$ `
    prompts, only the prompted lines."""
    prompted = any(line.lstrip().startswith("$ ") for line in body)
    pending, first = "", 0
    for index, raw in enumerate(body):
        line = raw.strip()
        if prompted and not pending:
            if not line.startswith("$ "):
                continue
            line = line[2:]
        if not pending:
            first = index
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        yield first, pending + line
        pending = ""
    if pending:
        yield first, pending


def invocations(line: str) -> Iterator[list[str]]:
    """The arguments of each `keepui` run on a shell line (pipes, &&, env prefixes,
    redirections and comments understood)."""
    lexer = shlex.shlex(re.sub(r"(?<=\s)\d>", ">", line), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    segment: list[str] = []
    for token in [*lexer, ";"]:
        if token not in SEPARATORS:
            segment.append(token)
            continue
        words: list[str] = []
        redirect = False
        for word in segment:
            if redirect:
                redirect = False
            elif word and set(word) <= set("<>&"):
                redirect = True
            else:
                words.append(word)
        while words and ENV_ASSIGNMENT.match(words[0]):
            words.pop(0)
        if words and Path(words[0]).name == "keepui":
            yield words[1:]
        elif (
            words[:1]
            and Path(words[0]).name.startswith("python")
            and words[1:3]
            == [
                "-m",
                "keepui",
            ]
        ):
            yield words[3:]
        segment = []


def documented_invocations() -> list[tuple[str, list[str]]]:
    """Every `keepui` run in the shell blocks of README.md and docs/*.md, with its place."""
    found: list[tuple[str, list[str]]] = []
    for page in PAGES:
        for start, info, body in code_blocks(page):
            if info not in SHELL_BLOCKS:
                continue
            for index, line in shell_lines(body):
                place = f"{page.relative_to(ROOT)}:{start + 1 + index}: {line}"
                found.extend((place, args) for args in invocations(line))
    return found


def has_flag(path: tuple[str, ...], flag: str) -> bool:
    """Whether the installed CLI has this option on this command."""
    cmd = root()
    for name in path:
        cmd = cmd.commands.get(name)
        if cmd is None:
            return False
    return flag in flags(cmd)


@cache
def accepts_no_server() -> bool:
    """Whether the installed keepui takes --no-server after a command name."""
    env = {**os.environ, "KEEPUI_NO_SERVER": "1", "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "keepui", "stats", NO_SERVER, "--help"],
        capture_output=True,
        env=env,
        timeout=120,
    )
    return result.returncode == 0


def unbuilt(args: list[str]) -> str | None:
    """The flag under construction that this line uses and the installed CLI lacks."""
    if NO_SERVER in args and not accepts_no_server():
        return NO_SERVER
    for name, flag in UNDER_CONSTRUCTION:
        if name in args and flag in args and not has_flag((name,), flag):
            return f"{name} {flag}"
    return None


def parse_error(args: list[str]) -> str | None:
    """Why the CLI would refuse these arguments, or None when they parse."""
    args = [a for a in args if a != NO_SERVER]  # taken out before the parser sees the line
    node = root()
    try:
        ctx = node.make_context("keepui", list(args))
        rest = [*ctx._protected_args, *ctx.args]
        while rest and hasattr(node, "commands"):
            name, node, rest = node.resolve_command(ctx, rest)
            ctx = node.make_context(name, rest, parent=ctx)
            rest = [*ctx._protected_args, *ctx.args]
    except Exception as exc:  # the vendored Click's UsageError, or Exit from an eager --help
        if getattr(exc, "exit_code", None) == 0:
            return None
        message = getattr(exc, "format_message", None)
        return str(message() if callable(message) else exc)
    return None


def sections(path: Path) -> dict[str, str]:
    """The prose under each heading (fenced blocks left out: a flag named only in a synopsis
    or an example is not documented), up to the next heading of the same or a higher level,
    or the next heading naming a command (`## keepui judgments` ends at `### keepui
    judgments export`)."""
    raw = path.read_text().splitlines()
    lines = ["" if hidden else line for line, hidden in zip(raw, fenced(raw), strict=True)]
    heads = [(i, m) for i, line in enumerate(lines) if (m := HEADING.match(line))]
    out: dict[str, str] = {}
    for n, (i, m) in enumerate(heads):
        level, title = len(m.group(1)), m.group(2).strip("` ")
        end = len(lines)
        for j, other in heads[n + 1 :]:
            if len(other.group(1)) <= level or other.group(2).strip("` ").startswith("keepui "):
                end = j
                break
        out[title] = "\n".join(lines[i + 1 : end])
    return out


def slug(title: str) -> str:
    """GitHub's anchor for a heading."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors GitHub gives the headings of a Markdown file (repeats get -1, -2 …)."""
    lines = path.read_text().splitlines()
    seen: dict[str, int] = {}
    out = set()
    for line, hidden in zip(lines, fenced(lines), strict=True):
        match = None if hidden else HEADING.match(line)
        if match:
            base = slug(match.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            out.add(base if count == 0 else f"{base}-{count}")
    return out


def test_every_command_has_a_section_with_every_flag() -> None:
    reference = sections(COMMANDS)
    missing = []
    for path, cmd in walk(root()):
        title = " ".join(("keepui", *path))
        if title not in reference:
            missing.append(f"no section `{title}`")
            continue
        for flag in sorted(flags(cmd) - COMMON):
            if not mentions(reference[title], flag):
                missing.append(f"{title}: {flag}")
    assert not missing, "docs/commands.md lacks:\n" + "\n".join(missing)


def test_common_options_are_documented_once() -> None:
    common = sections(COMMANDS).get(COMMON_TITLE, "")
    assert common, f"docs/commands.md has no section `{COMMON_TITLE}`"
    assert not [flag for flag in sorted(COMMON) if not mentions(common, flag)]


def test_every_documented_keepui_line_parses() -> None:
    runs = documented_invocations()
    assert len(runs) > 50, "the extractor found too few commands: it is broken"
    failures = []
    for place, args in runs:
        if unbuilt(args) is None and (error := parse_error(args)) is not None:
            failures.append(f"{place}\n    {error}")
    assert not failures, "commands in the docs that keepui would refuse:\n" + "\n".join(failures)


@pytest.mark.parametrize(
    ("args", "parses"),
    [
        (["find", "x", "-n", "5", "--json"], True),
        (["--store", "s", "judgments", "export", "--qrels", "q"], True),
        (["diff", "ID", "-1", "0"], True),
        ([], True),
        (["find", "x", "--no-such-flag"], False),
        (["no-such-command"], False),
        (["judgments", "no-such-command"], False),
        (["find", "x", "-n", "many"], False),
    ],
)
def test_the_checker_refuses_what_keepui_refuses(args: list[str], parses: bool) -> None:
    assert (parse_error(args) is None) is parses


def test_the_extractor_reads_shell_lines() -> None:
    line = "KEEPUI_NO_SERVER=1 keepui find 'a | b' --ids 2>/dev/null | xargs -n1 keepui get"
    assert list(invocations(line)) == [["find", "a | b", "--ids"]]
    assert list(invocations(".venv/bin/keepui put x && python3 -m keepui find y  # why")) == [
        ["put", "x"],
        ["find", "y"],
    ]
    body = ["$ keepui find \\", "    'which database'", "0.196  %a9951ee8e10f  …", "$ keepui"]
    assert list(shell_lines(body)) == [(0, "keepui find  'which database'"), (3, "keepui")]


def test_readme_is_a_short_page() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= 260, f"README.md has {len(lines)} lines; move detail into docs/"


def test_readme_keeps_the_install_and_test_commands_ci_runs() -> None:
    shell = [
        line.strip()
        for _, info, body in code_blocks(README)
        if info in SHELL_BLOCKS
        for line in body
    ]
    assert "python3 -m venv .venv && .venv/bin/pip install -e '.[test]'" in shell
    assert any(line.startswith(".venv/bin/python -m pytest") for line in shell)
    assert any("pip install -e ." in line and "[test]" not in line for line in shell)


def test_readme_links_every_docs_page() -> None:
    text = README.read_text()
    assert not [p.name for p in DOCS.glob("*.md") if f"docs/{p.name}" not in text]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    text = prose(page)
    broken = []
    for target in [*LINK.findall(text), *REFERENCE.findall(text)]:
        if SCHEME.match(target):
            continue
        file, _, anchor = target.partition("#")
        goal = (page.parent / file).resolve() if file else page
        if not goal.exists():
            broken.append(f"{target}: no such file")
        elif anchor and goal.suffix == ".md" and anchor not in anchors(goal):
            broken.append(f"{target}: no heading with that anchor")
    assert not broken, f"{page.relative_to(ROOT)}:\n" + "\n".join(broken)

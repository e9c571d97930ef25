"""Validation of user input: ids, `ID@V{N}` addresses, tags, sources (times: moments.py)."""

from __future__ import annotations

import hashlib
import io
import os
import re
from pathlib import Path
from typing import Any

from keepui_engine.core.errors import UsageError
from keepui_engine.core.moments import EARLIEST as EARLIEST
from keepui_engine.core.moments import LATEST as LATEST
from keepui_engine.core.moments import iso as iso
from keepui_engine.core.moments import parse_moment as parse_moment
from keepui_engine.core.moments import parse_time as parse_time
from keepui_engine.core.pathlike import FILE_EXTENSIONS as FILE_EXTENSIONS
from keepui_engine.core.pathlike import looks_like_path as looks_like_path

TAG_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
VERSION_SUFFIX = re.compile(r"^(?P<id>.+)@[Vv]\{(?P<n>-?\d+)\}$")
_BAD_ID_CHARS = set("\\`<>|;\"'") | {chr(c) for c in range(32)} | {"\x7f"}
MAX_ID = 1024

UserTags = dict[str, list[str]]


def anonymous_id(text: str) -> str:
    """Content-addressed id for text put without one: `%` + 12 hex of sha256."""
    return "%" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def content_hash(text: str) -> str:
    """Full sha256 hex of a text, the key of the embedding cache."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_id(doc_id: str) -> str:
    """Return the id if acceptable, else raise UsageError naming the problem.

    Address syntax (`@V{`, `@P{`, any case) is refused: `get ID@V{1}` must mean version 1 of
    ID, never a document whose id ends that way.
    """
    if not doc_id or doc_id != doc_id.strip():
        raise UsageError(f"id {doc_id!r} is empty or has leading/trailing spaces; give a plain id.")
    if len(doc_id) > MAX_ID:
        raise UsageError(f"id is {len(doc_id)} characters; the limit is {MAX_ID}.")
    bad = sorted(set(doc_id) & _BAD_ID_CHARS)
    if bad:
        raise UsageError(
            f"id {doc_id!r} contains {bad!r}; ids may not contain quotes, "
            "backslashes, backticks, < > | ; or control characters."
        )
    found = _ADDRESS.search(doc_id)
    if found:
        instead = _ADDRESS_PART.sub(lambda m: f"-{m.group(1)}{m.group(2)}", doc_id)
        raise UsageError(
            f"id {doc_id!r} contains {found.group()!r}, which keepui reads as an address "
            "(ID@V{N}: a version of ID, ID@P{N}: a part), so commands would not reach this id. "
            f"Choose an id without @V{{ or @P{{ (e.g. {instead!r}); other characters are "
            "allowed except quotes, backslashes, backticks, < > | ; and control characters."
        )
    return doc_id


_ADDRESS = re.compile(r"@[VvPp]\{")
_ADDRESS_PART = re.compile(r"@([VvPp])\{([^{}@]*)\}?")
# An address: an id, then `@V{N}` and/or `@P{N}` (well-formed: the parsers below refuse others).
_ADDRESSED = re.compile(r"^(?P<base>.+?)(?P<suffix>(?:@[Vv]\{-?\d+\})?(?:@P\{\d+\})?)$", re.DOTALL)


def split_address(address: str) -> tuple[str, str]:
    """(id, suffix) of `ID`, `ID@V{N}`, `ID@P{N}` or `ID@V{N}@P{M}`; the suffix may be ''."""
    m = _ADDRESSED.match(address)
    return (m.group("base"), m.group("suffix")) if m else (address, "")


PART_SUFFIX = re.compile(r"^(?P<id>.+)@P\{(?P<n>[0-9]+)\}$")


_ANY_SUFFIX = re.compile(r"^(?P<id>.+)@(?P<kind>[VvP])\{(?P<n>[^{}]*)\}$")


def _malformed(address: str, kind: str) -> None:
    """Raise UsageError when `address` ends in a version or part suffix that is not a number."""
    m = _ANY_SUFFIX.match(address)
    if m is None or m.group("kind").upper() != kind:
        return
    base, n = m.group("id"), m.group("n")
    if kind == "P":
        raise UsageError(
            f"{address!r}: a part is a number from 1: {base}@P{{1}} is the first "
            f"(keepui get {base} --parts lists them)."
        )
    raise UsageError(
        f"{address!r}: a version is a whole number: {base}@V{{1}} is the previous one, "
        f"{base}@V{{-1}} the oldest (not {n!r})."
    )


def split_part(address: str) -> tuple[str, int] | None:
    """Split `ADDRESS@P{N}` into (ADDRESS, N), or None when there is no part suffix.

    Raises:
        UsageError: The address ends in `@P{...}` that is not a number.
    """
    m = PART_SUFFIX.match(address)
    if m is None:
        _malformed(address, "P")
        return None
    return m.group("id"), int(m.group("n"))


def split_version(address: str) -> tuple[str, int] | None:
    """Split `ID@V{N}` into (ID, N), or None when the address has no version suffix.

    Raises:
        UsageError: The address ends in `@V{...}` that is not a whole number.
    """
    m = VERSION_SUFFIX.match(address)
    if m is None:
        _malformed(address, "V")
        return None
    return m.group("id"), int(m.group("n"))


def tag_key(raw: str) -> str:
    """Validate and case-fold a tag key; system keys (`_`) are refused."""
    if raw.startswith("_"):
        raise UsageError(
            f"tag {raw!r}: keys starting with '_' are system tags managed by keepui; "
            "choose a key that starts with a letter."
        )
    if not TAG_KEY.match(raw):
        raise UsageError(
            f"tag key {raw!r} is invalid: it must match ^[A-Za-z][A-Za-z0-9_-]*$ "
            "(e.g. -t topic=search)."
        )
    return raw.casefold()


def parse_tag_args(args: list[str] | None, *, allow_bare: bool) -> dict[str, list[str] | None]:
    """Parse repeated `-t k=v` options.

    Args:
        args: The raw option values.
        allow_bare: Accept `k` alone (a filter meaning "key present"): the value is None.

    Returns:
        key -> list of values (repeats of a key collect), [] for `k=` (remove), or None (bare).
    """
    out: dict[str, list[str] | None] = {}
    for raw in args or []:
        key, sep, value = raw.partition("=")
        key = tag_key(key.strip())
        if not sep:
            if not allow_bare:
                raise UsageError(f"tag {raw!r} needs a value: use -t {key}=VALUE.")
            out.setdefault(key, None)
            continue
        current = out.get(key)
        if value == "":
            out[key] = []
        elif current:
            if value not in current:
                current.append(value)
        else:
            out[key] = [value]
    return out


def merge_tags(base: UserTags, changes: dict[str, list[str] | None]) -> UserTags:
    """Apply per-key replacements to user tags; an empty list removes the key."""
    merged = {k: list(v) for k, v in base.items()}
    for key, values in changes.items():
        if values:
            merged[key] = list(values)
        else:
            merged.pop(key, None)
    return dict(sorted(merged.items()))


# -- put SOURCE: what kind of source a string names --------------------------------------
def is_url(source: str) -> bool:
    """Whether a source is an http(s) URL."""
    return source.lower().startswith(("http://", "https://"))


def local_path(source: str) -> Path | None:
    """The path a source names (`file://` URI or an existing path), else None (literal text).

    Any existing file counts, whatever its name: one with a newline in it too (issue 23).
    """
    from urllib.parse import unquote, urlparse

    if source.startswith("file://"):
        return Path(unquote(urlparse(source).path))
    if not source or len(source) >= 4096 or "\x00" in source:
        return None
    try:
        path = Path(source).expanduser()
        if os.path.lexists(path):
            return path
    except (OSError, RuntimeError, ValueError):  # a name too long, an unknown ~user
        return None
    return None


def source_kind(source: str | None) -> str:
    """`url`, `dir`, `file` or `text` (literal text, `-` or nothing: stdin) for `put SOURCE`."""
    if source is None or source == "-":
        return "text"
    if is_url(source):
        return "url"
    path = local_path(source)
    if path is None:
        return "text"
    try:
        return "dir" if path.is_dir() else "file"
    except OSError:
        return "file"


NOW_ID = "now"


def is_system_or_now(doc_id: str) -> bool:
    """Whether an id is a system document (`.…`) or a now note (`now`, `now:SCOPE`): neither
    is a research result, so find, context, reflect and flows leave them out unless asked."""
    return doc_id.startswith(".") or doc_id == NOW_ID or doc_id.startswith(NOW_ID + ":")


def now_id(scope: str | None) -> str:
    """The id of the working-intentions note: `now`, or `now:SCOPE`."""
    if scope is None:
        return NOW_ID
    scope = scope.strip()
    if not scope:
        raise UsageError("--scope needs a name, e.g. --scope project-x.")
    return check_id(f"{NOW_ID}:{scope}")


def safe_yaml(text: str) -> Any:
    """The YAML document in `text` (safe loader), or None when it does not parse."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        return YAML(typ="safe", pure=True).load(io.StringIO(text))
    except YAMLError:
        return None

"""Parse and check a state doc's YAML into a FlowDoc, naming what is wrong and where."""

from __future__ import annotations

import functools
import io
import re
from importlib import resources
from typing import Any

from keepui_engine.core.errors import FlowError
from keepui_engine.flows.expressions import compile_expr
from keepui_engine.flows.model import STATUSES, FlowDoc, Rule

_RULE_KEYS = {"id", "when", "do", "with", "then", "return"}
_DOC_KEYS = {"match", "rules", "post", "description"}


def parse(text: str, name: str) -> FlowDoc:
    """Parse a state doc.

    Args:
        text: Its YAML.
        name: Its name (for messages and `FlowDoc.name`).

    Raises:
        FlowError: The YAML or a rule is malformed; the message names the doc and the rule.
    """
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        data = YAML(typ="safe", pure=True).load(io.StringIO(text))
    except YAMLError as exc:
        raise FlowError(f"state doc {name!r} is not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise FlowError(f"state doc {name!r} must be a mapping with `match:` and `rules:`.")
    unknown = set(data) - _DOC_KEYS
    if unknown:
        raise FlowError(
            f"state doc {name!r} has unknown key(s) {sorted(unknown)}; use {sorted(_DOC_KEYS)}."
        )
    match = data.get("match", "sequence")
    if match not in ("sequence", "all"):
        raise FlowError(f"state doc {name!r}: match must be `sequence` or `all`, not {match!r}.")
    rules = _rules(data.get("rules"), name, "rules")
    post = _rules(data.get("post") or [], name, "post")
    if post and match != "all":
        raise FlowError(f"state doc {name!r}: `post:` only follows a `match: all` block.")
    description = str(data.get("description") or _first_comment(text))
    return FlowDoc(name, match, rules, post, description)


_WHERE = re.compile(r"\b(rules|post)\[(\d+)\]")


def check_text(text: str, name: str) -> FlowDoc:
    """Parse a state doc for storing: any problem is a FlowError that starts with the 1-based
    line it is on (`line 7: …`), found with ruamel.yaml's round-trip loader."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        data = YAML(typ="rt", pure=True).load(io.StringIO(text))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        raise FlowError(
            f"state doc {name!r}, line {line}: not valid YAML: {exc.problem or exc.context}"
        ) from exc
    except YAMLError as exc:
        raise FlowError(f"state doc {name!r}, line 1: not valid YAML: {exc}") from exc
    try:
        return parse(text, name)
    except FlowError as exc:
        line = _line_of(data, exc.message)
        raise FlowError(f"line {line}: {exc.message}") from exc


def _line_of(data: Any, message: str) -> int:
    """The line of the rule a message names (`rules[2]`), else of the first unknown key."""
    lc = getattr(data, "lc", None)
    if lc is None:
        return 1
    m = _WHERE.search(message)
    if m and isinstance(data.get(m.group(1)), list):
        rules = data[m.group(1)]
        index = int(m.group(2))
        if index < len(rules) and getattr(rules[index], "lc", None) is not None:
            return int(rules[index].lc.line) + 1
    unknown = [k for k in data if k not in _DOC_KEYS]
    named = [k for k in data if f"{k} must" in message or f"`{k}:`" in message]
    for key in unknown or named:
        return int(lc.key(key)[0]) + 1
    return 1


def _first_comment(text: str) -> str:
    for line in text.splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
        if line.strip():
            break
    return ""


def _rules(raw: Any, name: str, where: str) -> tuple[Rule, ...]:
    if not isinstance(raw, list) or (where == "rules" and not raw):
        raise FlowError(f"state doc {name!r}: `{where}:` must be a list of rules.")
    return tuple(_rule(r, name, f"{where}[{i}]") for i, r in enumerate(raw))


def _rule(raw: Any, name: str, where: str) -> Rule:
    at = f"state doc {name!r}, {where}"
    if not isinstance(raw, dict):
        raise FlowError(f"{at}: a rule is a mapping of {sorted(_RULE_KEYS)}.")
    unknown = set(raw) - _RULE_KEYS
    if unknown:
        raise FlowError(f"{at}: unknown key(s) {sorted(unknown)}; use {sorted(_RULE_KEYS)}.")
    if not ({"do", "then", "return"} & set(raw)):
        raise FlowError(f"{at}: a rule needs `do:`, `then:` or `return:`.")
    if "then" in raw and "return" in raw:
        raise FlowError(f"{at}: a rule has `then:` or `return:`, not both.")
    when = raw.get("when")
    if when is not None:
        when = str(when)
        try:
            compile_expr(when)
        except FlowError as exc:
            raise FlowError(f"{at}: {exc.message}") from exc
    args = raw.get("with") or {}
    if not isinstance(args, dict):
        raise FlowError(f"{at}: `with:` must be a mapping of argument names to values.")
    then, then_with = _then(raw.get("then"), at)
    returns, return_with = _return(raw.get("return"), at)
    do = raw.get("do")
    rid = raw.get("id")
    return Rule(
        id=None if rid is None else str(rid),
        when=when,
        do=None if do is None else str(do),
        args=dict(args),
        then=then,
        then_with=then_with,
        returns=returns,
        return_with=return_with,
    )


def _then(raw: Any, at: str) -> tuple[str | None, dict[str, Any]]:
    if raw is None:
        return None, {}
    if isinstance(raw, str):
        return raw, {}
    if isinstance(raw, dict) and isinstance(raw.get("state"), str):
        with_ = raw.get("with") or {}
        if not isinstance(with_, dict):
            raise FlowError(f"{at}: `then: with:` must be a mapping of params.")
        return raw["state"], dict(with_)
    raise FlowError(f"{at}: `then:` is a state name or {{state: NAME, with: {{...}}}}.")


def _return(raw: Any, at: str) -> tuple[str | None, dict[str, Any] | None]:
    if raw is None:
        return None, None
    status, with_ = (raw, None) if isinstance(raw, str) else (None, None)
    if isinstance(raw, dict):
        status, with_ = raw.get("status", "done"), raw.get("with")
        if with_ is not None and not isinstance(with_, dict):
            raise FlowError(f"{at}: `return: with:` must be a mapping.")
    if status not in STATUSES:
        raise FlowError(f"{at}: return status must be one of {', '.join(STATUSES)}.")
    return str(status), None if with_ is None else dict(with_)


@functools.cache
def _names() -> tuple[str, ...]:
    folder = resources.files("keepui_engine.flows") / "builtin"
    return tuple(
        sorted(p.name[: -len(".yaml")] for p in folder.iterdir() if p.name.endswith(".yaml"))
    )


def builtin_names() -> list[str]:
    """The names of the state docs shipped with keepui."""
    return list(_names())


def builtin_text(name: str) -> str | None:
    """The YAML of a shipped state doc, or None."""
    if name not in builtin_names():
        return None
    return (resources.files("keepui_engine.flows") / "builtin" / f"{name}.yaml").read_text("utf-8")


@functools.cache
@functools.lru_cache(maxsize=32)
def builtin_doc(name: str) -> FlowDoc | None:
    """A shipped state doc, parsed once per process; None when there is none of that name."""
    text = builtin_text(name)
    return None if text is None else parse(text, name)

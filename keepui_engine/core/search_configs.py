"""Search configurations: named overrides of keepui.toml's [search] (`[search.configs.NAME]`).

A configuration names the few search settings it changes (mode, fusion, the channel weights,
score fusion's prior, the threshold, the rerank, recency decay, the near-duplicate fold,
passages, the hit count); everything else comes from [search]. `default` is the built-in name
of [search] itself. `find --config NAME` searches with one, experiments compare them, and the
optimizer writes the best it found as one (`save`, which keeps the file's comments).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from keepui_engine.core.config_values import BadNumber
from keepui_engine.core.errors import ConfigError, UsageError

if TYPE_CHECKING:
    from keepui_engine.core.config import Settings

DEFAULT = "default"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
CHOICES = {
    "mode": ("dense", "bm25", "hybrid"),
    "fusion": ("score", "share", "rrf"),
    "rerank": ("relevance", "recency", "mix"),
}
# key -> (type, smallest, largest, exclusive smallest); None leaves a side open
NUMBERS: dict[str, tuple[type, float | None, float | None, bool]] = {
    "dense_weight": (float, 0, None, False),
    "bm25_weight": (float, 0, None, False),
    "rrf_k": (int, 0, None, False),
    "score_prior": (float, 0, None, True),
    "min_score": (float, None, None, False),
    "recency_weight": (float, 0, 1, False),
    "half_life_days": (float, None, None, False),
    "limit": (int, 1, 10_000, False),
}
FLAGS = ("dedup", "passages")
KEYS = (*CHOICES, *NUMBERS, *FLAGS)
DEFAULT_LIMIT = 10


def defaults(st: Settings) -> dict[str, Any]:
    """The [search] settings a configuration can change, as configuration keys."""
    return {
        "mode": st.search_mode,
        "fusion": st.fusion,
        "dense_weight": st.fusion_weights[0],
        "bm25_weight": st.fusion_weights[1],
        "rrf_k": st.rrf_k,
        "score_prior": st.fusion_prior,
        "min_score": st.min_score,
        "rerank": st.rerank,
        "recency_weight": st.recency_weight,
        "half_life_days": st.half_life_days,
        "dedup": st.dedup,
        "passages": st.passages,
        "limit": DEFAULT_LIMIT,
    }


def parse(search: dict[str, Any], where: str) -> dict[str, dict[str, Any]]:
    """The `[search.configs.NAME]` tables of a parsed [search], checked.

    Args:
        search: keepui.toml's [search] table.
        where: The file (or settings row) named in errors.

    Raises:
        ConfigError: A name or key that is not one, a value of the wrong kind or choice.
        BadNumber: A number out of range, nan or inf (a usage error, exit 1).
    """
    tables = search.get("configs", {})
    if not isinstance(tables, dict):
        raise ConfigError(
            f"{where}: [search] configs must be tables: [search.configs.NAME] with the "
            "settings NAME changes."
        )
    out: dict[str, dict[str, Any]] = {}
    for name, table in tables.items():
        head = f"[search.configs.{name}]"
        if name == DEFAULT:
            raise ConfigError(
                f"{where}: {head}: `default` is [search] itself; give the configuration "
                "another name."
            )
        if not NAME.fullmatch(name):
            raise ConfigError(
                f"{where}: {head}: a configuration's name is letters, digits, - and _ "
                "(at most 64, starting with a letter or digit)."
            )
        if not isinstance(table, dict):
            raise ConfigError(f"{where}: {head} must be a table of settings.")
        out[name] = check(table, f"{where}: {head}")
    return out


def check(values: dict[str, Any], where: str) -> dict[str, Any]:
    """Configuration values checked as keepui.toml's are (`where` names them in errors).

    Raises:
        ConfigError: A key a configuration does not have, or a wrong choice.
        BadNumber: A number out of range, nan or inf.
    """
    return {key: _value(key, value, where) for key, value in values.items()}


def _value(key: str, value: Any, where: str) -> Any:
    """One configuration value, checked against what `key` takes."""
    if key in CHOICES:
        if value not in CHOICES[key]:
            raise ConfigError(
                f"{where} {key} = {value!r}; choose one of {', '.join(CHOICES[key])}."
            )
        return value
    if key in FLAGS:
        if not isinstance(value, bool):
            raise ConfigError(f"{where} {key} = {value!r}; give true or false.")
        return value
    if key not in NUMBERS:
        raise ConfigError(
            f"{where}: no setting {key!r}; a configuration can set {', '.join(KEYS)}."
        )
    kind, low, high, open_low = NUMBERS[key]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise BadNumber(
            f"{where} {key} = {value!r}; give a{'n integer' if kind is int else ' number'}."
        )
    if isinstance(value, float) and not math.isfinite(value):
        raise BadNumber(f"{where} {key} = {value!r} is not a finite number.")
    number = float(value)  # type: ignore[arg-type]
    if (low is not None and (number < low or (open_low and number == low))) or (
        high is not None and number > high
    ):
        side = f"above {low:g}" if open_low else f"at least {low:g}"
        span = f"from {low:g} to {high:g}" if high is not None else side
        raise BadNumber(f"{where} {key} = {number:g} is out of range; give a number {span}.")
    return value


def names(st: Settings) -> list[str]:
    """`default`, then the configurations keepui.toml names, in its order."""
    return [DEFAULT, *st.search_configs]


def overrides(st: Settings, name: str | None) -> dict[str, Any]:
    """What configuration `name` sets ({} for None and `default`).

    Raises:
        UsageError: No configuration has that name (the message lists them).
    """
    if name is None or name == DEFAULT:
        return {}
    got = st.search_configs.get(name)
    if got is None:
        raise UsageError(
            f"--config {name!r}: no such search configuration; known: {', '.join(names(st))} "
            "(keepui config --configs lists them; add one as [search.configs.NAME] in "
            "keepui.toml)."
        )
    return dict(got)


def settings_of(st: Settings, name: str | None) -> dict[str, Any]:
    """Every configurable setting as configuration `name` has it."""
    return {**defaults(st), **overrides(st, name)}


def changes(st: Settings, name: str | None) -> dict[str, Any]:
    """The settings configuration `name` changes from the default (those it sets to another
    value than [search] has)."""
    base = defaults(st)
    return {k: v for k, v in overrides(st, name).items() if base.get(k) != v}


def apply(st: Settings, values: dict[str, Any]) -> Settings:
    """The settings with configuration values (keys of KEYS) in place of [search]'s.

    Raises:
        BadNumber: The channel weights would both be 0.
    """
    if not values:
        return st
    got = {**defaults(st), **values}
    if got["dense_weight"] + got["bm25_weight"] <= 0:
        raise BadNumber(
            f"dense_weight = {got['dense_weight']:g} and bm25_weight = {got['bm25_weight']:g}: "
            "at least one must be above 0."
        )
    return replace(
        st,
        search_mode=got["mode"],
        fusion=got["fusion"],
        fusion_weights=(float(got["dense_weight"]), float(got["bm25_weight"])),
        rrf_k=int(got["rrf_k"]),
        fusion_prior=float(got["score_prior"]),
        min_score=got["min_score"],
        rerank=got["rerank"],
        recency_weight=float(got["recency_weight"]),
        half_life_days=float(got["half_life_days"]),
        dedup=bool(got["dedup"]),
        passages=bool(got["passages"]),
    )


def configured(st: Settings, name: str | None) -> Settings:
    """The settings a find with configuration `name` runs with (`st` for None/default).

    Raises:
        UsageError: No configuration has that name.
    """
    return apply(st, overrides(st, name))


def limit_of(st: Settings, name: str | None) -> int:
    """How many hits configuration `name` shows (its `limit`, else 10)."""
    return int(overrides(st, name).get("limit", DEFAULT_LIMIT))


def toml_table(name: str, values: dict[str, Any]) -> str:
    """`[search.configs.NAME]` and its keys as TOML text."""

    def shown(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return f'"{v}"'
        return repr(v)

    rows = "".join(f"{k} = {shown(v)}\n" for k, v in values.items() if v is not None)
    return f"[search.configs.{name}]\n{rows}"


def save_check(st: Settings, name: str) -> None:
    """Refuse, before any work, a configuration that `save` could not write.

    Raises:
        UsageError: A name that is not one, `default`, or a store whose settings are not a
            keepui.toml (PostgreSQL keeps them in its database).
    """
    if name == DEFAULT or not NAME.fullmatch(name):
        raise UsageError(
            f"--save {name!r}: name the configuration with letters, digits, - and _ "
            "(not `default`, which is [search] itself)."
        )
    if st.url is not None:
        raise UsageError(
            "--save writes keepui.toml, and this PostgreSQL store keeps its settings in its "
            f"database: add [search.configs.{name}] to the keepui.toml row there yourself."
        )


def save(path: Path, name: str, values: dict[str, Any], comment: str = "") -> None:
    """Write configuration `name` into keepui.toml at `path`, replacing a table of that name
    and keeping every other line (comments included); checked before it replaces the file.

    Raises:
        UsageError: A name that is not one, or `default`.
        ConfigError: The file cannot be read or written, or would not parse.
    """
    import tomllib

    if name == DEFAULT or not NAME.fullmatch(name):
        raise UsageError(f"--save {name!r}: not a configuration name (letters, digits, - and _).")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}.") from exc
    lines = text.splitlines(keepends=True)
    header = re.compile(rf"\s*\[\s*search\s*\.\s*configs\s*\.\s*{re.escape(name)}\s*\]\s*(#.*)?$")
    start = next((i for i, line in enumerate(lines) if header.match(line)), None)
    note = "".join(f"# {line}\n" for line in comment.splitlines())
    table = toml_table(name, values)
    if start is None:
        body = "".join(lines)
        if body and not body.endswith("\n"):
            body += "\n"
        new = f"{body}\n{note}{table}"
    else:
        end = next(
            (j for j in range(start + 1, len(lines)) if lines[j].lstrip().startswith("[")),
            len(lines),
        )
        while end > start + 1 and lines[end - 1].lstrip().startswith("#"):
            end -= 1  # the comment above the next table stays with it
        new = "".join(lines[:start]) + table + "".join(lines[end:])
    try:
        parse(tomllib.loads(new).get("search", {}), str(path))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{path}: writing {name} would not parse ({exc}); nothing written."
        ) from None
    tmp = path.with_suffix(".toml.tmp")
    try:
        tmp.write_text(new, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror}.") from exc

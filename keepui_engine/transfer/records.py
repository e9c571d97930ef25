"""The export format: a header line, then one JSON item a line; checked before anything is written.

Header: {"format": "keepui-export", "format_version": 1, "model", "dim", "items",
"include": {"versions", "parts", "system", "vectors"}}. Item: {"id", "version", "text",
"summary", "tags", "sys", "content_hash", "created", "updated", "accessed"} plus, when
included, "versions" (the archived ones, oldest first), "parts" (of every exported version)
and "vectors" (content hash -> base64 of little-endian float32). Keys come in that fixed order
and no time of the export's own making is written, so the same store exports the same bytes.

A line holding just {"text": ...} (and any of "id", "tags", "summary") is an item too: plain
JSONL from elsewhere imports as new notes.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from keepui_engine.core.errors import KeepuiError
from keepui_engine.core.inputs import anonymous_id, check_id, content_hash, iso

FORMAT = "keepui-export"
FORMAT_VERSION = 1
INCLUDES = ("versions", "parts", "system", "vectors")


def dumps(record: dict[str, Any]) -> str:
    """One line of the file (no newline)."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def encode_vector(vec: np.ndarray) -> str:
    """A vector as base64 of little-endian float32."""
    return base64.b64encode(np.asarray(vec, "<f4").tobytes()).decode("ascii")


def decode_vector(raw: str, dim: int) -> np.ndarray:
    """The vector back; ValueError when it is not `dim` float32 values."""
    data = base64.b64decode(raw.encode("ascii"), validate=True)
    if len(data) != 4 * dim:
        raise ValueError(f"a vector of {len(data) // 4} values, the header says {dim}")
    return np.frombuffer(data, "<f4").astype(np.float32)


@dataclass
class Header:
    """What the first line says (defaults for a file without one)."""

    model: str | None = None
    dim: int | None = None
    items: int | None = None
    include: dict[str, bool] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)


class BadLine(ValueError):
    """A line that is not a valid item, with its 1-based number."""

    def __init__(self, line: int, problem: str) -> None:
        super().__init__(f"line {line}: {problem}")
        self.line = line
        self.problem = problem


def _time(value: Any, name: str, default: datetime) -> datetime:
    if value is None:
        return default
    if not isinstance(value, str):
        raise ValueError(f'"{name}" must be an ISO-8601 time string')
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f'"{name}" {value!r} is not an ISO-8601 time') from None
    return dt.astimezone(UTC).replace(tzinfo=None) if dt.tzinfo else dt


def _tags(value: Any, name: str = "tags") -> dict[str, list[str]]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f'"{name}" must be an object of KEY: VALUE or KEY: [VALUES]')
    out: dict[str, list[str]] = {}
    for key, raw in value.items():
        values = raw if isinstance(raw, list) else [raw]
        if not key or not all(isinstance(v, str) and v for v in values):
            raise ValueError(f'"{name}" {key!r}: values must be non-empty strings')
        out[str(key)] = list(values)
    return dict(sorted(out.items()))


def _text(value: Any, name: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ValueError(f'"{name}" must be a string')
    return value


def _version_fields(raw: dict[str, Any], name: str, now: datetime) -> dict[str, Any]:
    """text, summary, tags, sys, content_hash and updated of an item or archived version."""
    text = _text(raw.get("text"), f"{name}text")
    summary = _text(raw.get("summary"), f"{name}summary")
    if text is None and summary is None:
        raise ValueError(f'"{name}text" is missing (an item needs a text or a summary)')
    sys = raw.get("sys") or {}
    if not isinstance(sys, dict):
        raise ValueError(f'"{name}sys" must be an object')
    if text is not None and not text.strip() and not sys.get("_stub"):
        raise ValueError(f'"{name}text" is empty')
    given = raw.get("content_hash")
    if given is not None and not isinstance(given, str):
        raise ValueError(f'"{name}content_hash" must be a string')
    digest = content_hash(text) if text is not None else given or content_hash(summary or "")
    return {
        "text": text,
        "summary": summary,
        "tags": _tags(raw.get("tags"), f"{name}tags"),
        "sys": sys,
        "content_hash": digest,
        "updated": _time(raw.get("updated"), f"{name}updated", now),
    }


def check_item(raw: Any, header: Header, now: datetime) -> dict[str, Any]:
    """A normalised item, or ValueError saying what is wrong with it."""
    if not isinstance(raw, dict):
        raise ValueError("an item must be a JSON object")
    item = _version_fields(raw, "", now)
    doc_id = raw.get("id")
    if doc_id is None:
        doc_id = anonymous_id(item["text"] or item["summary"])
    if not isinstance(doc_id, str):
        raise ValueError('"id" must be a string')
    try:
        check_id(doc_id)
    except KeepuiError as exc:
        raise ValueError(exc.message) from None
    version = raw.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ValueError('"version" must be a whole number of 1 or more')
    item.update(
        id=doc_id,
        version=version,
        created=_time(raw.get("created"), "created", item["updated"]),
        accessed=_time(raw.get("accessed"), "accessed", item["updated"]),
        versions=_versions(raw.get("versions"), version, now),
        parts=_parts(raw.get("parts"), version),
        vectors=_vectors(raw.get("vectors"), header),
        has_parts="parts" in raw or bool(header.include.get("parts")),
    )
    return item


def _versions(raw: Any, head: int, now: datetime) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ValueError('"versions" must be a list')
    out = []
    for n, v in enumerate(raw):
        if not isinstance(v, dict):
            raise ValueError(f'"versions"[{n}] must be an object')
        number = v.get("version")
        if not isinstance(number, int) or not 1 <= number < head:
            raise ValueError(f'"versions"[{n}].version must be 1..{head - 1}')
        out.append({"version": number, **_version_fields(v, f"versions[{n}].", now)})
    if len({v["version"] for v in out}) != len(out):
        raise ValueError('"versions" holds the same version twice')
    return sorted(out, key=lambda v: v["version"])


_PART_KEYS = ("kind", "position", "summary")


def _parts(raw: Any, head: int) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ValueError('"parts" must be a list')
    out = []
    for n, p in enumerate(raw):
        if not isinstance(p, dict):
            raise ValueError(f'"parts"[{n}] must be an object')
        version, number = p.get("version", head), p.get("part")
        if not isinstance(version, int) or not 1 <= version <= head:
            raise ValueError(f'"parts"[{n}].version must be 1..{head}')
        if not isinstance(number, int) or number < 1:
            raise ValueError(f'"parts"[{n}].part must be a whole number of 1 or more')
        for key in _PART_KEYS:
            if not isinstance(p.get(key), str):
                raise ValueError(f'"parts"[{n}].{key} must be a string')
        text, title = _text(p.get("text"), "text"), _text(p.get("title"), "title")
        given = p.get("content_hash")
        digest = content_hash(text) if text is not None else given
        if not isinstance(digest, str):
            raise ValueError(f'"parts"[{n}] needs a text or a content_hash')
        out.append(
            {**{k: p[k] for k in _PART_KEYS}, "version": version, "part": number}
            | {"title": title, "text": text, "content_hash": digest}
        )
    if len({(p["version"], p["part"]) for p in out}) != len(out):
        raise ValueError('"parts" holds the same part twice')
    return sorted(out, key=lambda p: (p["version"], p["part"]))


def _vectors(raw: Any, header: Header) -> dict[str, np.ndarray]:
    if raw is None:
        return {}
    if not isinstance(raw, dict) or header.dim is None:
        raise ValueError('"vectors" must be an object, after a header naming the model and dim')
    try:
        return {str(h): decode_vector(v, header.dim) for h, v in raw.items()}
    except (ValueError, TypeError) as exc:
        raise ValueError(f'"vectors": {exc}') from None


def read_header(raw: dict[str, Any]) -> Header:
    """The header, or ValueError for another format or a newer version."""
    if raw.get("format") != FORMAT:
        raise ValueError(f"not a keepui export header (format {raw.get('format')!r})")
    version = raw.get("format_version")
    if version != FORMAT_VERSION:
        raise ValueError(
            f"format_version {version!r}: this keepui reads version {FORMAT_VERSION}; "
            "upgrade keepui to import it"
        )
    dim = raw.get("dim")
    include = raw.get("include") or {}
    links = raw.get("links") or {}
    if not isinstance(links, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in links.items()
    ):
        raise ValueError('"links" must map tag keys to their inverse verbs')
    return Header(
        raw.get("model"),
        dim if isinstance(dim, int) else None,
        raw.get("items"),
        {k: bool(include.get(k)) for k in INCLUDES},
        dict(links),
    )


def parse(lines: Any, *, now: datetime, on_line: Any = None) -> tuple[Header, list, list]:
    """Check every line of a file.

    Args:
        lines: The file's lines (str).
        now: The time given to items without their own.
        on_line: Called with the line number after each line (progress).

    Returns:
        (header, [(line number, item)], [BadLine]).
    """
    header = Header()
    items: list[tuple[int, dict[str, Any]]] = []
    bad: list[BadLine] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, 1):
        if on_line is not None:
            on_line(number)
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            bad.append(BadLine(number, f"not JSON ({exc.msg} at column {exc.colno})"))
            continue
        except (ValueError, RecursionError) as exc:  # nesting too deep, a number too long
            bad.append(BadLine(number, f"not JSON the reader accepts ({type(exc).__name__})"))
            continue
        try:
            if number == 1 and isinstance(raw, dict) and "format" in raw:
                header = read_header(raw)
                continue
            item = check_item(raw, header, now)
            if item["id"] in seen:
                raise ValueError(f"id {item['id']!r} already came on line {seen[item['id']]}")
            seen[item["id"]] = number
            items.append((number, item))
        except ValueError as exc:
            bad.append(BadLine(number, str(exc)))
    return header, items, bad


def wire(item: dict[str, Any]) -> dict[str, Any]:
    """A checked item in JSON-safe form, to send to the store's owner."""
    out = {k: v for k, v in item.items() if k != "vectors"}
    for key in ("created", "updated", "accessed"):
        out[key] = iso(out[key])
    out["versions"] = [{**v, "updated": iso(v["updated"])} for v in item["versions"]]
    out["vectors"] = {h: encode_vector(v) for h, v in item["vectors"].items()}
    return out


def unwire(item: dict[str, Any], dim: int | None) -> dict[str, Any]:
    """The inverse of `wire`."""
    out = dict(item)
    for key in ("created", "updated", "accessed"):
        out[key] = _time(out[key], key, datetime.now(UTC))
    out["versions"] = [
        {**v, "updated": _time(v["updated"], "updated", out["updated"])} for v in item["versions"]
    ]
    out["vectors"] = {h: decode_vector(v, dim or 0) for h, v in (item.get("vectors") or {}).items()}
    return out

"""How a LangGraph item maps onto a keepui document: its id, its tags, its text and its record.

A LangGraph item `(namespace, key) -> value` becomes one keepui document:

- id: `COLLECTION/` + each namespace label and the key, percent-encoded and joined by `/`
  (`langgraph/alice/prefs/theme`); deterministic, a valid keepui id, and never taken for a
  version or part address (`@`, `{` and `}` are encoded). When that would pass keepui's
  1024-character limit the id is `COLLECTION/#` + 32 hex of a hash of (namespace, key).
- tags: `lg_collection=COLLECTION`, one tag per namespace label (the i-th label under
  `namespace_keys[i]`, or `ns{i}` beyond them), `lg_key=KEY` and `lg_index=off` for items put
  with `index=False`; so `keepui find -t user=alice` sees the same items as the namespace.
- text (what keepui embeds and BM25 indexes): the value's string fields, one per line; or,
  with `index` paths, the texts at those paths, one per line, each also a part of its own
  (`ID@P{N}`, kind `field`, titled by its path) with its own vector and BM25 entry, as
  LangGraph's stores embed each field. The value's JSON when it has no text; a value with no
  text at its `index` paths is stored as not indexed (LangGraph gives it no vector either).
- summary: the record `{"value": ..., "namespace": [...], "key": ...}` as JSON; the value
  round-trips through it exactly (list_items and search hits carry summaries, so reading an
  item never needs its text).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

from langgraph.store.base.embed import get_text_at_path

COLLECTION_TAG, KEY_TAG, INDEX_TAG = "lg_collection", "lg_key", "lg_index"
RESERVED_TAGS = frozenset((COLLECTION_TAG, KEY_TAG, INDEX_TAG))
NOT_INDEXED = "off"
MAX_ID = 1024  # keepui_engine.core.inputs.MAX_ID
_TAG_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")  # keepui's rule for tag keys
_DEFAULT_KEY = re.compile(r"^ns([0-9]+)$")
_COLLECTION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


@dataclass(frozen=True)
class Record:
    """One LangGraph item as read back from keepui.

    Attributes:
        namespace: The item's namespace.
        key: Its key within the namespace.
        value: Its value, as put.
        created: When the item was first put (tz-aware UTC).
        updated: When its current value was put (tz-aware UTC).
        indexed: False when it was put with `index=False` (left out of searches by meaning).
    """

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created: datetime
    updated: datetime
    indexed: bool = True


@dataclass(frozen=True)
class Layout:
    """The naming scheme of one KeepuiStore: ids, tags and records.

    Args:
        collection: First segment of every id and value of the `lg_collection` tag; separates
            this store's items from other documents (and from other collections).
        namespace_keys: Tag keys for the first namespace labels (case-folded, as keepui does);
            label i beyond them is tagged `ns{i}`.

    Raises:
        ValueError: A key is not a valid keepui tag key, is repeated, is reserved, or is a
            default key of another position.
    """

    collection: str = "langgraph"
    namespace_keys: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not _COLLECTION.match(self.collection):
            raise ValueError(
                f"collection {self.collection!r}: use letters, digits, '_' and '-' "
                "(it starts every id)."
            )
        keys = tuple(k.casefold() for k in self.namespace_keys)
        for i, key in enumerate(keys):
            if not _TAG_KEY.match(key):
                raise ValueError(
                    f"namespace key {key!r} is not a keepui tag key (^[A-Za-z][A-Za-z0-9_-]*$)."
                )
            default = _DEFAULT_KEY.match(key)
            if key in RESERVED_TAGS or (default and int(default.group(1)) != i):
                raise ValueError(f"namespace key {key!r} is reserved by the LangGraph adapter.")
        if len(set(keys)) != len(keys):
            raise ValueError(f"namespace keys repeat: {keys!r}.")
        object.__setattr__(self, "namespace_keys", keys)

    def tag_key(self, depth: int) -> str:
        """The tag key of the namespace label at position `depth` (0-based)."""
        keys = self.namespace_keys
        return keys[depth] if depth < len(keys) else f"ns{depth}"

    def doc_id(self, namespace: Sequence[str], key: str) -> str:
        """The keepui id of `(namespace, key)`: deterministic, readable when short enough."""
        parts = [quote(label, safe="") for label in (*namespace, key)]
        doc_id = f"{self.collection}/" + "/".join(parts)
        if len(doc_id) <= MAX_ID:
            return doc_id
        digest = hashlib.sha256(json.dumps([list(namespace), key]).encode()).hexdigest()
        return f"{self.collection}/#{digest[:32]}"

    def tags(self, namespace: Sequence[str], key: str, *, indexed: bool) -> list[str]:
        """`KEY=VALUE` tags for a put (`lg_index=` clears a former `index=False`)."""
        out = [f"{COLLECTION_TAG}={self.collection}"]
        out += [f"{self.tag_key(i)}={label}" for i, label in enumerate(namespace) if label]
        if key:
            out.append(f"{KEY_TAG}={key}")
        out.append(f"{INDEX_TAG}={'' if indexed else NOT_INDEXED}")
        return out

    def filter_tags(self, prefix: Sequence[str]) -> list[str]:
        """Tag filters that keep this collection's items under a namespace prefix.

        A `*` label (a wildcard in list_namespaces conditions) adds no filter. The filters
        only narrow the candidates: callers still check each record's namespace exactly.
        """
        out = [f"{COLLECTION_TAG}={self.collection}"]
        out += [
            f"{self.tag_key(i)}={label}" for i, label in enumerate(prefix) if label and label != "*"
        ]
        return out

    def read(
        self, doc_id: str, summary: str, tags: Mapping[str, Any], times: Sequence[str]
    ) -> Record | None:
        """The record a document holds, or None when it is not one of this layout's items.

        Args:
            doc_id: The document id.
            summary: Its summary (the record's JSON).
            tags: Its tags (`lg_index` is read from them).
            times: Its created and updated times (ISO-8601).
        """
        try:
            data = json.loads(summary)
            namespace = tuple(data["namespace"])
            key, value = data["key"], data["value"]
        except (ValueError, TypeError, KeyError):
            return None
        if not isinstance(value, dict) or not isinstance(key, str):
            return None
        if self.doc_id(namespace, key) != doc_id:
            return None
        created, updated = (datetime.fromisoformat(t) for t in times)
        indexed = tags.get(INDEX_TAG) != NOT_INDEXED
        return Record(namespace, key, value, created, updated, indexed)


def record_json(namespace: Sequence[str], key: str, value: Mapping[str, Any]) -> str:
    """The summary that holds an item: its value first (what `keepui list` shows)."""
    record = {"value": dict(value), "namespace": list(namespace), "key": key}
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class Indexed:
    """What keepui stores for a value's text.

    Attributes:
        text: The document's text (every indexed text, one per line).
        blocks: One `field` block per text at the `index` paths (PutSpec.blocks), so each is
            a part of its own; None when the value's strings are embedded together.
        has_text: False when there was no text at the `index` paths (the text is then the
            value's JSON, and the item is not indexed).
    """

    text: str
    blocks: list[dict[str, Any]] | None
    has_text: bool = True


def indexed_text(value: Mapping[str, Any], fields: Sequence[str] | None) -> Indexed:
    """What keepui embeds for a value: the texts at `fields` (one part each), else every
    string in it (together, as one text).

    Falls back to the value's JSON when that leaves nothing (keepui stores no empty text).
    """
    if fields is None:
        texts = [t.strip() for t in _strings(value) if t.strip()]
        if texts:
            return Indexed("\n".join(texts), None)
        return Indexed(json.dumps(dict(value), ensure_ascii=False, sort_keys=True), None)
    found = [
        (path, t.strip()) for path in fields for t in get_text_at_path(value, path) if t.strip()
    ]
    if not found:
        return Indexed(json.dumps(dict(value), ensure_ascii=False, sort_keys=True), None, False)
    blocks = [
        {"text": text, "kind": "field", "index": i, "title": path}
        for i, (path, text) in enumerate(found, 1)
    ]
    return Indexed("\n".join(t for _, t in found), blocks)


def _strings(obj: Any) -> list[str]:
    """Every string in a JSON value, in document order (dict keys are not included)."""
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, Mapping):
        return [s for v in obj.values() for s in _strings(v)]
    if isinstance(obj, list | tuple):
        return [s for v in obj for s in _strings(v)]
    return []

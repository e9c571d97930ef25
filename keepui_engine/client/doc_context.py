"""get-context: what to show beside one document (similar items, parts, versions, edges and
the meta docs that apply), through the Workbench facade.

A meta doc is a `.meta/NAME` document whose YAML has `when:`, a mapping of tag keys to a
value, a list of values (any of them) or `"*"` (the key is present); it applies to an item
whose tags match every key. What it says is its `note:` (else its summary).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from keepui_engine.core.inputs import safe_yaml

if TYPE_CHECKING:
    from keepui_engine.client.workbench import Workbench

META_PREFIX = ".meta/"
SIMILAR = 5


def applies(when: dict[str, Any], tags: dict[str, Any]) -> bool:
    """Whether an item with `tags` matches every key of a meta doc's `when:`."""
    for key, wanted in when.items():
        have = tags.get(str(key).casefold())
        if have is None:
            return False
        values = have if isinstance(have, list) else [have]
        if wanted == "*":
            continue
        options = wanted if isinstance(wanted, list) else [wanted]
        if not {str(o) for o in options} & {str(v) for v in values}:
            return False
    return True


def meta_for(wb: Workbench, tags: dict[str, Any]) -> list[dict[str, Any]]:
    """The meta docs whose `when:` matches these tags: [{"id", "note", "when"}]."""
    out = []
    for meta in wb.list_items(META_PREFIX, limit=1000, sort="id"):
        doc = wb.get(meta.id)
        data = safe_yaml(doc.text or "")
        if not isinstance(data, dict) or not isinstance(data.get("when"), dict):
            continue
        if applies(data["when"], tags):
            note = data.get("note")
            out.append(
                {
                    "id": meta.id,
                    "note": str(note) if note is not None else doc.summary,
                    "when": data["when"],
                }
            )
    return out


def get_context(wb: Workbench, doc_id: str, similar: int = SIMILAR) -> dict[str, Any]:
    """One document with its context: {"item", "similar", "edges", "parts", "versions",
    "meta"} (see the module docstring)."""
    with wb.session():
        item = wb.get(doc_id)
        neighbours = wb.related(item.id, per_hit=similar)
        parts = [
            {
                "address": p.address,
                "part": p.part,
                "kind": p.kind,
                "title": p.title,
                "position": p.position,
                "summary": p.summary,
            }
            for p in wb.parts(item.id)
        ]
        versions = [v.to_dict() for v in wb.history(item.id)]
        user_tags = {k: v for k, v in item.tags.items() if not k.startswith("_")}
        meta = meta_for(wb, user_tags)
    return {
        "id": item.id,
        "item": item.to_dict(),
        "similar": [n for n in neighbours if n["via"] == "similar"],
        "edges": item.edges,
        "parts": parts,
        "versions": versions,
        "meta": meta,
    }

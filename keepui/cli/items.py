"""`keepui put|get|list|tag|del|stats`: writing and reading documents."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated
from urllib.parse import unquote, urlparse

import typer

from keepui.cli.options import FilterOpt, JsonFlag, NlFlag, StoreOpt, TagOpt
from keepui.cli.output import (
    emit_json,
    emit_ndjson,
    first_line,
    note,
    out,
    render_tags,
    short_time,
)
from keepui_engine import Item, UsageError, open_workbench

TEXT_SUFFIXES = {".md": "text/markdown", ".markdown": "text/markdown"}


def _read_source(source: str | None) -> tuple[str, str, str, str | None]:
    """(text, source kind, content type, default id) for literal text, `-`, a path or file://."""
    if source is None or source == "-":
        if source is None and sys.stdin.isatty():
            raise UsageError(
                "nothing to store: give TEXT, a file path, or - to read standard "
                'input (e.g. keepui put "a note").'
            )
        return sys.stdin.read(), "stdin", "text/plain", None
    path: Path | None = None
    if source.startswith("file://"):
        path = Path(unquote(urlparse(source).path))
        if not path.exists():
            raise UsageError(f"{source}: no such file. Check the path.")
    elif source and "\n" not in source and len(source) < 4096:
        candidate = Path(source).expanduser()
        try:
            path = candidate if candidate.exists() else None
        except OSError:
            path = None
    if path is None:
        return source, "inline", "text/plain", None
    if path.is_dir():
        raise UsageError(
            f"{path} is a directory; putting directories is not supported yet. "
            "Put its files one by one."
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}. Check its permissions.") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(
            f"{path} is not UTF-8 text; only text and markdown files can be put for now."
        ) from None
    if "\x00" in text:
        raise UsageError(
            f"{path} looks binary (it contains NUL bytes); only text and "
            "markdown files can be put for now."
        )
    uri = path.resolve().as_uri()
    return text, "file", TEXT_SUFFIXES.get(path.suffix.lower(), "text/plain"), uri


def put(
    source: Annotated[
        str | None,
        typer.Argument(
            help="Text to store, a path to a text/markdown file, file://URI, or - for stdin."
        ),
    ] = None,
    id: Annotated[str | None, typer.Option("--id", "-i", help="Document id.")] = None,  # noqa: A002
    tag: TagOpt = None,
    summary: Annotated[str | None, typer.Option("--summary", help="Use this summary.")] = None,
    store: StoreOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Store a note or a text file; a changed text or tags makes a new version.

    \b
    Examples:
      keepui put "Decided to use DuckDB for storage" -t topic=storage
      keepui put notes/meeting.md -i meeting-2026-11-22
      echo "from a pipe" | keepui put -
    """
    text, kind, ctype, default_id = _read_source(source)
    with open_workbench(store) as wb:
        result = wb.put(
            text, id=id or default_id, tags=tag, summary=summary, source=kind, content_type=ctype
        )
    if json_:
        emit_json(result.to_dict())
        return
    out(result.id)
    note(f"{result.action} {result.id} (version {result.version})")


def _print_item(item: Item) -> None:
    out("---")
    out(f"id: {item.id}")
    state = "current" if item.offset == 0 else f"@V{{{item.offset}}}"
    out(f"version: {item.version} of {item.versions} ({state})")
    out(f"created: {item.created}")
    out(f"updated: {item.updated}")
    tags = render_tags(item.tags)
    if tags:
        out("tags:")
        for line in tags:
            out(f"  {line}")
    if item.text is None or item.summary != item.text:
        out(f"summary: {first_line(item.summary, 200)}")
    out("---")
    if item.text is not None:
        out(item.text)


def get(
    address: Annotated[str, typer.Argument(help="Document id, or ID@V{N} for a version.")],
    version: Annotated[
        int | None,
        typer.Option("--version", "-V", help="Version: 0 current, 1 previous, -1 oldest."),
    ] = None,
    history: Annotated[bool, typer.Option("--history", "-H", help="List the versions.")] = False,
    store: StoreOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Show a document (text, summary, tags, timestamps) or its version history.

    \b
    Examples:
      keepui get meeting-2026-11-22
      keepui get meeting-2026-11-22 -V 1        # the previous version
      keepui get "meeting-2026-11-22@V{-1}"     # the oldest
      keepui get meeting-2026-11-22 --history --json
    """
    with open_workbench(store) as wb:
        if history:
            versions = wb.history(address)
            if json_:
                emit_json({"id": versions[0].id, "versions": [v.to_dict() for v in versions]})
                return
            for v in versions:
                out(
                    f"@V{{{v.offset}}}\tv{v.version}\t{short_time(v.updated)}\t{v.change:<7}\t"
                    f"{v.size:>6}\t{first_line(v.summary, 60)}"
                )
            return
        item = wb.get(address, version)
    if json_:
        emit_json(item.to_dict())
    else:
        _print_item(item)


def list_(
    prefix: Annotated[str | None, typer.Argument(help="Only ids starting with this.")] = None,
    tag: FilterOpt = None,
    sort: Annotated[
        str, typer.Option("--sort", help="updated, created, accessed or id.")
    ] = "updated",
    limit: Annotated[int, typer.Option("--limit", "-n", help="At most this many.")] = 20,
    store: StoreOpt = None,
    json_: JsonFlag = False,
    nl: NlFlag = False,
) -> None:
    """List documents by id prefix and tags, newest first.

    \b
    Examples:
      keepui list
      keepui list meeting- -t topic=storage --sort created -n 50
    """
    with open_workbench(store) as wb:
        items = wb.list_items(prefix, tags=tag, sort=sort, limit=limit)
    records = [{k: v for k, v in i.to_dict().items() if k != "text"} for i in items]
    if json_:
        emit_json({"items": records})
    elif nl:
        emit_ndjson(records)
    else:
        for i in items:
            out(f"{i.id}\t{short_time(i.updated)}\tv{i.version}\t{first_line(i.summary, 70)}")


def tag(
    doc_id: Annotated[str, typer.Argument(help="Document id.")],
    tag: TagOpt = None,
    remove: Annotated[
        list[str] | None, typer.Option("--remove", "-r", help="Remove this tag key (repeatable).")
    ] = None,
    store: StoreOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Set or remove tags; the previous version is archived.

    \b
    Examples:
      keepui tag meeting-2026-11-22 -t status=done -r draft
    """
    with open_workbench(store) as wb:
        result = wb.tag(doc_id, tags=tag, remove=remove)
    if json_:
        emit_json(result.to_dict())
        return
    out(result.id)
    note(f"{result.action} {result.id} (version {result.version})")


def delete(
    doc_id: Annotated[str, typer.Argument(help="Document id.")],
    purge: Annotated[
        bool, typer.Option("--purge", help="Remove the document and its whole history.")
    ] = False,
    store: StoreOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Revert a document to its previous version (delete it if it has none).

    \b
    Examples:
      keepui del meeting-2026-11-22           # undo the last change
      keepui del meeting-2026-11-22 --purge   # remove it with all its versions
    """
    with open_workbench(store) as wb:
        result = wb.delete(doc_id, purge=purge)
    if json_:
        emit_json(result.to_dict())
        return
    out(result.id)
    if result.action == "reverted":
        note(f"reverted {result.id} to version {result.version}")
    else:
        note(f"{result.action} {result.id} ({result.removed_versions} version(s) removed)")


def stats(store: StoreOpt = None, json_: JsonFlag = False) -> None:
    """Counts of documents, versions and vectors, and the store's size."""
    with open_workbench(store) as wb:
        s = wb.stats()
    if json_:
        emit_json(s.to_dict())
        return
    out(f"store:    {s.store}")
    out(f"items:    {s.items}")
    out(f"versions: {s.versions}")
    out(f"vectors:  {s.vectors}")
    out(f"size:     {s.store_bytes / 1e6:.1f} MB")
    out(f"model:    {s.model} ({s.dim} dimensions)")


def reindex(store: StoreOpt = None, json_: JsonFlag = False) -> None:
    """Re-embed every stored version with the model keepui.toml names, and rebuild the index.

    \b
    Run it after changing [embedding] in keepui.toml; until then the store refuses to mix
    vectors from two models.
    """
    with open_workbench(store) as wb:
        note(f"re-embedding with {wb.embedder.name} …")
        s = wb.reindex()
    if json_:
        emit_json(s.to_dict())
    else:
        out(f"reindexed {s.versions} version(s) of {s.items} item(s) with {s.model}")

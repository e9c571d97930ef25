"""`keepui put|get|list|tag|del|stats`: writing and reading documents."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from keepui.cli.options import FilterOpt, JsonFlag, NlFlag, StoreOpt, TagOpt, bounded_count
from keepui.cli.output import (
    emit_json,
    emit_ndjson,
    first_line,
    note,
    out,
    render_tags,
    short_time,
)
from keepui_engine import Interrupted, Item, UsageError, open_workbench


def put(
    source: Annotated[
        str | None,
        typer.Argument(
            help="Text, a file (PDF, DOCX, PPTX, HTML, audio, image, text), a directory, "
            "a file:// URI, an http(s) URL, or - for stdin."
        ),
    ] = None,
    id: Annotated[str | None, typer.Option("--id", "-i", help="Document id.")] = None,  # noqa: A002
    tag: TagOpt = None,
    text: Annotated[
        str | None,
        typer.Option(
            "--text",
            "-T",
            help="Store this text as a note, even if it looks like a file name or a URL.",
        ),
    ] = None,
    summary: Annotated[str | None, typer.Option("--summary", help="Use this summary.")] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option("--exclude", "-x", help="Leave out matching files in a directory (glob)."),
    ] = None,
    store: StoreOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Store a note, a file, a directory or a URL; a changed text or tags makes a new version.

    \b
    Examples:
      keepui put "Decided to use DuckDB for storage" -t topic=storage
      keepui put notes/meeting.md -i meeting-2026-11-22
      keepui put ~/papers -x "drafts/*" -t project=thesis
      keepui put https://example.org/article.html
      echo "from a pipe" | keepui put -
      keepui put --text "notes.md"               # the words, not the file

    A SOURCE that looks like a path (it has a / or starts with . or ~, or ends in a file
    extension) but names nothing that exists is an error (exit 2), never a note.
    """
    from keepui.cli.ingest import put_sources, read_stdin
    from keepui_engine import NotFound, looks_like_path, source_kind

    if text is not None:
        if source is not None:
            raise UsageError(
                f"give the note either as SOURCE or with --text, not both (SOURCE {source!r})."
            )
        if exclude:
            raise UsageError("--exclude applies to directories; --text stores a note.")
        _put_text(text, "inline", id=id, tags=tag, summary=summary, store=store, json_=json_)
        return
    kind = source_kind(source)
    if kind == "text" and source not in (None, "-") and looks_like_path(source):
        raise NotFound(f"no such file: {source}", hint="to store this text as a note, use --text")
    if kind != "text":
        if summary is not None:
            raise UsageError("--summary is for text notes; files and URLs are summarized.")
        code = put_sources(source, kind, id=id, tags=tag, exclude=exclude, store=store, json_=json_)
        if code:
            raise typer.Exit(code)
        return
    if exclude:
        raise UsageError("--exclude applies to directories; give a directory to put.")
    if source is None or source == "-":
        if source is None and sys.stdin.isatty():
            raise UsageError(
                "nothing to store: give TEXT, a file path, or - to read standard "
                'input (e.g. keepui put "a note").'
            )
        source, origin = read_stdin(store), "stdin"
    else:
        origin = "inline"
    _put_text(source, origin, id=id, tags=tag, summary=summary, store=store, json_=json_)


def _put_text(
    text: str,
    origin: str,
    *,
    id: str | None,  # noqa: A002
    tags: list[str] | None,
    summary: str | None,
    store: str | None,
    json_: bool,
) -> None:
    with open_workbench(store) as wb:
        result = wb.put(text, id=id, tags=tags, summary=summary, source=origin)
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
    if item.edges:
        out("edges:")
        for verb, ids in item.edges.items():
            out(f"  {verb}: {', '.join(ids)}")
    if item.text is None or item.summary != item.text:
        out(f"summary: {first_line(item.summary, 200)}")
    for work in item.pending:
        line = f"pending: {work['task']} {work['state']}"
        if work.get("error"):
            line += f" after {work['attempts']} attempt(s): {work['error']}"
        out(line)
    out("---")
    if item.text is not None:
        out(item.text)


def _print_context(got: dict[str, Any]) -> None:
    _print_item(Item.from_dict(got["item"]))
    sections = [
        (
            "similar",
            [
                f"{s['id']}  {s['score']:.3f}  {first_line(s['summary'], 60)}"
                for s in got["similar"]
            ],
        ),
        (
            "parts",
            [
                f"{p['address']}  {p['title'] or ''}  {first_line(p['summary'], 50)}"
                for p in got["parts"]
            ],
        ),
        (
            "versions",
            [
                f"@V{{{v['offset']}}} v{v['version']}  {short_time(v['updated'])}  {v['change']}"
                for v in got["versions"]
            ],
        ),
        ("meta", [f"{m['id']}: {m['note']}" for m in got["meta"]]),
    ]
    for title, lines in sections:
        if lines:
            out(f"--- {title}")
            for line in lines:
                out(f"  {line}")


def get(
    address: Annotated[str, typer.Argument(help="Document id, ID@V{N}, or a file's path.")],
    version: Annotated[
        int | None,
        typer.Option("--version", "-V", help="Version: 0 current, 1 previous, -1 oldest."),
    ] = None,
    history: Annotated[bool, typer.Option("--history", "-H", help="List the versions.")] = False,
    parts: Annotated[
        bool, typer.Option("--parts", "-P", help="List the parts of a long document.")
    ] = False,
    context: Annotated[
        bool,
        typer.Option(
            "--context",
            "-C",
            help="With similar items, parts, versions, edges and the meta docs that apply.",
        ),
    ] = False,
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
      keepui get report.pdf --parts               # ID@P{N} shows one part
    """
    if sum((history, parts, context)) > 1:
        raise UsageError("choose one of --history, --parts and --context.")
    if context:
        if version is not None:
            raise UsageError("--context shows the current version; drop -V.")
        with open_workbench(store, create=False) as wb:
            got = wb.get_context(wb.resolve_id(address))
        if json_:
            emit_json(got)
        else:
            _print_context(got)
        return
    with open_workbench(store, create=False) as wb:
        address = wb.resolve_id(address)
        if parts:
            found = wb.parts(address, version)
            if json_:
                emit_json({"id": address, "parts": [p.to_dict() for p in found]})
                return
            if not found:
                note(f"{address} has no parts (it is short enough to be one piece)")
            for p in found:
                label = f" {p.title}" if p.title else ""
                out(f"{p.address}\t{p.position}\t{p.kind}{label}\t{first_line(p.summary, 60)}")
            return
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
    limit: Annotated[
        int, typer.Option("--limit", "-n", help="At most this many.", callback=bounded_count)
    ] = 20,
    facets: Annotated[
        bool,
        typer.Option("--facets", help="Count each tag value over the matching documents instead."),
    ] = False,
    all_: Annotated[
        bool, typer.Option("--all", help="Include system documents (ids starting with .).")
    ] = False,
    store: StoreOpt = None,
    json_: JsonFlag = False,
    nl: NlFlag = False,
) -> None:
    """List documents by id prefix and tags, newest first.

    \b
    Examples:
      keepui list
      keepui list meeting- -t topic=storage --sort created -n 50
      keepui list -t project=atlas --facets       # tag values and their counts
    """
    if facets:
        with open_workbench(store, create=False) as wb:
            counts = wb.facets(tags=tag, prefix=prefix)
        if json_:
            emit_json({"facets": counts})
        elif nl:
            emit_ndjson(
                [
                    {"key": k, "value": v, "count": n}
                    for k, vs in counts.items()
                    for v, n in vs.items()
                ]
            )
        else:
            if not counts:
                note("no tags on the matching documents")
            for key, values in counts.items():
                out(f"{key}:")
                for value, n in values.items():
                    out(f"  {n:>6}  {value}")
        return
    with open_workbench(store, create=False) as wb:
        items = wb.list_items(prefix, tags=tag, sort=sort, limit=limit, include_system=all_)
    records = [{k: v for k, v in i.to_dict().items() if k != "text"} for i in items]
    if json_:
        emit_json({"items": records})
    elif nl:
        emit_ndjson(records)
    else:
        for i in items:
            out(f"{i.id}\t{short_time(i.updated)}\tv{i.version}\t{first_line(i.summary, 70)}")


def tag(
    doc_id: Annotated[str, typer.Argument(help="Document id, or the path of a file put.")],
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
    with open_workbench(store, create=False) as wb:
        result = wb.tag(wb.resolve_id(doc_id, whole=True), tags=tag, remove=remove)
    if json_:
        emit_json(result.to_dict())
        return
    out(result.id)
    note(f"{result.action} {result.id} (version {result.version})")


def delete(
    doc_id: Annotated[str, typer.Argument(help="Document id, or the path of a file put.")],
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
    with open_workbench(store, create=False) as wb:
        result = wb.delete(wb.resolve_id(doc_id, whole=True), purge=purge)
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
    with open_workbench(store, create=False) as wb:
        s = wb.stats()
    if json_:
        emit_json(s.to_dict())
        return
    out(f"store:    {s.store}")
    out(f"items:    {s.items}" + (f" (and {s.system_items} system)" if s.system_items else ""))
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
    done = [0, 0]

    def progress(count: int, total: int) -> None:
        done[:] = [count, total]

    with open_workbench(store, create=False) as wb:
        note(f"re-embedding with {wb.embedder.name} …")
        try:
            s = wb.reindex(progress=progress)
        except KeyboardInterrupt:
            raise Interrupted(
                f"interrupted: {done[0]} text(s) re-embedded, {max(done[1] - done[0], 0)} "
                "not started (the store keeps its old model until every text is done)",
                hint="run keepui reindex again to continue: texts already re-embedded are skipped",
            ) from None
    if json_:
        emit_json(s.to_dict())
    else:
        out(f"reindexed {s.versions} version(s) of {s.items} item(s) with {s.model}")

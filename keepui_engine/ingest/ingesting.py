"""put PATH | URL | DIR: read, extract, OCR and store each source, reporting every outcome.

Runs in the calling process (extraction needs no store) and stores through the facade's
put_many in batches, so it works the same in-process, over the socket, or under the lock.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from keepui_engine.core import interrupts
from keepui_engine.core.errors import Interrupted, KeepuiError, StoreError, UsageError
from keepui_engine.core.inputs import is_url, local_path
from keepui_engine.core.types import IngestEntry, IngestReport, PutSpec
from keepui_engine.ingest import sources

if TYPE_CHECKING:
    from keepui_engine.core.config import Settings
    from keepui_engine.core.types import PutResult
    from keepui_engine.ingest.extracted import Extracted, Limits

Progress = Callable[[int, int, str], None]
BATCH = 64
FLUSH_S = 2.0


def build_spec(
    extracted: Extracted,
    loaded: sources.Loaded,
    *,
    doc_id: str,
    user_tags: list[str],
    source: str,
) -> tuple[PutSpec, list[str]]:
    """The PutSpec for an extracted source: format tags under the user's, blocks, system tags."""
    notes = list(extracted.notes)
    user_keys = {t.split("=", 1)[0].strip().lower() for t in user_tags}
    fmt = [
        f"{k}={' '.join(str(v).split())}"
        for k, v in extracted.tags.items()
        if k.lower() not in user_keys and str(v).strip()
    ]
    text = extracted.text
    if not text.strip():
        lines = [loaded.name] + [f"{k}: {v}" for k, v in extracted.tags.items()]
        text = "\n".join(lines)
        notes.append("no body text: stored its name and metadata so it can be found")
    blocks = [
        {"text": s.text, "kind": s.kind, "index": s.index, "title": s.title}
        for s in extracted.sections
    ]
    spec = PutSpec(
        text,
        id=doc_id,
        tags=fmt + list(user_tags),
        source=source,
        content_type=extracted.content_type,
        meta=dict(loaded.meta),
        blocks=blocks or None,
    )
    return spec, notes


def with_ocr(extracted: Extracted, loaded: sources.Loaded, max_pixels: int) -> Extracted:
    """Fill scanned pages (or an image) with OCR text when tesseract is installed; images
    over `max_pixels` (`[ingest] ocr_max_pixels`) are left unread, with a note."""
    from dataclasses import replace

    if not extracted.ocr_pages:
        return extracted
    from keepui_engine.ingest import ocr
    from keepui_engine.ingest.extracted import Section

    if not ocr.ocr_available():
        note = (
            f"OCR unavailable: {len(extracted.ocr_pages)} scanned page(s)/image not read; "
            "install tesseract-ocr (Debian) and put the file again"
        )
        return replace(extracted, notes=[*extracted.notes, note])
    if extracted.content_type.startswith("image/"):
        pixels = int(extracted.tags.get("width", 0)) * int(extracted.tags.get("height", 0))
        if pixels > max_pixels:
            note = (
                f"OCR skipped: the image has {pixels:,} pixels, over the OCR cap of "
                f"{max_pixels:,} (raise `[ingest] ocr_max_pixels` in keepui.toml to read it)"
            )
            return replace(extracted, notes=[*extracted.notes, note])
        text = ocr.ocr_image(loaded.data, max_pixels).strip()
        if not text:
            return replace(extracted, notes=[*extracted.notes, "OCR found no text in the image"])
        body = f"{extracted.text}\n\n{text}".strip()
        return replace(extracted, text=body, notes=[*extracted.notes, "text read by OCR"])
    got = ocr.ocr_pdf_pages(loaded.data, list(extracted.ocr_pages), max_pixels)
    sections = [s for s in extracted.sections if s.kind != "page" or s.index - 1 not in got]
    sections += [Section(t.strip(), "page", p + 1) for p, t in got.items() if t.strip()]
    sections.sort(key=lambda s: s.index if s.kind == "page" else 0)
    text = "\n\n".join(s.text for s in sections) if sections else extracted.text
    done = sum(1 for t in got.values() if t.strip())
    return replace(
        extracted,
        text=text,
        sections=sections,
        notes=[*extracted.notes, f"{done} scanned page(s) read by OCR"],
    )


def limits_of(settings: Settings) -> Limits:
    """The extraction caps `[ingest]` in keepui.toml sets."""
    from keepui_engine.ingest.extracted import Limits

    return Limits(
        max_file_mb=settings.max_file_mb,
        pdf_page_cap=settings.pdf_page_cap,
        max_pixels=settings.max_pixels,
        max_text_mb=settings.max_text_mb,
        timeout_s=settings.extract_timeout_s,
        ocr_max_pixels=settings.ocr_max_pixels,
    )


def prepare(
    source: str, settings: Settings, *, doc_id: str | None, user_tags: list[str]
) -> tuple[PutSpec, list[str]]:
    """Read or fetch one file or URL, extract it and build its PutSpec (raises KeepuiError)."""
    from keepui_engine.ingest.extract import extract

    if is_url(source):
        loaded = sources.fetch(
            source,
            timeout_s=settings.fetch_timeout_s,
            max_mb=settings.fetch_max_mb,
            max_redirects=settings.fetch_max_redirects,
        )
        kind, default_id = "url", source
    else:
        path = local_path(source) or Path(source)
        loaded = sources.read_file(path, settings.max_file_mb)
        kind, default_id = "file", loaded.uri
    extracted = extract(
        loaded.data,
        name=loaded.name,
        content_type=loaded.declared_type,
        limits=limits_of(settings),
    )
    extracted = with_ocr(extracted, loaded, settings.ocr_max_pixels)
    return build_spec(
        extracted, loaded, doc_id=doc_id or default_id, user_tags=user_tags, source=kind
    )


def ingest(
    put_many: Callable[[list[PutSpec]], list[PutResult]],
    settings: Settings,
    targets: list[str],
    *,
    doc_id: str | None = None,
    tags: list[str] | None = None,
    exclude: list[str] | None = None,
    ignore: list[str] | None = None,
    progress: Progress | None = None,
    strict: bool = False,
) -> IngestReport:
    """Store files, directories and URLs; one bad source never stops the rest.

    Args:
        put_many: The facade's put_many.
        settings: The store's settings (caps, chunking, fetch limits).
        targets: Paths, `file://` URIs, directories or http(s) URLs.
        doc_id: Id for a single file or URL (not allowed with directories or several).
        tags: `KEY=VALUE` tags for every document; they win over the format's tags.
        exclude: Globs to leave out of directory walks.
        ignore: Globs from the store's `.ignore` document.
        progress: Called with (done, total, current source) as files finish.
        strict: Raise the first error instead of reporting it (one explicit file or URL).
    """
    tags = list(tags or [])
    globs = list(exclude or []) + list(ignore or [])
    entries: list[IngestEntry] = []
    todo: list[str] = []
    for target in targets:
        path = None if is_url(target) else local_path(target)
        if path is not None and path.is_dir():
            for file, reason, failed in sources.walk(path, globs, [settings.store]):
                if reason:
                    status = "failed" if failed else "skipped"
                    entries.append(IngestEntry(str(file), None, status, None, reason))
                else:
                    todo.append(str(file))
        elif path is None and not is_url(target):
            if strict:
                raise sources.FetchError(f"{target}: no such file or directory; check the path.")
            entries.append(
                IngestEntry(target, None, "failed", None, f"{target}: no such file or directory")
            )
        else:
            todo.append(target)
    if doc_id is not None and len(todo) != 1:
        raise UsageError("--id names one document: give exactly one file or URL with it.")
    run = _Run(put_many, len(todo), progress, settings.batch_files)
    if progress:  # the total is known before the first file is read: say it at once
        progress(0, len(todo), "")
    try:
        for target in todo:
            interrupts.checkpoint("extract")
            try:
                spec, notes = prepare(target, settings, doc_id=doc_id, user_tags=tags)
                run.add(target, spec, notes)
            except Exception as exc:  # noqa: BLE001 - one bad file never stops the rest
                if not isinstance(exc, KeepuiError):
                    exc = StoreError(
                        f"{target}: unexpected {type(exc).__name__} while reading it: {exc}",
                        title="Unexpected error",
                    )
                if strict:
                    raise exc from None
                run.finished(IngestEntry(target, None, _skip_or_fail(exc), None, exc.message))
        run.flush()
    except KeyboardInterrupt:
        raise run.interrupted() from None
    return IngestReport(entries + run.entries)


class _Run:
    """The files of one ingest: extracted ones wait in a batch, stored a batch at a time.

    A batch is stored when it holds `size` files or has waited FLUSH_S seconds, so an
    interrupt loses at most a few seconds of extraction.
    """

    def __init__(
        self,
        put_many: Callable[[list[PutSpec]], list[PutResult]],
        total: int,
        progress: Progress | None,
        size: int = BATCH,
    ) -> None:
        self.put_many, self.total, self.progress, self.size = put_many, total, progress, size
        self.entries: list[IngestEntry] = []
        self.batch: list[tuple[str, PutSpec, list[str]]] = []
        self.started = 0.0

    def add(self, target: str, spec: PutSpec, notes: list[str]) -> None:
        if not self.batch:
            self.started = time.monotonic()
        self.batch.append((target, spec, notes))
        if len(self.batch) >= self.size or time.monotonic() - self.started >= FLUSH_S:
            self.flush()

    def finished(self, entry: IngestEntry) -> None:
        self.entries.append(entry)
        if self.progress:
            self.progress(len(self.entries), self.total, entry.source)

    def flush(self) -> None:
        batch, self.batch = self.batch, []
        if not batch:
            return
        try:
            stored = _store(self.put_many, batch)
        except interrupts.Deferred:  # the interrupt came during the commit, which finished
            stored = [IngestEntry(t, s.id, "stored", None, None, n) for t, s, n in batch]
            self.entries += stored
            raise
        self.entries += stored
        if self.progress:
            self.progress(len(self.entries), self.total, batch[-1][0])

    def interrupted(self) -> Interrupted:
        kept = ("created", "updated", "unchanged", "stored")
        stored = sum(e.status in kept for e in self.entries)
        left = self.total - len(self.entries)
        return Interrupted(
            f"interrupted: {stored} stored, {left} not started",
            hint="run the same command again to continue: unchanged files are skipped",
            stored=[str(e.id) for e in self.entries if e.id and e.status in ("created", "updated")],
        )


def _skip_or_fail(exc: KeepuiError) -> str:
    """Binaries found inside a directory walk are skipped; every other problem is a failure."""
    from keepui_engine.ingest.extracted import BinaryFile

    return "skipped" if isinstance(exc, BinaryFile) else "failed"


def _store(
    put_many: Callable[[list[PutSpec]], list[PutResult]],
    batch: list[tuple[str, PutSpec, list[str]]],
) -> list[IngestEntry]:
    """Put a batch; when it fails, put its specs one by one so only the bad one fails."""
    try:
        results = put_many([spec for _, spec, _ in batch])
    except KeepuiError:
        if len(batch) == 1:
            raise
        out: list[IngestEntry] = []
        for one in batch:
            try:
                out += _store(put_many, [one])
            except KeepuiError as exc:
                out.append(IngestEntry(one[0], one[1].id, "failed", None, exc.message))
        return out
    return [
        IngestEntry(target, r.id, r.action, r.version, None, notes)
        for (target, _, notes), r in zip(batch, results, strict=True)
    ]


def ignore_globs(text: str | None) -> list[str]:
    """Globs from the `.ignore` document: one per line, `#` comments and blanks skipped."""
    if not text:
        return []
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]

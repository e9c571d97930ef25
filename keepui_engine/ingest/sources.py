"""Where documents come from: files (size-capped reads), directory walks, and http(s) URLs."""

from __future__ import annotations

import fnmatch
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from keepui_engine.core.config import store_exists
from keepui_engine.core.errors import NotFound, UsageError
from keepui_engine.core.inputs import is_url, local_path, looks_like_path, split_address

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache"}
BINARY_SUFFIXES = {
    ".exe", ".dll", ".so", ".dylib", ".o", ".a", ".pyc", ".pyo", ".class", ".jar", ".whl",
    ".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".rar", ".zst", ".iso", ".dmg",
    ".bin", ".dat", ".db", ".sqlite", ".duckdb", ".wal", ".parquet", ".npy", ".npz", ".pt",
    ".onnx", ".safetensors", ".woff", ".woff2", ".ttf", ".otf", ".ico", ".mp4", ".mov",
    ".avi", ".mkv", ".gif", ".bmp", ".psd", ".xlsx", ".xls", ".odt", ".ods",
}  # fmt: skip
# A store's own files and folders, left out when a folder put is also a store (`--store DIR`).
STORE_FILES = ("keepui.*", "store.lock", "store.queue", "vectors.*", "eval.json")
STORE_DIRS = {"bm25"}


class FetchError(UsageError):
    """A source could not be read or fetched; the message names it and what to do."""

    exit_code = 2
    public_kind = "not_found"


@dataclass(frozen=True)
class Loaded:
    """The bytes of one source and what is known about it.

    Attributes:
        data: The raw bytes.
        name: File name or URL path (for format detection and messages).
        uri: `file://` URI or the final URL after redirects.
        declared_type: Content type the server declared (URLs), else None.
        meta: System tags to record (`_source_uri`, `_file_size`, `_file_mtime`).
    """

    data: bytes
    name: str
    uri: str
    declared_type: str | None
    meta: dict[str, object]


def read_file(path: Path, max_mb: float) -> Loaded:
    """Read a file after checking it exists, is a regular file and is under the size cap."""
    shown = display_name(str(path))
    try:
        st = path.stat()
    except OSError as exc:
        if exc.errno == 40:  # ELOOP
            raise UsageError(f"{shown}: symlink loop; fix or remove the link.") from None
        raise FetchError(f"{shown}: cannot read it ({exc.strerror}); check the path.") from None
    if not path.is_file():
        raise UsageError(f"{shown}: not a regular file; give a file, a directory or a URL.")
    if st.st_size > max_mb * 1024 * 1024:
        raise UsageError(
            f"{shown}: {st.st_size / 1024 / 1024:.1f} MB is over the {max_mb:g} MB cap; "
            "raise [ingest] max_file_mb in keepui.toml to store it."
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FetchError(
            f"{shown}: cannot read it ({exc.strerror}); check its permissions."
        ) from None
    mtime = datetime.fromtimestamp(st.st_mtime, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    uri = file_uri(path)
    meta = {"_source_uri": uri, "_file_size": st.st_size, "_file_mtime": mtime}
    return Loaded(data, display_name(path.name), uri, None, meta)


def file_uri(path: Path) -> str:
    """The `file://` URI of a path: its absolute bytes percent-encoded (RFC 3986).

    A name with a newline, a tab or bytes that are not UTF-8 gets a plain-ASCII URI
    (`bad%FF%20name.txt`), which is a valid document id; `path_from_uri` turns it back.
    """
    raw = os.fsencode(path.resolve())
    return "file://" + urllib.parse.quote(raw, safe="/")


def file_address(arg: str) -> str | None:
    """The address `put` gives the file an argument names: `file://` and its absolute path,
    any `@V{N}`/`@P{N}` suffix kept. None unless the argument is an existing file or looks
    like a path (URLs, `file://` ids and ids such as `.ignore` are ids already)."""
    if arg.startswith("file://") or is_url(arg):
        return None
    base, suffix = split_address(arg)
    text, kept = (base, suffix) if suffix and local_path(arg) is None else (arg, "")
    path = local_path(text)
    if path is not None and path.is_dir():
        return None
    hidden = text.startswith(".") and not text.startswith(("./", "../"))
    if path is None and (hidden or not looks_like_path(text)):
        return None
    try:
        return file_uri(Path(text).expanduser()) + kept
    except (OSError, RuntimeError):  # a symlink loop, an unknown ~user
        return None


def path_from_uri(uri: str) -> Path:
    """The path a `file://` URI names, decoded to bytes first so undecodable names round-trip."""
    raw = urllib.parse.unquote_to_bytes(urllib.parse.urlsplit(uri).path)
    return Path(os.fsdecode(raw))


def display_name(name: str) -> str:
    """A file name safe to store and print: bytes that are not UTF-8 become U+FFFD."""
    return os.fsencode(name).decode("utf-8", errors="replace")


def walk(
    root: Path, exclude: list[str], stores: Iterable[Path] = ()
) -> Iterator[tuple[Path, str | None, bool]]:
    """Files under `root` in a stable order, each with a reason to leave it out (or None) and
    whether that is a failure (a folder or file that cannot be read) rather than a skip.

    Hidden files and folders, `.git`, `node_modules`, `__pycache__`, virtual environments,
    symlinked folders and binaries by suffix are skipped; `exclude` globs match the path
    relative to `root` or the bare name. A keepui store is never put: a folder below `root`
    that holds one (or is one of `stores`) is skipped whole, with one reason; when `root` is
    itself a store, its store files are left out (one reason) and its other files walked.
    A folder that cannot be listed is reported as failed and the walk goes on.
    """
    own = {_real(s) for s in stores}
    unreadable: list[tuple[Path, OSError]] = []

    def cannot_list(exc: OSError) -> None:
        unreadable.append((Path(exc.filename), exc))

    def excluded(rel: str, name: str) -> bool:
        return any(fnmatch.fnmatch(rel, g) or fnmatch.fnmatch(name, g) for g in exclude)

    try:
        in_store = store_exists(root) or _real(root) in own
    except OSError:  # an unreadable root: os.walk reports it below
        in_store = False
    if in_store:
        yield root, f"holds a keepui store: its files ({', '.join(STORE_FILES)}) left out", False
    for top, dirs, files in os.walk(root, onerror=cannot_list, followlinks=False):
        yield from _unreadable(unreadable)
        here = Path(top)
        keep = []
        for d in sorted(dirs):
            full = here / d
            rel = full.relative_to(root).as_posix()
            if d.startswith(".") or d in SKIP_DIRS or excluded(rel, d):
                continue
            try:
                why = _skip_folder(full, own, in_store and here == root)
            except OSError as exc:
                unreadable.append((full, exc))
                continue
            if why is not None:
                if why:
                    yield full, why, False
                continue
            keep.append(d)
        dirs[:] = keep
        yield from _unreadable(unreadable)
        for f in sorted(files):
            full = here / f
            rel = full.relative_to(root).as_posix()
            if f.startswith(".") or excluded(rel, f):
                continue
            if in_store and here == root and any(fnmatch.fnmatch(f, g) for g in STORE_FILES):
                continue
            if full.suffix.lower() in BINARY_SUFFIXES:
                yield full, f"binary file ({full.suffix.lower()})", False
                continue
            yield full, None, False
    yield from _unreadable(unreadable)


def _skip_folder(folder: Path, own: set[Path], top_of_store: bool) -> str | None:
    """Why a folder is not walked ("" to leave it out silently), or None to walk it."""
    if (folder / "pyvenv.cfg").exists() or (top_of_store and folder.name in STORE_DIRS):
        return ""
    if folder.is_symlink():
        return "symlinked folder (not followed)"
    if store_exists(folder) or _real(folder) in own:
        return "a keepui store (never put)"
    return None


def _unreadable(errors: list[tuple[Path, OSError]]) -> Iterator[tuple[Path, str, bool]]:
    """The folders os.walk (or a check of ours) could not read, as failures; clears `errors`."""
    for folder, exc in errors:
        reason = exc.strerror or type(exc).__name__
        yield folder, f"cannot read this folder ({reason}); check its permissions", True
    errors.clear()


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path.absolute()


class _Redirects(urllib.request.HTTPRedirectHandler):
    def __init__(self, limit: int) -> None:
        super().__init__()
        self.max_redirections = limit  # type: ignore[misc]  # urllib reads the instance's
        self.max_repeats = limit  # type: ignore[misc]


def fetch(url: str, *, timeout_s: float, max_mb: float, max_redirects: int) -> Loaded:
    """GET an http(s) URL with a timeout, a size cap and a redirect cap."""
    if not url.lower().startswith(("http://", "https://")):
        raise UsageError(f"{url}: only http:// and https:// URLs can be fetched.")
    opener = urllib.request.build_opener(_Redirects(max_redirects))
    request = urllib.request.Request(url, headers={"User-Agent": "keepui/0.1"})
    cap = int(max_mb * 1024 * 1024)
    deadline = time.monotonic() + timeout_s
    try:
        with opener.open(request, timeout=timeout_s) as resp:
            declared = resp.headers.get("Content-Length")
            if declared and declared.isdigit() and int(declared) > cap:
                raise FetchError(
                    f"{url}: {int(declared) / 1024 / 1024:.1f} MB is over the {max_mb:g} MB "
                    "cap; raise [fetch] max_mb in keepui.toml."
                )
            chunks, size = [], 0
            while chunk := resp.read(65536):
                size += len(chunk)
                if size > cap:
                    raise FetchError(
                        f"{url}: the body is over the {max_mb:g} MB cap; raise [fetch] max_mb."
                    )
                if time.monotonic() > deadline:
                    raise FetchError(
                        f"{url}: timed out after {timeout_s:g} s; try again or raise "
                        "[fetch] timeout_s."
                    )
                chunks.append(chunk)
            final = resp.geturl()
            ctype = resp.headers.get_content_type() if resp.headers.get("Content-Type") else None
    except urllib.error.HTTPError as exc:
        if exc.code in (301, 302, 303, 307, 308):
            raise FetchError(
                f"{url}: more than {max_redirects} redirects; raise [fetch] max_redirects."
            ) from None
        raise FetchError(f"{url}: the server answered {exc.code} {exc.reason}.") from None
    except (TimeoutError, OSError, urllib.error.URLError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, TimeoutError) or "timed out" in str(reason):
            raise FetchError(
                f"{url}: timed out after {timeout_s:g} s; try again or raise [fetch] timeout_s."
            ) from None
        raise FetchError(f"{url}: cannot fetch it ({reason}).") from None
    name = final.split("?")[0].rstrip("/").rsplit("/", 1)[-1] or final
    meta = {"_source_uri": final, "_file_size": size}
    return Loaded(b"".join(chunks), name, final, ctype, meta)


def resolve_address(arg: str, stored: Callable[[str], bool], *, whole: bool = False) -> str:
    """The address a command's ID argument names: itself when stored (or an address of a
    stored id), else the `file://` address of the file it names (`file_address`).

    Args:
        arg: An id, `ID@V{N}`/`ID@P{N}`, or the path of a file as it was given to `put`.
        stored: Whether a document with exactly this id exists.
        whole: The command acts on a whole document (tag, del, analyze): refuse addresses of
            a version or a part.

    Raises:
        NotFound: The argument names a file whose `file://` id is not stored either.
        UsageError: `whole`, and the argument is the address of a version or part.
    """
    base, suffix = split_address(arg)
    put_as = file_address(arg)
    if put_as is None and not (whole and suffix):
        return arg
    if stored(arg):
        return arg
    if put_as is None or (suffix and stored(base)):
        return _whole(arg, base, suffix, whole)
    put_base, put_suffix = split_address(put_as)
    if stored(put_base):
        return _whole(put_as, base, put_suffix, whole)
    raise NotFound(
        f"no document with id {base!r}, nor with {put_base!r}, the id `keepui put` gives "
        "that file. Put the file first; `keepui list file://` lists the files stored."
    )


def _whole(address: str, base: str, suffix: str, whole: bool) -> str:
    if whole and suffix:
        raise UsageError(
            f"{base + suffix!r} is the address of a version or part of {base!r}, not an id; "
            f"this command acts on the whole document: give {base!r} (ids cannot contain "
            "@V{ or @P{)."
        )
    return address

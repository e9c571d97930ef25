"""The one error model: every engine failure is a KeepuiError with a title and a fix."""

from __future__ import annotations


class KeepuiError(Exception):
    """Root of all engine errors.

    Args:
        message: What went wrong, naming the input (and, when no hint is given, what to do).
        title: A short heading for dialogs and the CLI's `Error:` line.
        hint: What to do about it, when the message does not say.
    """

    exit_code = 2
    kind = "error"
    #: The error kinds scripts see in `{"error": {"kind": ...}}`.
    public_kind = "store"

    def __init__(self, message: str, title: str | None = None, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.title = title or self.default_title()
        self.hint = hint

    @classmethod
    def default_title(cls) -> str:
        """Return the title used when none is given."""
        return "keepui error"

    def to_dict(self) -> dict[str, str | None]:
        """Serialise for the store socket."""
        return {
            "type": type(self).__name__,
            "title": self.title,
            "message": self.message,
            "hint": self.hint,
        }


class UsageError(KeepuiError):
    """The input is malformed: a bad tag, id, date or option value."""

    exit_code = 1
    kind = "usage"
    public_kind = "usage"

    @classmethod
    def default_title(cls) -> str:
        """Return the title used when none is given."""
        return "Invalid input"


class NotFound(KeepuiError):
    """The id or version asked for does not exist."""

    kind = "not_found"
    public_kind = "not_found"

    @classmethod
    def default_title(cls) -> str:
        """Return the title used when none is given."""
        return "Not found"


class StoreError(KeepuiError):
    """The store cannot be opened, read or written."""

    kind = "store"

    @classmethod
    def default_title(cls) -> str:
        """Return the title used when none is given."""
        return "Store error"


class ProviderError(KeepuiError):
    """An embedding or other provider is missing or failed."""

    kind = "provider"
    public_kind = "provider"

    @classmethod
    def default_title(cls) -> str:
        """Return the title used when none is given."""
        return "Provider error"


class ConfigError(KeepuiError):
    """keepui.toml is invalid."""

    kind = "config"

    @classmethod
    def default_title(cls) -> str:
        """Return the title used when none is given."""
        return "Configuration error"


class FlowError(UsageError):
    """A state doc is malformed: bad YAML, an unknown rule key, an expression that cannot parse."""

    kind = "flow"

    @classmethod
    def default_title(cls) -> str:
        """Return the title used when none is given."""
        return "Flow error"


class Interrupted(KeepuiError):
    """Ctrl-C or SIGTERM stopped a long command; what was finished is stored.

    Args:
        stored: The ids the command had stored before it stopped (a command that prints
            ids prints these; `--json` lists them in its error document).
    """

    exit_code = 130
    kind = "interrupted"
    public_kind = "interrupted"

    def __init__(
        self,
        message: str,
        title: str | None = None,
        hint: str | None = None,
        stored: list[str] | None = None,
    ) -> None:
        super().__init__(message, title, hint)
        self.stored = list(stored or [])

    def to_dict(self) -> dict[str, str | None]:
        """Serialise for the store socket (the stored ids as one line each)."""
        data = super().to_dict()
        if self.stored:
            data["stored"] = "\n".join(self.stored)
        return data

    @classmethod
    def default_title(cls) -> str:
        """Return the title used when none is given."""
        return "Interrupted"


_BY_NAME: dict[str, type[KeepuiError]] = {
    c.__name__: c
    for c in (
        KeepuiError,
        UsageError,
        NotFound,
        StoreError,
        ProviderError,
        ConfigError,
        FlowError,
        Interrupted,
    )
}


def error_from_dict(data: dict[str, str | None]) -> KeepuiError:
    """Rebuild an error sent over the store socket."""
    cls = _BY_NAME.get(data.get("type") or "", KeepuiError)
    if cls is Interrupted:
        stored = (data.get("stored") or "").splitlines()
        return Interrupted(
            data.get("message") or "interrupted", data.get("title"), data.get("hint"), stored
        )
    return cls(data.get("message") or "unknown error", data.get("title"), data.get("hint"))

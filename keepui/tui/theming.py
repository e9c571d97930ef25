"""Where themes/ lives (wheel or source), keepui's palettes, and the theme keepui.toml picks."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

from textual.theme import Theme

THEME_FILES = (
    "base.tcss",
    "main.tcss",
    "document.tcss",
    "diff.tcss",
    "flows.tcss",
    "experiments.tcss",
)
DEFAULT_THEME = "keepui-dark"

KEEPUI_DARK = Theme(
    name="keepui-dark",
    primary="#5FA8D3",
    secondary="#3D5A80",
    accent="#F4A259",
    warning="#F4A259",
    error="#E05263",
    success="#7BC47F",
    foreground="#E4E6EB",
    background="#15181E",
    surface="#1C2028",
    panel="#262C38",
    dark=True,
    variables={"match": "#F4A259", "pane-border": "#3A4250"},
)

KEEPUI_LIGHT = Theme(
    name="keepui-light",
    primary="#1F6FB2",
    secondary="#4A6FA5",
    accent="#B4541A",
    warning="#B7791F",
    error="#C53030",
    success="#2F855A",
    foreground="#1A202C",
    background="#F7F7F5",
    surface="#FFFFFF",
    panel="#E6E9EE",
    dark=False,
    variables={"match": "#B4541A", "pane-border": "#C5CBD3"},
)

THEMES = (KEEPUI_DARK, KEEPUI_LIGHT)


def themes_dir() -> Path:
    """The themes/ directory: inside the installed package first, else the source checkout.

    Raises:
        FileNotFoundError: Neither exists (a broken install).
    """
    packaged = resources.files("keepui") / "themes"
    if packaged.is_dir():
        return Path(str(packaged))
    source = Path(__file__).resolve().parents[2] / "themes"
    if source.is_dir():
        return source
    raise FileNotFoundError(f"keepui's themes/ directory is missing (looked in {source})")


def css_paths() -> list[Path]:
    """Absolute paths of every tcss file, base first (Textual resolves relative ones oddly)."""
    root = themes_dir()
    return [root / name for name in THEME_FILES]


def derived_variables(variables: dict[str, str]) -> dict[str, str]:
    """Our CSS variables, derived from a theme's colour system when the theme does not set them.

    Args:
        variables: The variables Textual generated for the current theme.
    """
    return {
        "pane-border": variables["border-blurred"],
        "pane-border-focus": variables["border"],
        "match": variables["accent"],
        "diff-added": variables["success-muted"],
        "diff-removed": variables["error-muted"],
        "diff-added-word": variables["success"],
        "diff-removed-word": variables["error"],
    }


def configured_theme(store: Path) -> str | None:
    """`[tui] theme` from the store's keepui.toml, or None when unset or unreadable."""
    try:
        data = tomllib.loads((store / "keepui.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return None
    tui = data.get("tui")
    name = tui.get("theme") if isinstance(tui, dict) else None
    return name if isinstance(name, str) and name else None


def save_theme(store: Path, name: str) -> None:
    """Remember a theme chosen in the workbench: `[tui] theme` in the store's keepui.toml,
    edited in place (its other lines and comments stay as they are)."""
    path = store / "keepui.toml"
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return
    setting = f'theme = "{name}"'
    section = None
    tui_at = None
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            section = stripped.strip("[]").strip()
            if section == "tui":
                tui_at = i
        elif section == "tui" and stripped.split("=", 1)[0].strip() == "theme":
            lines[i] = setting
            break
    else:
        if tui_at is None:
            lines += ["", "[tui]", setting]
        else:
            lines.insert(tui_at + 1, setting)
    try:
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    except OSError:
        return

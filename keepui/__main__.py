"""python -m keepui runs the CLI."""

from keepui.cli import main

main()

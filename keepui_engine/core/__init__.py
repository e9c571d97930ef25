"""The base every tier stands on, importing nothing else of keepui_engine.

What an operation is made of (types, errors, inputs and their parsing, moments), the store's
settings (keepui.toml), and the process plumbing below any store: the owner file and its
socket frames (wire, liveness, server), file locks, the read/write gate, interrupts, private
file modes. Nothing here opens a database or loads a model; the CLI's fast path imports
`core.wire` alone, so this package's `__init__` stays empty.
"""

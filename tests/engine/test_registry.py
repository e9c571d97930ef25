"""The operations registry: every operation declared once, every call names one, every
declaration is called and runs, and a server refuses a name that is not an operation."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
from support import make_fake_store

from keepui_engine import UsageError, open_workbench
from keepui_engine.core import server
from keepui_engine.ops import registry

ROOT = Path(__file__).resolve().parents[2]


def _called_operations() -> dict[str, list[str]]:
    """Operation name -> where it is called (`.call("NAME", ...)` in keepui and keepui_engine)."""
    found: dict[str, list[str]] = {}
    for package in ("keepui", "keepui_engine"):
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "call"
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)
                ):
                    where = f"{path.relative_to(ROOT)}:{node.lineno}"
                    found.setdefault(node.args[0].value, []).append(where)
    return found


def test_every_call_names_a_declared_operation_and_every_operation_is_called() -> None:
    called = _called_operations()
    unknown = {name: where for name, where in called.items() if name not in registry.OPERATIONS}
    assert not unknown, f"calls of operations the registry does not declare: {unknown}"
    uncalled = sorted(set(registry.OPERATIONS) - set(called))
    assert not uncalled, f"declared operations nothing calls: {uncalled}"


def test_every_target_and_type_resolves() -> None:
    for op in registry.OPERATIONS.values():
        assert op.name and op.target.count(":") == 1
        fn = registry.resolve(op.target)
        assert callable(fn), op.name
        params = list(inspect.signature(fn).parameters)
        assert params[0] in ("self", "engine"), f"{op.name}: first parameter {params[0]}"
        for arg in op.inputs:
            assert arg in params, f"{op.name}: decodes {arg!r}, which it does not take"
        for spec in [op.result, *op.inputs.values()]:
            if spec is not None:
                assert hasattr(registry.resolve(spec), "from_dict"), (op.name, spec)
        assert not (op.reads and op.client_write), f"{op.name} both reads and writes"


def test_a_name_that_is_not_an_operation_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="unknown operation 'nope'"):
        registry.get("nope")
    store = make_fake_store(tmp_path / "s")
    owner = open_workbench(store, own=True)
    try:
        owner.put("alpha", id="a")
        owner.serve(worker=False)
        sock = server.connect(store)
        assert sock is not None
        with pytest.raises(UsageError, match="unknown operation 'get_everything'"):
            server.call(sock, "get_everything", {}, 10.0, None)
        client = open_workbench(store)
        assert client.get("a").text == "alpha"  # the server goes on answering
        with pytest.raises(UsageError, match="unknown operation"):
            client.call("__init__")  # never an attribute of the engine
    finally:
        owner.close()

"""The small, safe predicate language of `when:` and of `{...}` templates (no eval)."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Mapping
from typing import Any

from keepui_engine.core.errors import FlowError


class _Missing:
    """A name or key that is not there: false in tests, None when rendered."""

    def __repr__(self) -> str:
        return "missing"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()

_STRINGS = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'")
_CONSTANTS = {
    "true": True,
    "false": False,
    "null": None,
    "True": True,
    "False": False,
    "None": None,
}


def _size(x: Any) -> int:
    return 0 if x is MISSING or x is None else len(x)


def _union(*lists: Any) -> list[Any]:
    """The items of the lists in order, each once (so narrowing twice is stable)."""
    out: list[Any] = []
    for items in lists:
        for x in [] if items is MISSING or items is None else items:
            if x not in out:
                out.append(x)
    return out


def _join(items: Any, sep: str = ", ") -> str:
    return "" if items is MISSING or items is None else sep.join(map(str, items))


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "size": _size,
    "join": _join,
    "union": _union,
    "len": _size,
    "min": min,
    "max": max,
    "abs": abs,
    "round": round,
    "str": str,
    "int": int,
    "float": float,
}


def _to_python(source: str) -> str:
    """CEL-style `&&`, `||` and `!` become Python's, outside string literals."""
    out, last = [], 0
    for m in _STRINGS.finditer(source):
        out.append(_ops(source[last : m.start()]))
        out.append(m.group(0))
        last = m.end()
    out.append(_ops(source[last:]))
    return "".join(out)


def _ops(code: str) -> str:
    code = code.replace("&&", " and ").replace("||", " or ")
    return re.sub(r"!(?!=)", " not ", code)


@functools.lru_cache(maxsize=1024)
def compile_expr(source: str) -> ast.expr:
    """Parse an expression once (raises FlowError naming it when it is not valid)."""
    try:
        tree = ast.parse(_to_python(source).strip(), mode="eval").body
    except SyntaxError as exc:
        raise FlowError(f"cannot parse the expression {source!r}: {exc.msg}.") from exc
    _check(tree, source)
    return tree


_ALLOWED = (
    ast.BoolOp,
    ast.And,
    ast.Or,
    ast.UnaryOp,
    ast.Not,
    ast.USub,
    ast.UAdd,
    ast.BinOp,
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.Mod,
    ast.Compare,
    ast.Eq,
    ast.NotEq,
    ast.Lt,
    ast.LtE,
    ast.Gt,
    ast.GtE,
    ast.In,
    ast.NotIn,
    ast.Name,
    ast.Load,
    ast.Attribute,
    ast.Subscript,
    ast.Constant,
    ast.List,
    ast.Tuple,
    ast.Dict,
    ast.Call,
    ast.Slice,
    ast.IfExp,
)


def _check(tree: ast.AST, source: str) -> None:
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise FlowError(
                f"the expression {source!r} uses {type(node).__name__}, which flows do not "
                "allow: use names, comparisons, and/or/not, arithmetic, lists and size()."
            )
        if isinstance(node, ast.Call) and not (
            isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS and not node.keywords
        ):
            raise FlowError(
                f"the expression {source!r} calls something other than "
                f"{', '.join(sorted(FUNCTIONS))}."
            )
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            raise FlowError(f"the expression {source!r} reads a private name {node.attr!r}.")


def evaluate(source: str, context: Mapping[str, Any]) -> Any:
    """The value of an expression; names and keys that are absent are MISSING."""
    return _eval(compile_expr(source), context)


def test(source: str, context: Mapping[str, Any]) -> bool:
    """A `when:` predicate: true or false; a missing name or a type mismatch is false."""
    try:
        return bool(evaluate(source, context))
    except (TypeError, ValueError, ZeroDivisionError):
        return False


def _get(obj: Any, key: Any) -> Any:
    if obj is MISSING or obj is None:
        return MISSING
    if isinstance(obj, Mapping):
        return obj.get(key, MISSING)
    if isinstance(obj, (list, tuple, str)) and isinstance(key, (int, slice)):
        try:
            return obj[key]
        except IndexError:
            return MISSING
    return MISSING


_BIN = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Mod: lambda a, b: a % b,
}
_CMP = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


def _eval(node: ast.expr, ctx: Mapping[str, Any]) -> Any:  # noqa: C901 - one case per node
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        return ctx.get(node.id, MISSING)
    if isinstance(node, ast.Attribute):
        return _get(_eval(node.value, ctx), node.attr)
    if isinstance(node, ast.Subscript):
        sl = node.slice
        key: Any
        if isinstance(sl, ast.Slice):
            key = slice(
                *(None if p is None else _eval(p, ctx) for p in (sl.lower, sl.upper, sl.step))
            )
        else:
            key = _eval(sl, ctx)
        return _get(_eval(node.value, ctx), key)
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.And):
            value: Any = True
            for v in node.values:
                value = _eval(v, ctx)
                if not value:
                    return value
            return value
        value = False
        for v in node.values:
            value = _eval(v, ctx)
            if value:
                return value
        return value
    if isinstance(node, ast.UnaryOp):
        operand = _eval(node.operand, ctx)
        if isinstance(node.op, ast.Not):
            return not operand
        if operand is MISSING:
            return MISSING
        return -operand if isinstance(node.op, ast.USub) else +operand
    if isinstance(node, ast.BinOp):
        a, b = _eval(node.left, ctx), _eval(node.right, ctx)
        if a is MISSING or b is MISSING:
            return MISSING
        return _BIN[type(node.op)](a, b)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, ctx)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _eval(right_node, ctx)
            if left is MISSING or right is MISSING:
                return False
            if not _CMP[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_eval(e, ctx) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {
            _eval(k, ctx): _eval(v, ctx)
            for k, v in zip(node.keys, node.values, strict=True)
            if k is not None
        }
    if isinstance(node, ast.IfExp):
        return _eval(node.body if _eval(node.test, ctx) else node.orelse, ctx)
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)
        args = [_eval(a, ctx) for a in node.args]
        return FUNCTIONS[node.func.id](*args)
    raise FlowError(f"unsupported expression element {type(node).__name__}")


_TEMPLATE = re.compile(r"\{([^{}]+)\}")


def render(value: Any, context: Mapping[str, Any]) -> Any:
    """Fill `{expr}` templates in a `with:` value (recursively through lists and dicts).

    A string that is one whole template keeps the value's type (a list stays a list); templates
    inside a longer string are interpolated as text. MISSING renders as None (or "").
    """
    if isinstance(value, str):
        whole = _TEMPLATE.fullmatch(value.strip())
        if whole:
            result = evaluate(whole.group(1), context)
            return None if result is MISSING else result
        return _TEMPLATE.sub(lambda m: _text(evaluate(m.group(1), context)), value)
    if isinstance(value, list):
        return [render(v, context) for v in value]
    if isinstance(value, dict):
        return {k: render(v, context) for k, v in value.items()}
    return value


def _text(value: Any) -> str:
    return "" if value is MISSING or value is None else str(value)

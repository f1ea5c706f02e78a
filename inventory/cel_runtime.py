"""The celpy side of ``inventory.cel``: extension functions, the ``device`` variable, and a
budgeted interpreter. Imported on first use: celpy and its grammar take about 0.8 s to load,
which every snapshot command would otherwise pay before reading a file.

The budget: every node the interpreter visits costs one step, and strings or lists built by
``+``, ``replace``, ``split``, ``lowerAscii``, ``upperAscii`` cost one step per
``SIZE_PER_STEP`` characters or items (cel-go charges traversal by size the same way). An
evaluation that runs past ``inventory.cel.MAX_STEPS`` stops with ``OverBudget``.
"""

from __future__ import annotations

import re
import sys
import threading
from decimal import Decimal
from typing import Any

import celpy
from celpy import celtypes, evaluation

from inventory.cel import MAX_STEPS, Quantity, SelectorError, Semver
from inventory.parse import Device, parse_quantity

SIZE_PER_STEP = 10

_budget = threading.local()


class OverBudget(Exception):
    """An evaluation ran out of its step budget (not a ``CELEvalError``: nothing catches it)."""


def charge(steps: int) -> None:
    """Spend ``steps`` of the running evaluation's budget; raises ``OverBudget`` past it.
    Outside an evaluation (no budget set) it does nothing."""
    left = getattr(_budget, "left", None)
    if left is None:
        return
    left -= steps
    _budget.left = left
    if left < 0:
        raise OverBudget


def charge_size(size: int) -> None:
    charge(1 + size // SIZE_PER_STEP)


class _Evaluator(evaluation.Evaluator):
    """celpy's interpreter, charging one step per node visited (macros' nested evaluations
    included: they visit through the same method)."""

    def _visit_tree(self, tree: Any) -> Any:
        charge(1)
        return super()._visit_tree(tree)

    def sub_evaluator(self, ast: Any) -> _Evaluator:
        return _Evaluator(ast, activation=self.activation)


class _Runner(celpy.InterpretedRunner):
    def evaluate(self, context: Any) -> Any:
        _budget.left = MAX_STEPS
        try:
            return _Evaluator(ast=self.ast, activation=self.new_activation()).evaluate(context)
        finally:
            _budget.left = None


def steps_left() -> int | None:
    """The running evaluation's remaining budget (None outside an evaluation)."""
    return getattr(_budget, "left", None)


def _err(msg: str) -> celpy.CELEvalError:
    return celpy.CELEvalError(msg, TypeError, None)


def _as_semver(v: Any) -> Semver | None:
    if isinstance(v, Semver):
        return v
    if isinstance(v, str):
        try:
            return Semver.parse(str(v))
        except SelectorError:
            return None
    return None


def _compare(a: Any, b: Any) -> int:
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        return (a.value > b.value) - (a.value < b.value)
    sa, sb = _as_semver(a), _as_semver(b)
    if sa is not None and sb is not None and (isinstance(a, Semver) or isinstance(b, Semver)):
        return sa.compare(sb)
    raise _err(f"no such overload: compare {type(a).__name__} with {type(b).__name__}")


def _fn_quantity(s: Any) -> Any:
    q = parse_quantity(str(s)) if isinstance(s, str) else None
    if q is None:
        return _err(f"invalid quantity {s!r}")
    return Quantity(q)


def _fn_is_quantity(s: Any) -> celtypes.BoolType:
    return celtypes.BoolType(isinstance(s, str) and parse_quantity(str(s)) is not None)


def _fn_semver(s: Any, normalize: Any = False) -> Any:
    if not isinstance(s, str):
        return _err("semver() takes a string")
    try:
        return Semver.parse(str(s), bool(normalize))
    except SelectorError as exc:
        return _err(str(exc))


def _fn_is_semver(s: Any, normalize: Any = False) -> celtypes.BoolType:
    if not isinstance(s, str):
        return celtypes.BoolType(False)
    try:
        Semver.parse(str(s), bool(normalize))
    except SelectorError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _wrap(fn: Any) -> Any:
    """Turn raised CELEvalErrors into returned ones, which celpy propagates as runtime errors."""

    def inner(*args: Any) -> Any:
        try:
            return fn(*args)
        except celpy.CELEvalError as exc:
            return exc

    inner.__name__ = getattr(fn, "__name__", "fn")
    return inner


def _fn_compare_to(a: Any, b: Any) -> celtypes.IntType:
    return celtypes.IntType(_compare(a, b))


def _fn_greater(a: Any, b: Any) -> celtypes.BoolType:
    return celtypes.BoolType(_compare(a, b) > 0)


def _fn_less(a: Any, b: Any) -> celtypes.BoolType:
    return celtypes.BoolType(_compare(a, b) < 0)


def _need_q(a: Any) -> Quantity:
    if not isinstance(a, Quantity):
        raise _err(f"no such overload for {type(a).__name__}: expected a quantity")
    return a


def _fn_as_integer(a: Any) -> celtypes.IntType:
    q = _need_q(a).value
    if q != q.to_integral_value() or abs(q) >= 2**63:
        raise _err("cannot convert quantity to integer: not an integer or out of range")
    return celtypes.IntType(int(q))


def _fn_is_integer(a: Any) -> celtypes.BoolType:
    q = _need_q(a).value
    return celtypes.BoolType(q == q.to_integral_value() and abs(q) < 2**63)


def _fn_as_float(a: Any) -> celtypes.DoubleType:
    return celtypes.DoubleType(float(_need_q(a).value))


def _fn_sign(a: Any) -> celtypes.IntType:
    q = _need_q(a).value
    return celtypes.IntType((q > 0) - (q < 0))


def _num(b: Any) -> Decimal:
    if isinstance(b, Quantity):
        return b.value
    if isinstance(b, int) and not isinstance(b, bool):
        return Decimal(int(b))
    raise _err(f"no such overload: quantity arithmetic with {type(b).__name__}")


def _fn_add(a: Any, b: Any) -> Quantity:
    return Quantity(_need_q(a).value + _num(b))


def _fn_sub(a: Any, b: Any) -> Quantity:
    return Quantity(_need_q(a).value - _num(b))


def _semver_part(idx: int) -> Any:
    def part(a: Any) -> celtypes.IntType:
        s = _as_semver(a)
        if s is None:
            raise _err(f"no such overload for {type(a).__name__}: expected a semver")
        return celtypes.IntType((s.major, s.minor, s.patch)[idx])

    return part


def _need_str(a: Any) -> str:
    if not isinstance(a, str):
        raise _err(f"no such overload for {type(a).__name__}: expected a string")
    return str(a)


def _fn_lower(a: Any) -> celtypes.StringType:
    s = _need_str(a)
    charge_size(len(s))
    return celtypes.StringType("".join(c.lower() if c.isascii() else c for c in s))


def _fn_upper(a: Any) -> celtypes.StringType:
    s = _need_str(a)
    charge_size(len(s))
    return celtypes.StringType("".join(c.upper() if c.isascii() else c for c in s))


def _fn_trim(a: Any) -> celtypes.StringType:
    return celtypes.StringType(_need_str(a).strip())


def _fn_replace(a: Any, old: Any, new: Any, n: Any = -1) -> celtypes.StringType:
    s, o, r, count = _need_str(a), _need_str(old), _need_str(new), int(n)
    # Charge the result's size before building it: ``'xx'.replace('', 'xx')`` squares a length.
    hits = s.count(o) if count < 0 else min(count, s.count(o))
    charge_size(len(s) + hits * len(r))
    return celtypes.StringType(s.replace(o, r, count))


def _fn_split(a: Any, sep: Any) -> celtypes.ListType:
    s = _need_str(a)
    charge_size(len(s))
    return celtypes.ListType([celtypes.StringType(p) for p in s.split(_need_str(sep))])


def _fn_plus(a: Any, b: Any) -> Any:
    """``+``: strings and lists are charged by the size of the result (as cel-go's cost model
    does), so repeated concatenation inside macros runs out of budget instead of memory."""
    if isinstance(a, (str, list)) and isinstance(b, (str, list)):
        charge_size(len(a) + len(b))
    return evaluation.base_functions["_+_"](a, b)


def _fn_index_of(a: Any, sub: Any) -> celtypes.IntType:
    return celtypes.IntType(_need_str(a).find(_need_str(sub)))


def _fn_equals(a: Any, b: Any) -> Any:
    """``==`` with semver/quantity awareness; everything else falls back to CEL's own rule."""
    if isinstance(a, Quantity) or isinstance(b, Quantity):
        return celtypes.BoolType(a == b)
    if isinstance(a, Semver) or isinstance(b, Semver):
        sa, sb = _as_semver(a), _as_semver(b)
        return celtypes.BoolType(sa is not None and sb is not None and sa.compare(sb) == 0)
    return celpy.evaluation.bool_eq(a, b)


def _fn_not_equals(a: Any, b: Any) -> Any:
    r = _fn_equals(a, b)
    return r if isinstance(r, celpy.CELEvalError) else celtypes.BoolType(not r)


FUNCTIONS: dict[str, Any] = {
    name: _wrap(fn)
    for name, fn in {
        "quantity": _fn_quantity,
        "isQuantity": _fn_is_quantity,
        "semver": _fn_semver,
        "isSemver": _fn_is_semver,
        "compareTo": _fn_compare_to,
        "isGreaterThan": _fn_greater,
        "isLessThan": _fn_less,
        "asInteger": _fn_as_integer,
        "isInteger": _fn_is_integer,
        "asApproximateFloat": _fn_as_float,
        "sign": _fn_sign,
        "add": _fn_add,
        "sub": _fn_sub,
        "major": _semver_part(0),
        "minor": _semver_part(1),
        "patch": _semver_part(2),
        "lowerAscii": _fn_lower,
        "upperAscii": _fn_upper,
        "trim": _fn_trim,
        "replace": _fn_replace,
        "split": _fn_split,
        "indexOf": _fn_index_of,
        "_+_": _fn_plus,
        "_==_": _fn_equals,
        "_!=_": _fn_not_equals,
    }.items()
}

class _DomainMap(celtypes.MapType):
    """``device.attributes`` / ``device.capacity``: an unknown domain reads as an empty map."""

    def __getitem__(self, key: Any) -> Any:
        try:
            return super().__getitem__(key)
        except KeyError:
            return celtypes.MapType({})


def parse_error_where(exc: Exception) -> str:
    """celpy prints the offending line and a caret under the column; say it in words."""
    lines = str(exc).splitlines()
    for i in range(1, len(lines)):
        if lines[i].strip() == "^":
            return f"syntax error at column {lines[i].index('^') + 1} of {lines[i - 1].strip()!r}"
    return lines[0] if lines else "syntax error"


def _cel_value(v: Any) -> Any:
    if isinstance(v, bool):
        return celtypes.BoolType(v)
    if isinstance(v, int):
        return celtypes.IntType(v)
    if isinstance(v, float):
        return celtypes.DoubleType(v)
    if v is None:
        return None
    return celtypes.StringType(str(v))


def _split_qualified(name: str, driver: str) -> tuple[str, str]:
    if "/" in name:
        domain, _, short = name.partition("/")
        return domain, short
    return driver, name


def device_variable(device: Device) -> celtypes.MapType:
    """The CEL ``device`` variable for one device (see the module docstring for its shape)."""
    attrs: dict[str, dict[Any, Any]] = {}
    for qname, value in device.attributes.items():
        domain, short = _split_qualified(qname, device.driver)
        attrs.setdefault(domain, {})[celtypes.StringType(short)] = _cel_value(value)
    caps: dict[str, dict[Any, Any]] = {}
    for qname, text in device.capacity.items():
        domain, short = _split_qualified(qname, device.driver)
        q = parse_quantity(text)
        if q is not None:
            caps.setdefault(domain, {})[celtypes.StringType(short)] = Quantity(q)
    allow_multi = device.allow_multiple_allocations
    return celtypes.MapType(
        {
            celtypes.StringType("driver"): celtypes.StringType(device.driver),
            celtypes.StringType("attributes"): _DomainMap(
                {celtypes.StringType(d): celtypes.MapType(v) for d, v in attrs.items()}
            ),
            celtypes.StringType("capacity"): _DomainMap(
                {celtypes.StringType(d): celtypes.MapType(v) for d, v in caps.items()}
            ),
            celtypes.StringType("allowMultipleAllocations"): celtypes.BoolType(allow_multi),
        }
    )


_ENV_LOCK = threading.Lock()
_ENV: celpy.Environment | None = None


def environment() -> celpy.Environment:
    """The one celpy environment, built on first use. celpy raises the interpreter's recursion
    limit to 2,500 when it builds one (its evaluator recurses per parse-tree level); a higher
    limit set by someone else is kept."""
    global _ENV
    if _ENV is None:
        with _ENV_LOCK:
            if _ENV is None:
                before = sys.getrecursionlimit()
                env = celpy.Environment(runner_class=_Runner)
                sys.setrecursionlimit(max(before, sys.getrecursionlimit()))
                _ENV = env
    return _ENV


def tree_depth(tree: Any) -> int:
    """Depth of a celpy parse tree, level by level (no recursion)."""
    depth, level = 0, [tree]
    while level:
        depth += 1
        level = [c for t in level for c in getattr(t, "children", ()) if hasattr(c, "children")]
    return depth


def compile_program(expression: str, max_depth: int, backend: str | None = None) -> tuple[Any, int]:
    """Compile ``expression``: (program, depth), the program for cel-expr-python when the
    expression is one it runs as Kubernetes would (``cpp_eligible``), else for celpy with the
    extension functions bound.

    Raises ``SelectorError`` for a syntax error or an expression nested deeper than the
    runtime evaluates (celpy: a parse tree deeper than ``max_depth``, its interpreter recurses
    per level; cel-expr-python: its parser's recursion limit). Parsing itself does not recurse
    (LALR, ANTLR). ``backend="celpy"`` forces celpy (to compare the two runtimes)."""
    if backend != "celpy" and cpp_eligible(expression):
        cpp = _cpp_compile(expression)
        if cpp is not None:
            return cpp, 0
    env = environment()
    try:
        ast = env.compile(expression)
    except celpy.CELParseError as exc:
        raise SelectorError(parse_error_where(exc)) from exc
    depth = tree_depth(ast)
    if depth > max_depth:
        raise SelectorError(f"nested too deeply: {depth} levels of the parse tree, the limit is {max_depth}")
    return env.program(ast, functions=FUNCTIONS), depth


def evaluate(program: Any, activation: Any) -> tuple[bool, str | None]:
    """(matched, runtime error) of one evaluation. ``activation``: a ``DeviceActivation`` (or,
    for a celpy program, ``{"device": device_variable(...)}``). Raises ``OverBudget`` past the
    step budget and ``RecursionError`` if celpy's interpreter still runs out of stack."""
    if isinstance(program, CppProgram):
        return program.evaluate(activation)
    if isinstance(activation, DeviceActivation):
        activation = activation.celpy()
    try:
        result = program.evaluate(activation)
    except celpy.CELEvalError as exc:
        return False, str(exc.args[0] if exc.args else exc)
    except (TypeError, ValueError, KeyError, ArithmeticError) as exc:
        return False, str(exc)
    if not isinstance(result, celtypes.BoolType):
        return False, "result is not a bool"
    return bool(result), None


# ---- cel-expr-python (Google's C++ CEL runtime) ----------------------------------------------
#
# About a hundred times faster than celpy per evaluation (7 us against 713 us on the
# DeviceClass selector ``device.driver == ... && device.attributes[...].type == 'gpu'``,
# measured here). It runs the expressions it can evaluate exactly as Kubernetes does: those
# calling none of the Kubernetes extension functions (``quantity``, ``semver``, ``compareTo``,
# ... and the string extensions of ``FUNCTIONS``), reading no ``device.capacity`` (whose values
# are quantities) and using no comprehension macro (``all``, ``exists``, ``map``, ``filter``:
# they are the only way to make an expression cost more than its length, and only celpy's
# step budget bounds them). Everything else runs on celpy, unchanged. Without the package
# installed every expression runs on celpy.

try:  # an optional speed-up: the wheel is binary, not every platform has one
    from cel_expr_python import cel as _cpp
except ImportError:  # pragma: no cover - depends on the platform
    _cpp = None

# A fixed pattern of ours (never built from cluster text): a call of an extension function or
# a macro, or a read of device.capacity.
_CPP_EXCLUDED = re.compile(
    r"\b(?:" + "|".join(sorted(n for n in FUNCTIONS if n.isidentifier()))
    + r"|all|exists|exists_one|map|filter)\s*\(|\bcapacity\b"
)
# String literals of an expression (single or double quoted, no escapes inside): the domains
# it may look up in device.attributes.
_LITERAL = re.compile(r"'([^'\\]*)'|\"([^\"\\]*)\"")

CPP_AVAILABLE = _cpp is not None


def cpp_eligible(expression: str) -> bool:
    """Can cel-expr-python evaluate ``expression`` with Kubernetes' semantics (see above)?"""
    return _cpp is not None and _CPP_EXCLUDED.search(expression) is None


_CPP_ENV: Any = None


def _cpp_env() -> Any:
    global _CPP_ENV
    if _CPP_ENV is None:
        with _ENV_LOCK:
            if _CPP_ENV is None:
                _CPP_ENV = _cpp.NewEnv(variables={"device": _cpp.Type.Map(_cpp.Type.STRING, _cpp.Type.DYN)})
    return _CPP_ENV


class CppProgram:
    """A selector compiled by cel-expr-python, with the attribute domains it names."""

    __slots__ = ("domains", "expression", "program")

    def __init__(self, expression: str, program: Any, domains: tuple[str, ...]) -> None:
        self.expression = expression
        self.program = program
        self.domains = domains

    def evaluate(self, activation: Any) -> tuple[bool, str | None]:
        try:
            if isinstance(activation, DeviceActivation):
                result = self.program.eval(activation.cpp(self.domains))
            else:
                result = self.program.eval(data={"device": activation})
        except Exception as exc:  # the runtime's own failure (resource limit): a runtime error
            return False, str(exc)
        kind = result.type()
        if kind == _cpp.Type.ERROR:
            return False, str(result.value())
        if kind != _cpp.Type.BOOL:
            return False, "result is not a bool"
        return bool(result.value()), None


def _cpp_compile(expression: str) -> CppProgram | None:
    """cel-expr-python's program, or None to let celpy compile it (and word any error as
    before). Raises ``SelectorError`` when the expression nests deeper than the parser's
    recursion limit: celpy would refuse it as well, or exhaust its stack."""
    try:
        program = _cpp_env().compile(expression)
    except Exception as exc:
        if "recursion limit" in str(exc):
            raise SelectorError("nested too deeply: over the CEL parser's recursion limit") from None
        return None
    domains = tuple(dict.fromkeys(a or b for a, b in _LITERAL.findall(expression) if "." in (a or b)))
    return CppProgram(expression, program, domains)


class DeviceActivation:
    """The ``device`` variable of one device for both runtimes, each built on first use."""

    __slots__ = ("_celpy", "_cpp", "_plain", "device")

    def __init__(self, device: Device) -> None:
        self.device = device
        self._celpy: dict[str, Any] | None = None
        self._plain: dict[str, Any] | None = None
        self._cpp: Any = None

    def cpp(self, domains: tuple[str, ...] = ()) -> Any:
        """cel-expr-python's activation (converted to C++ values once per device, unless the
        expression names a domain the device lacks)."""
        data = self.plain(domains)
        if data is not self._plain:
            return _cpp_env().Activation({"device": data})
        if self._cpp is None:
            self._cpp = _cpp_env().Activation({"device": data})
        return self._cpp

    def celpy(self) -> dict[str, Any]:
        if self._celpy is None:
            self._celpy = {"device": device_variable(self.device)}
        return self._celpy

    def plain(self, domains: tuple[str, ...] = ()) -> dict[str, Any]:
        """The variable as plain Python values; ``domains`` the device has no attributes in
        read as empty maps (as in Kubernetes), so ``'x' in device.attributes['other']`` is false."""
        if self._plain is None:
            d = self.device
            attrs: dict[str, dict[str, Any]] = {}
            for qname, value in d.attributes.items():
                domain, short = _split_qualified(qname, d.driver)
                if isinstance(value, (bool, int, float, str)):
                    attrs.setdefault(domain, {})[short] = value
                elif value is not None:
                    attrs.setdefault(domain, {})[short] = str(value)
            self._plain = {"driver": d.driver, "attributes": attrs, "capacity": {},
                           "allowMultipleAllocations": d.allow_multiple_allocations}
        missing = [x for x in domains if x not in self._plain["attributes"]]
        if not missing:
            return self._plain
        return {**self._plain, "attributes": {**self._plain["attributes"], **{x: {} for x in missing}}}

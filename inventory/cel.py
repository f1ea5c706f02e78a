"""CEL evaluation of DRA device selectors, as the Kubernetes scheduler does it.

Pure: no Django. Selectors come from DeviceClasses (``spec.selectors[].cel.expression``) and
from claim requests (``spec.devices.requests[].exactly.selectors[].cel.expression``). They are
untrusted cluster text: they are compiled by ``cel-python`` (celpy) and never turned into
Python code or regexes of ours.

The ``device`` variable is built like Kubernetes builds it (k8s.io/dynamic-resource-allocation
``cel`` package):

- ``device.driver``: the slice's ``spec.driver``;
- ``device.attributes['<domain>'].<name>``: attribute values (``string``, ``int``, ``bool``,
  ``version``); unqualified names published by a driver belong to the driver's domain;
- ``device.capacity['<domain>'].<name>``: quantities (``quantity`` values, not numbers);
- ``device.allowMultipleAllocations``: bool.

Looking up a domain the device has no attributes in gives an empty map (as in Kubernetes), so
``'x' in device.attributes['other.domain']`` is false rather than an error; reading a missing
attribute *is* a runtime error.

Kubernetes extension functions used by selectors are registered: ``quantity()``,
``isQuantity()``, ``semver()``, ``isSemver()``, and the member functions ``compareTo``,
``isGreaterThan``, ``isLessThan``, ``asInteger``, ``asApproximateFloat``, ``isInteger``,
``sign``, ``add``, ``sub``, ``major``, ``minor``, ``patch``, plus the string extensions
``lowerAscii``, ``upperAscii``, ``trim``, ``replace``, ``split``, ``indexOf``. celpy passes
a member call ``x.f(y)`` as ``f(x, y)``.

Trap: ``inventory.parse.Device`` keeps attribute values without their type tag, so a
``version`` attribute arrives here as a string. The semver member functions therefore accept a
string that parses as a semantic version; ``==`` between such an attribute and ``semver(...)``
compares as versions too. A string attribute holding ``"1.2.3"`` is, by the same leniency,
comparable with a semver, which Kubernetes would reject with a type error.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any

import celpy
from celpy import celtypes

from inventory.parse import Device, parse_quantity

__all__ = [
    "MatchResult",
    "Quantity",
    "SelectorError",
    "Semver",
    "classes_matching",
    "compile_selector",
    "device_matches",
    "device_variable",
    "evaluate_device",
]


class SelectorError(ValueError):
    """A CEL selector does not compile, or fails at runtime for a device."""


@dataclass(frozen=True)
class Quantity:
    """A Kubernetes ``resource.Quantity`` inside CEL: ``value`` in base units (bytes, cores...)."""

    value: Decimal

    def __eq__(self, other: object) -> bool:  # quantity('1Gi') == quantity('1024Mi')
        return isinstance(other, Quantity) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)


# Semantic version 2.0.0 core plus optional pre-release/build; a fixed pattern of ours,
# matched against cluster text (never built from it).
_SEMVER_RE = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$"
)


@dataclass(frozen=True)
class Semver:
    """A semantic version inside CEL (DRA ``version`` attributes, ``semver('1.2.3')``)."""

    major: int
    minor: int
    patch: int
    pre: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str, normalize: bool = False) -> Semver:
        s = text.strip()
        if normalize:
            s = s.removeprefix("v")
            core, sep, rest = s.partition("-")
            parts = core.split("+")[0].split(".")
            while len(parts) < 3:
                parts.append("0")
            parts = [str(int(p)) if p.isdigit() else p for p in parts]
            s = ".".join(parts) + (sep + rest if sep else "")
        m = _SEMVER_RE.match(s)
        if not m:
            raise SelectorError(f"invalid semver {text!r}")
        pre = tuple(m.group(4).split(".")) if m.group(4) else ()
        return cls(int(m.group(1)), int(m.group(2)), int(m.group(3)), pre)

    def _key(self) -> tuple[Any, ...]:
        # A release sorts after any of its pre-releases; numeric identifiers before alphanumeric.
        pre_key = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in self.pre)
        return (self.major, self.minor, self.patch, 0 if self.pre else 1, pre_key)

    def compare(self, other: Semver) -> int:
        a, b = self._key(), other._key()
        return (a > b) - (a < b)


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
    return celtypes.StringType("".join(c.lower() if c.isascii() else c for c in s))


def _fn_upper(a: Any) -> celtypes.StringType:
    s = _need_str(a)
    return celtypes.StringType("".join(c.upper() if c.isascii() else c for c in s))


def _fn_trim(a: Any) -> celtypes.StringType:
    return celtypes.StringType(_need_str(a).strip())


def _fn_replace(a: Any, old: Any, new: Any, n: Any = -1) -> celtypes.StringType:
    return celtypes.StringType(_need_str(a).replace(_need_str(old), _need_str(new), int(n)))


def _fn_split(a: Any, sep: Any) -> celtypes.ListType:
    return celtypes.ListType([celtypes.StringType(p) for p in _need_str(a).split(_need_str(sep))])


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


_FUNCTIONS: dict[str, Any] = {
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
        "_==_": _fn_equals,
        "_!=_": _fn_not_equals,
    }.items()
}

_ENV = celpy.Environment()


class _DomainMap(celtypes.MapType):
    """``device.attributes`` / ``device.capacity``: an unknown domain reads as an empty map."""

    def __getitem__(self, key: Any) -> Any:
        try:
            return super().__getitem__(key)
        except KeyError:
            return celtypes.MapType({})


def _parse_error_where(exc: Exception) -> str:
    """celpy prints the offending line and a caret under the column; say it in words."""
    lines = str(exc).splitlines()
    for i in range(1, len(lines)):
        if lines[i].strip() == "^":
            return f"syntax error at column {lines[i].index('^') + 1} of {lines[i - 1].strip()!r}"
    return lines[0] if lines else "syntax error"


@dataclass(frozen=True)
class _Compiled:
    expression: str
    program: Any


@lru_cache(maxsize=4096)
def compile_selector(expression: str) -> _Compiled:
    """Compile one CEL selector (cached by expression text).

    Raises ``SelectorError`` with the parser's message when it does not compile.
    """
    if not isinstance(expression, str) or not expression.strip():
        raise SelectorError("empty CEL selector")
    try:
        ast = _ENV.compile(expression)
        program = _ENV.program(ast, functions=_FUNCTIONS)
    except celpy.CELParseError as exc:
        raise SelectorError(
            f"CEL selector does not compile: {expression.strip()!r}: {_parse_error_where(exc)}"
        ) from exc
    except Exception as exc:  # celpy raises assorted errors for unsupported syntax
        raise SelectorError(f"CEL selector does not compile: {expression.strip()!r}: {exc}") from exc
    return _Compiled(expression, program)


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
    allow_multi = bool(getattr(device, "allow_multiple_allocations", False))
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


@dataclass(frozen=True)
class MatchResult:
    """Outcome of evaluating selectors on one device. ``error`` is the first runtime error."""

    matched: bool
    error: str | None = None


# Memo of (expression, the part of the device it can see) -> (matched, error). Fleets repeat
# the same few device shapes thousands of times; evaluating CEL per device is ~1 ms.
_MEMO: dict[tuple[Any, ...], tuple[bool, str | None]] = {}
_MEMO_MAX = 200_000
# Constructs that can reach attributes not named literally in the expression.
_OPAQUE = ("exists", "all(", "map(", "filter(", "size(", "+", "[device", "keys(")
# (expressions, attribute names, capacity names) -> the names those expressions can read, or
# None when one of them is opaque. A fleet has a few device shapes (sets of names), so this is
# worked out a few times per expression rather than once per device.
_NAMES: dict[tuple[Any, ...], tuple[tuple[str, ...], tuple[str, ...]] | None] = {}
_NAMES_MAX = 20_000
# (DeviceClasses as names and expression tuples, the device facts any of them can read) ->
# names of the classes that match, sorted: ``classes_matching`` once per device shape.
_CLASS_MEMO: dict[tuple[Any, ...], tuple[str, ...]] = {}


@lru_cache(maxsize=4096)
def _opaque(expr: str) -> bool:
    return any(tok in expr for tok in _OPAQUE)


def _named_in(qualified_name: str, expr: str) -> bool:
    return qualified_name.rpartition("/")[2] in expr


def _readable_names(
    tag: Any, exprs: Sequence[str], akeys: tuple[str, ...], ckeys: tuple[str, ...]
) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The attribute and capacity names (from ``akeys`` / ``ckeys``) that ``exprs`` can read.

    A selector reads an attribute or capacity by its literal name (``.productName``,
    ``['memory']``), so a name whose short form does not occur in any expression's text cannot
    change a result. None when an expression is opaque (``_OPAQUE``): not memoizable. Cached
    under ``(tag, akeys, ckeys)``; ``tag`` must determine ``exprs``.
    """
    key = (tag, akeys, ckeys)
    try:
        return _NAMES[key]
    except KeyError:
        pass
    names: tuple[tuple[str, ...], tuple[str, ...]] | None
    if any(_opaque(e) for e in exprs):
        names = None
    else:
        names = (
            tuple(k for k in akeys if any(_named_in(k, e) for e in exprs)),
            tuple(k for k in ckeys if any(_named_in(k, e) for e in exprs)),
        )
    if len(_NAMES) >= _NAMES_MAX:
        _NAMES.clear()
    _NAMES[key] = names
    return names


def _facts(
    device: Device, names: tuple[tuple[str, ...], tuple[str, ...]], allow_multi: bool
) -> tuple[Any, ...]:
    """The device facts behind ``names``: driver, the named attributes with their values and
    Python types (``True == 1`` but CEL tells a bool from an int), the named capacities, and
    ``allowMultipleAllocations``. Which names are present is part of the key: a missing
    attribute is a runtime error, a present one is not."""
    anames, cnames = names
    attrs = device.attributes
    avals = tuple([attrs[k] for k in anames])
    caps = device.capacity
    return (
        device.driver,
        anames,
        avals,
        tuple(map(type, avals)),
        cnames,
        tuple([caps[k] for k in cnames]),
        allow_multi,
    )


def _visible(device: Device, expr: str) -> tuple[Any, ...] | None:
    """The device facts ``expr`` can read, or None when that cannot be told from its text.

    See ``_readable_names`` for which attributes and capacities count; expressions using
    macros over maps or string building are not memoized.
    """
    names = _readable_names(expr, (expr,), tuple(device.attributes), tuple(device.capacity))
    if names is None:
        return None
    return _facts(device, names, bool(getattr(device, "allow_multiple_allocations", False)))


def _evaluate_one(device: Device, expr: str, activation: dict[str, Any]) -> tuple[bool, str | None]:
    compiled = compile_selector(expr)
    try:
        result = compiled.program.evaluate(activation)
    except celpy.CELEvalError as exc:
        return False, str(exc.args[0] if exc.args else exc)
    except (TypeError, ValueError, KeyError, ArithmeticError) as exc:
        return False, str(exc)
    if not isinstance(result, celtypes.BoolType):
        return False, "result is not a bool"
    return bool(result), None


def evaluate_device(device: Device, expressions: Sequence[str]) -> MatchResult:
    """All ``expressions`` true for ``device``? A runtime error is a non-match with its message.

    Raises ``SelectorError`` only when an expression does not compile. A result that is not a
    bool is a runtime error, as in Kubernetes. Results are memoized on the device facts each
    expression can read (see ``_visible``), so identical devices are evaluated once.
    """
    if not expressions:
        return MatchResult(True)
    activation: dict[str, Any] | None = None
    akeys, ckeys = tuple(device.attributes), tuple(device.capacity)
    allow_multi = bool(getattr(device, "allow_multiple_allocations", False))
    for expr in expressions:
        names = _readable_names(expr, (expr,), akeys, ckeys)
        key = (expr, _facts(device, names, allow_multi)) if names is not None else None
        try:
            hit = _MEMO.get(key) if key is not None else None
        except TypeError:  # an unhashable attribute value (malformed slice): evaluate unmemoized
            key = hit = None
        if hit is None:
            compile_selector(expr)  # a compile error raises, never memoized
            if activation is None:
                activation = {"device": device_variable(device)}
            hit = _evaluate_one(device, expr, activation)
            if key is not None:
                if len(_MEMO) >= _MEMO_MAX:
                    _MEMO.clear()
                _MEMO[key] = hit
        matched, error = hit
        if error:
            return MatchResult(False, f"{device.pool}/{device.name}: {expr.strip()!r}: {error}")
        if not matched:
            return MatchResult(False)
    return MatchResult(True)


def device_matches(device: Device, expressions: Sequence[str]) -> bool:
    """True when every selector in ``expressions`` evaluates to true for ``device``.

    Raises ``SelectorError`` when a selector does not compile or fails at runtime for this
    device (missing attribute, type mismatch). In Kubernetes such an error also means the
    device is not allocated, and the error is reported; ``evaluate_device`` gives both.
    """
    result = evaluate_device(device, expressions)
    if result.error:
        raise SelectorError(f"CEL runtime error: {result.error}")
    return result.matched


def classes_matching(device: Device, device_classes: Mapping[str, Sequence[str]]) -> list[str]:
    """Names of the DeviceClasses (name -> selector expressions) whose selectors all match.

    A class whose selector errors for this device, or does not compile, does not match. A
    class without selectors matches every device, as in Kubernetes. Sorted by name.

    The answer is memoized per device shape: the classes' names and expressions plus the
    device facts any of those expressions can read (see ``_readable_names``), so a fleet of
    identical GPUs costs one CEL evaluation per class and shape.
    """
    key: tuple[Any, ...] | None = None
    try:
        sig = (tuple(device_classes), tuple(map(tuple, device_classes.values())))
        names = _readable_names(
            sig,
            [e for exprs in sig[1] for e in exprs],
            tuple(device.attributes),
            tuple(device.capacity),
        )
        if names is not None:
            key = (sig, _facts(device, names, bool(getattr(device, "allow_multiple_allocations", False))))
            hit = _CLASS_MEMO.get(key)
            if hit is not None:
                return list(hit)
    except TypeError:  # unhashable expressions or attribute values: no memo for this device
        key = None
    out = []
    for name, exprs in device_classes.items():
        try:
            if evaluate_device(device, list(exprs)).matched:
                out.append(name)
        except SelectorError:
            continue
    out.sort()
    if key is not None:
        if len(_CLASS_MEMO) >= _MEMO_MAX:
            _CLASS_MEMO.clear()
        _CLASS_MEMO[key] = tuple(out)
    return out

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

Bounds, as the API server bounds selectors (``resource.k8s.io`` validation): an expression
longer than ``MAX_EXPRESSION_LENGTH`` bytes (``CELSelectorExpressionMaxLength``, 10,240) is
refused unparsed. The API server also refuses an expression whose estimated worst-case cost
exceeds ``CELSelectorExpressionMaxCost`` (1,000,000 cost units) and stops an evaluation at the
same cost. celpy has no cost estimator and is about a thousand times slower than cel-go, so
here the bound is ``MAX_STEPS`` interpreter steps per evaluation (nodes visited, strings and
lists charged by size; the selectors drivers document take under 200): an expression that runs
out of steps on one device is invalid for every device, as a worst-case estimate would be,
and is not evaluated again. celpy's interpreter recurses per parse-tree level, so a parse tree
deeper than ``MAX_TREE_DEPTH`` (about 30 nested parentheses; cel-go's parser allows 250 levels
of nesting) is refused too. Every refusal is a ``SelectorError``: the diagnosis reports it as
``selector_invalid``.

celpy, its grammar and the extension functions live in ``inventory.cel_runtime``, imported on
first use: importing this module costs nothing a snapshot command would notice.

Two runtimes: selectors that call no Kubernetes extension function, read no
``device.capacity`` and use no comprehension macro (the DeviceClass selectors drivers ship,
attribute comparisons) run on Google's C++ runtime, ``cel-expr-python``, when it is installed:
about 180,000 evaluations per second against celpy's 2,200 on the NVIDIA GPU class selector
(5.5 us against 450 us, one core here). The rest run on celpy as described above. Both read
the same device facts and are tested to agree on the real slices
(``tests/inventory/test_cel_runtimes_agree_on_real_selectors.py``). cel-expr-python's parser
refuses nesting past its recursion limit (32 levels), the same kind of refusal as celpy's
``MAX_TREE_DEPTH``; its expressions cost at most their length (no macros), so they need no
step budget.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from inventory.parse import Device

if TYPE_CHECKING:
    from celpy import celtypes

__all__ = [
    "MAX_EXPRESSION_LENGTH",
    "MAX_STEPS",
    "MAX_TREE_DEPTH",
    "MatchResult",
    "Quantity",
    "SelectorError",
    "Semver",
    "classes_matching",
    "compile_selector",
    "device_matches",
    "device_variable",
    "evaluate_device",
    "selector_problem",
]

# resource.k8s.io CELSelectorExpressionMaxLength: the API server refuses longer expressions.
MAX_EXPRESSION_LENGTH = 10 * 1024
# Interpreter steps per evaluation (see the module docstring for why not cel-go's cost units).
MAX_STEPS = 10_000
# Levels of celpy's parse tree: about ten per nested parenthesis; 400 levels still evaluate
# within celpy's recursion limit of 2,500 frames.
MAX_TREE_DEPTH = 300


class SelectorError(ValueError):
    """A CEL selector does not compile, is over a bound, or fails at runtime for a device."""


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


@dataclass(frozen=True)
class _Compiled:
    expression: str
    program: Any


def _show(expression: str, limit: int = 80) -> str:
    """An expression for a message: stripped, quoted, cut to ``limit`` characters."""
    s = expression.strip()
    return repr(s if len(s) <= limit else s[:limit] + "…")


# Expressions found over a bound while being evaluated (out of steps, out of stack) -> the
# problem: refused from then on, for every device.
_SPENT: dict[str, SelectorError] = {}
_SPENT_MAX = 4096


@lru_cache(maxsize=4096)
def _compile(expression: str) -> _Compiled | SelectorError:
    """``compile_selector``'s work, failures cached too (a bad selector shared by a thousand
    claims is parsed once)."""
    if not isinstance(expression, str) or not expression.strip():
        return SelectorError("empty CEL selector")
    size = len(expression.encode("utf-8", "surrogatepass"))
    if size > MAX_EXPRESSION_LENGTH:
        return SelectorError(
            f"CEL selector is too long: {size:,} bytes, over the API server's limit of "
            f"{MAX_EXPRESSION_LENGTH:,} (CELSelectorExpressionMaxLength): {_show(expression, 60)}"
        )
    from inventory import cel_runtime

    try:
        program, _depth = cel_runtime.compile_program(expression, MAX_TREE_DEPTH)
    except SelectorError as exc:
        return SelectorError(f"CEL selector does not compile: {_show(expression)}: {exc}")
    except RecursionError:
        return SelectorError(f"CEL selector does not compile: {_show(expression)}: nested too deeply")
    except Exception as exc:  # celpy raises assorted errors for unsupported syntax
        return SelectorError(f"CEL selector does not compile: {_show(expression)}: {exc}")
    return _Compiled(expression, program)


def compile_selector(expression: str) -> _Compiled:
    """Compile one CEL selector (cached by expression text, failures too).

    Raises ``SelectorError`` with the parser's message when it does not compile, when it is
    longer than ``MAX_EXPRESSION_LENGTH`` bytes or nests deeper than ``MAX_TREE_DEPTH``, or
    when an earlier evaluation ran out of ``MAX_STEPS``.
    """
    spent = _SPENT.get(expression) if _SPENT else None
    if spent is not None:
        raise spent
    try:
        compiled = _compile(expression)
    except TypeError as exc:  # unhashable: not an expression at all
        raise SelectorError(f"CEL selector is not a string: {type(expression).__name__}") from exc
    if isinstance(compiled, SelectorError):
        raise compiled
    return compiled


def selector_problem(expression: str) -> str | None:
    """Why ``expression`` cannot be a selector (syntax, length, nesting, an evaluation that ran
    out of steps), or None when it compiles. Runtime errors on a device are not known here:
    see ``evaluate_device``."""
    try:
        compile_selector(expression)
    except SelectorError as exc:
        return str(exc)
    return None


def _spend(expression: str, problem: SelectorError) -> SelectorError:
    """Record that ``expression`` is over a bound. Memoized results of it are dropped: they
    were for devices it happened to finish on."""
    if len(_SPENT) >= _SPENT_MAX:
        _SPENT.clear()
    _SPENT[expression] = problem
    _MEMO.clear()
    _CLASS_MEMO.clear()
    return problem


def device_variable(device: Device) -> celtypes.MapType:
    """The CEL ``device`` variable for one device (see the module docstring for its shape)."""
    from inventory import cel_runtime

    return cel_runtime.device_variable(device)


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
    return _facts(device, names, device.allow_multiple_allocations)


def _evaluate_one(device: Device, expr: str, activation: Any) -> tuple[bool, str | None]:
    """(matched, runtime error) for one device. Raises ``SelectorError`` when the evaluation
    runs out of ``MAX_STEPS`` or of stack: the expression is refused from then on."""
    from inventory import cel_runtime

    compiled = compile_selector(expr)
    try:
        return cel_runtime.evaluate(compiled.program, activation)
    except cel_runtime.OverBudget:
        raise _spend(expr, SelectorError(
            f"CEL selector is too costly: {_show(expr)} ran past {MAX_STEPS:,} evaluation steps "
            f"on device {device.pool}/{device.name} (the API server refuses selectors over its cost limit)"
        )) from None
    except RecursionError:
        raise _spend(expr, SelectorError(f"CEL selector nests too deeply to evaluate: {_show(expr)}")) from None
    except (LookupError, AttributeError) as exc:
        # celpy fails inside its own error reporting on some odd syntax trees (an empty stack
        # while it prints the expression): a runtime error of this expression, not of the sync.
        return False, f"CEL evaluation failed: {type(exc).__name__}: {str(exc)[:200]}"


def evaluate_device(device: Device, expressions: Sequence[str]) -> MatchResult:
    """All ``expressions`` true for ``device``? A runtime error is a non-match with its message.

    Raises ``SelectorError`` only when an expression does not compile or is over a bound
    (length, nesting, ``MAX_STEPS``). A result that is not a bool is a runtime error, as in
    Kubernetes. Results are memoized on the device facts each
    expression can read (see ``_visible``), so identical devices are evaluated once.
    """
    if not expressions:
        return MatchResult(True)
    activation: Any = None  # cel_runtime.DeviceActivation, built on first need
    akeys, ckeys = tuple(device.attributes), tuple(device.capacity)
    allow_multi = device.allow_multiple_allocations
    for expr in expressions:
        if _SPENT and expr in _SPENT:
            raise _SPENT[expr]
        names = _readable_names(expr, (expr,), akeys, ckeys)
        key = (expr, _facts(device, names, allow_multi)) if names is not None else None
        try:
            hit = _MEMO.get(key) if key is not None else None
        except TypeError:  # an unhashable attribute value (malformed slice): evaluate unmemoized
            key = hit = None
        if hit is None:
            compile_selector(expr)  # a compile error raises, never memoized
            if activation is None:
                from inventory import cel_runtime

                activation = cel_runtime.DeviceActivation(device)
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
            key = (sig, _facts(device, names, device.allow_multiple_allocations))
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

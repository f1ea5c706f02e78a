"""Objects written as YAML for people to read or apply: libyaml's emitter where PyYAML was
built with it (a workload of thousands of containers: seconds in pure Python), the same safe
representer either way (plain dicts, lists, strings, numbers, booleans, None).

PyYAML resolves plain scalars by YAML 1.1, kubectl (go-yaml) by YAML 1.2: a string such as
``1e3``, ``+1e3``, ``.5e3`` or ``0o17`` is a string to the first and a number to the second,
so an annotation or label written plain would not apply ("cannot unmarshal number into ...
of type string"). The dumper here also resolves the YAML 1.2 numbers, so such strings are
written quoted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import yaml

_BASE = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_BASE):  # type: ignore[misc,valid-type]
    pass


# YAML 1.2 core schema numbers that YAML 1.1 reads as strings (go-yaml reads them as numbers).
_Dumper.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$"),
    list("-+.0123456789"),
)
_Dumper.add_implicit_resolver("tag:yaml.org,2002:int", re.compile(r"^0o[0-7]+$"), ["0"])


def dump(obj: Any, **kw: Any) -> str:
    return yaml.dump(obj, Dumper=_Dumper, **kw)


def dump_all(objs: Iterable[Any], **kw: Any) -> str:
    return yaml.dump_all(objs, Dumper=_Dumper, **kw)

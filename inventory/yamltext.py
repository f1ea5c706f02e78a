"""Objects written as YAML for people to read or apply: libyaml's emitter where PyYAML was
built with it (a workload of thousands of containers: seconds in pure Python), the same safe
representer either way (plain dicts, lists, strings, numbers, booleans, None)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import yaml

_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def dump(obj: Any, **kw: Any) -> str:
    return yaml.dump(obj, Dumper=_DUMPER, **kw)


def dump_all(objs: Iterable[Any], **kw: Any) -> str:
    return yaml.dump_all(objs, Dumper=_DUMPER, **kw)

"""What the GPU stack keeps in ConfigMap payloads, read from ``ConfigMap`` records.

Pure: no Django. Read on demand (YAML is parsed only for the values that mention what is
looked for), never at sync time: mig-parted layouts (``mig-configs``), the device plugin's
``sharing`` config (time-slicing, MPS), and Kueue's ``Configuration``
(``deviceClassMappings``). A value that is not YAML, or YAML of another shape, reads as absent.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .core import ConfigMap


def _yaml(value: str) -> Any:
    import yaml  # local: only these readers parse payloads

    try:
        return yaml.safe_load(value)
    except (yaml.YAMLError, RecursionError):
        return None


def mig_config_names(cm: ConfigMap) -> set[str] | None:
    """Layout names under ``mig-configs`` in any of the ConfigMap's values (mig-parted);
    None when no value holds a ``mig-configs`` map."""
    found: set[str] | None = None
    for value in cm.data.values():
        if "mig-configs" not in value:
            continue
        doc = _yaml(value)
        if isinstance(doc, dict) and isinstance(doc.get("mig-configs"), dict):
            found = (found or set()) | {str(k) for k in doc["mig-configs"]}
    return found


@dataclass(frozen=True, slots=True)
class Sharing:
    """The ``sharing`` block of one device plugin config (ConfigMap key ``key``).

    ``mps``: ``sharing.mps`` is set. ``time_slicing``: ``sharing.timeSlicing`` is set;
    ``replicas``: its ``resources[].replicas`` as written.
    """

    key: str
    mps: bool
    time_slicing: bool
    replicas: tuple[Any, ...]


def sharing_configs(cm: ConfigMap) -> Iterator[Sharing]:
    """Each value of ``cm`` that is a device plugin config with a ``sharing`` block."""
    for key, value in cm.data.items():
        if "sharing" not in value:
            continue
        doc = _yaml(value)
        sharing = doc.get("sharing") if isinstance(doc, dict) else None
        if not isinstance(sharing, dict):
            continue
        ts = sharing.get("timeSlicing")
        replicas = tuple(r.get("replicas") for r in ts.get("resources") or [] if isinstance(r, dict)) if isinstance(ts, dict) else ()
        if sharing.get("mps") or ts:
            yield Sharing(key, bool(sharing.get("mps")), bool(ts), replicas)


def kueue_device_class_names(config: Mapping[str, Any]) -> set[str]:
    """DeviceClass names a Kueue ``Configuration`` maps to quota resources
    (``resources.deviceClassMappings[].deviceClassNames``, or top-level ``deviceClassMappings``)."""
    resources = config.get("resources")
    mappings = (resources.get("deviceClassMappings") if isinstance(resources, dict) else None) or config.get("deviceClassMappings") or []
    names: set[str] = set()
    for m in mappings if isinstance(mappings, list) else ():
        if isinstance(m, dict):
            names.update(str(n) for n in m.get("deviceClassNames") or [])
    return names


def kueue_configurations(cm: ConfigMap) -> list[set[str]]:
    """For each value of ``cm`` holding a Kueue ``kind: Configuration`` (the Helm chart's
    ``kueue-manager-config``), the DeviceClass names it maps."""
    out = []
    for value in cm.data.values():
        if "Configuration" not in value:
            continue
        doc = _yaml(value)
        if isinstance(doc, dict) and doc.get("kind") == "Configuration":
            out.append(kueue_device_class_names(doc))
    return out

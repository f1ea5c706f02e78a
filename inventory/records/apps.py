"""Records of the workload controllers (``apps/v1``, ``batch/v1``): DaemonSet, Deployment,
StatefulSet, Job, CronJob. Each carries its pod template's spec as a ``PodSpec``.

Pure: no Django; never raises on odd cluster text. Pod template paths:
``spec.template.spec`` (CronJob: ``spec.jobTemplate.spec.template.spec``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .base import KubeRecord, as_map, meta_fields, to_int
from .core import PodSpec, parse_pod_spec


@dataclass(frozen=True, slots=True)
class PodController(KubeRecord):
    """A controller that makes pods from a template (``pod_spec``)."""

    pod_spec: PodSpec


@dataclass(frozen=True, slots=True)
class DaemonSet(PodController):
    """A DaemonSet; ``desired``/``ready``: ``status.desiredNumberScheduled``/``numberReady``."""

    desired: int
    ready: int

    @property
    def images(self) -> tuple[str, ...]:
        """Images of the app containers, then of the init containers."""
        spec = self.pod_spec
        return tuple(c.image for c in (*spec.containers, *spec.init_containers) if c.image)

    @property
    def env(self) -> Mapping[str, str]:
        """Literal env values of every container (init containers' win on a clash)."""
        out: dict[str, str] = {}
        for c in (*self.pod_spec.containers, *self.pod_spec.init_containers):
            out.update(c.env)
        return out

    @property
    def service_account(self) -> str | None:
        return self.pod_spec.service_account


@dataclass(frozen=True, slots=True)
class Deployment(PodController):
    """A Deployment; ``replicas``: ``spec.replicas`` (None when unset)."""

    replicas: int | None


@dataclass(frozen=True, slots=True)
class StatefulSet(PodController):
    pass


@dataclass(frozen=True, slots=True)
class Job(PodController):
    pass


@dataclass(frozen=True, slots=True)
class CronJob(PodController):
    pass


def _template(spec: Any) -> PodSpec:
    return parse_pod_spec(as_map(as_map(spec).get("template")).get("spec"))


def parse_daemon_set(obj: dict[str, Any]) -> DaemonSet:
    status = as_map(obj.get("status"))
    return DaemonSet(*meta_fields(obj, namespaced=True), pod_spec=_template(obj.get("spec")),
                     desired=to_int(status.get("desiredNumberScheduled")), ready=to_int(status.get("numberReady")))


def parse_deployment(obj: dict[str, Any]) -> Deployment:
    spec = as_map(obj.get("spec"))
    replicas = spec.get("replicas")
    return Deployment(*meta_fields(obj, namespaced=True), pod_spec=_template(spec),
                      replicas=replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else None)


def parse_stateful_set(obj: dict[str, Any]) -> StatefulSet:
    return StatefulSet(*meta_fields(obj, namespaced=True), pod_spec=_template(obj.get("spec")))


def parse_job(obj: dict[str, Any]) -> Job:
    return Job(*meta_fields(obj, namespaced=True), pod_spec=_template(obj.get("spec")))


def parse_cron_job(obj: dict[str, Any]) -> CronJob:
    job = as_map(as_map(obj.get("spec")).get("jobTemplate"))
    return CronJob(*meta_fields(obj, namespaced=True), pod_spec=_template(job.get("spec")))

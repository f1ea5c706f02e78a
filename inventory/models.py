"""Inventory models: clusters, sync runs and the Kubernetes objects the sync keeps.

Every cluster object row carries ``uid`` (``metadata.uid``, natural key per cluster),
``resource_version`` (to skip unchanged objects on re-sync) and ``raw`` (the object as the
API returned it, normalized to v1), so fields added by newer API versions are not lost.
Indexed columns are what pages filter and join on.
"""

from __future__ import annotations

from pathlib import PurePath

from django.core.exceptions import ValidationError
from django.db import models
from django.urls import reverse

from . import parse
from .fields import ClusterTextField, JSONTextField
from .kube import has_gpu_labels, parse_time
from .normalize import normalize


class BadgeChoices(models.TextChoices):
    """TextChoices whose members carry a badge colour, so templates never branch on strings."""

    @classmethod
    def colour(cls, value: str) -> str:
        return getattr(cls, "COLOURS", {}).get(value, "grey")


class SourceKind(models.TextChoices):
    SNAPSHOT = "snapshot", "Snapshot file or folder"
    KUBECONFIG = "kubeconfig", "Kubeconfig"
    IN_CLUSTER = "in_cluster", "In-cluster service account"


class SyncStatus(BadgeChoices):
    RUNNING = "running", "Running"
    OK = "ok", "OK"
    PARTIAL = "partial", "Partial"
    FAILED = "failed", "Failed"


SyncStatus.COLOURS = {"running": "blue", "ok": "green", "partial": "amber", "failed": "red"}  # type: ignore[attr-defined]


def validate_absolute_path(value: str) -> None:
    """A source path other processes can read: Sync now (the web process) and the schedule
    (Celery) do not run in the directory a relative path was typed in."""
    if value and not PurePath(value).is_absolute():
        raise ValidationError(f"{value!r} is a relative path; give the absolute path (other processes read it).")


class Cluster(models.Model):
    """A Kubernetes cluster and how to reach it.

    Credentials are never stored here: a cluster names a kubeconfig file and context, or
    in-cluster mode, or a snapshot path.
    """

    name = models.SlugField(max_length=63, unique=True)
    source_kind = models.CharField(max_length=16, choices=SourceKind.choices, default=SourceKind.SNAPSHOT)
    snapshot_path = models.CharField(max_length=1024, blank=True, validators=[validate_absolute_path])
    kubeconfig_path = models.CharField(max_length=1024, blank=True, validators=[validate_absolute_path])
    kube_context = models.CharField(max_length=253, blank=True)
    prometheus_url = models.CharField(max_length=1024, blank=True)
    sync_interval_seconds = models.PositiveIntegerField(default=30)
    enabled = models.BooleanField(default=True)
    server_version = models.TextField(blank=True)
    last_sync_at = models.DateTimeField(null=True, blank=True)
    last_sync_status = models.CharField(max_length=16, choices=SyncStatus.choices, blank=True)
    metrics_at = models.DateTimeField(null=True, blank=True, help_text="Time of the newest DCGM samples stored")
    metrics_error = models.TextField(blank=True)
    analyzed_at = models.DateTimeField(null=True, blank=True, help_text="last diagnosis and readiness run")
    data_changed_at = models.DateTimeField(null=True, blank=True, help_text="last sync that created, updated or deleted rows")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("inventory:cluster", args=[self.name])

    def snapshot_moment(self, model):
        """When a snapshot cluster's objects were taken: the newest timestamp they hold
        (``model``: its ``inventory.model.ClusterModel``), the clock its diagnosis and ledger
        read; None for a live cluster, or a snapshot without any time."""
        if self.source_kind != SourceKind.SNAPSHOT or model is None:
            return None
        return parse_time(model.newest_timestamp())

    def stored_data_changed_at(self):
        """``data_changed_at`` as stored now (another process's sync may have moved it since
        this instance was read): the state the kept models, keys and summaries name."""
        return Cluster.objects.filter(pk=self.pk).values_list("data_changed_at", flat=True).first()


class SyncRun(models.Model):
    """One sync of one cluster: when, from where, how it ended, what it counted."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="sync_runs")
    source = models.CharField(max_length=1200)
    started = models.DateTimeField()
    finished = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=SyncStatus.choices, default=SyncStatus.RUNNING)
    counts = models.JSONField(default=dict, help_text="kind -> {seen, created, updated, deleted, unchanged}")
    errors = models.JSONField(default=list, help_text="one message per failed read or malformed object")
    error = models.TextField(blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    worker = models.CharField(max_length=300, blank=True, help_text="host:pid of the process running it (to close runs whose process died)")

    class Meta:
        ordering = ["-started"]
        indexes = [models.Index(fields=["cluster", "-started"], name="syncrun_cluster_started")]

    def __str__(self) -> str:
        return f"{self.cluster} {self.started:%Y-%m-%d %H:%M:%S} {self.status}"


class KubeObjectBase(models.Model):
    """Fields every stored Kubernetes object has."""

    # No index of its own: each kind's unique (cluster, uid) constraint leads with it.
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="+", db_index=False)
    # Cluster text: text columns, so no length refuses a row (a stand-in uid ``Node//<name>``
    # is longer than a name; a snapshot's values are not validated by an API server).
    uid = models.TextField()
    name = models.TextField()
    resource_version = models.TextField(blank=True)
    raw = JSONTextField(default=dict)

    class Meta:
        abstract = True


class Node(KubeObjectBase):
    """A Node. ``gpu_product`` from label ``nvidia.com/gpu.product``; kubelet from status.nodeInfo."""

    labels = models.JSONField(default=dict)
    from_slices = models.BooleanField(default=False, help_text="no Node object read: known from its ResourceSlices only")
    unschedulable = models.BooleanField(default=False)
    ready = models.BooleanField(default=True)
    kubelet_version = models.TextField(blank=True)
    gpu_product = models.TextField(blank=True)
    gpu_count = models.PositiveIntegerField(default=0, help_text="GPUs (whole or MIG-partitioned) in slices")
    mig_count = models.PositiveIntegerField(default=0)
    allocated_count = models.PositiveIntegerField(default=0, help_text="allocated devices of gpu.nvidia.com")
    free_count = models.PositiveIntegerField(default=0, help_text="unallocated devices of gpu.nvidia.com")
    free_gpu_count = models.PositiveIntegerField(
        default=0, help_text="GPUs published whole with nothing allocated on them or on a device carved from them")
    device_count = models.PositiveIntegerField(default=0, help_text="devices of all drivers")
    plugin_gpu_count = models.PositiveIntegerField(
        default=0, help_text="nvidia.com/gpu the NVIDIA device plugin advertises (status.allocatable)")
    plugin_mig_count = models.PositiveIntegerField(
        default=0, help_text="nvidia.com/mig-* the NVIDIA device plugin advertises (status.allocatable, mixed MIG strategy)")

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["cluster", "uid"], name="node_cluster_uid")]
        indexes = [models.Index(fields=["cluster", "name"], name="node_cluster_name")]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        """"" for a name no Node can have (a placeholder made from a slice's ``nodeName``)."""
        from .parse import is_subdomain

        return reverse("inventory:node", args=[self.cluster.name, self.name]) if is_subdomain(self.name) else ""

    @property
    def unplaceable(self) -> str:
        """Why a pod being scheduled lands nowhere here: "NotReady", "cordoned", or "" (it
        could, or the status is unknown: no Node object was read). ``PLACEABLE`` in SQL."""
        return "" if self.from_slices else "NotReady" if not self.ready else "cordoned" if self.unschedulable else ""

    @property
    def free(self) -> int:
        """Devices a new claim could be allocated here now: the idle ones (``free_count``) on a
        node the scheduler places pods on, else none. ``FREE`` in SQL."""
        return 0 if self.unplaceable else self.free_count

    @property
    def device_plugin_gpus(self) -> int | None:
        """``nvidia.com/gpu`` in ``status.allocatable``; None on a node the NVIDIA device plugin
        does not serve (GPU Feature Discovery labels a DRA node's GPUs too: they say nothing of
        the device plugin)."""
        return self.plugin_gpu_count if self.plugin_gpu_count or self.plugin_mig_count else None

    @property
    def unpublished_gpus(self) -> bool:
        """GPU Feature Discovery labels GPUs here, yet no ResourceSlice publishes one and the
        device plugin advertises none: a DRA driver not publishing (crash-looping kubelet
        plugin, empty pool), or no GPU stack at all. Needs ``labels``."""
        return not (self.gpu_count or self.device_plugin_gpus is not None) and has_gpu_labels(self.labels or {})


# The nodes ``Node.unplaceable`` says "" of, as a filter.
PLACEABLE = models.Q(from_slices=True) | models.Q(ready=True, unschedulable=False)
# ``Node.free`` in SQL (to sort and sum by).
FREE = models.Case(models.When(PLACEABLE, then=models.F("free_count")), default=models.Value(0))


class DeviceClass(KubeObjectBase):
    """A DeviceClass (``spec.selectors`` CEL expressions kept in ``selectors``)."""

    selectors = models.JSONField(default=list)
    extended_resource_name = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "device classes"
        constraints = [models.UniqueConstraint(fields=["cluster", "uid"], name="deviceclass_cluster_uid")]

    def __str__(self) -> str:
        return self.name


class ResourceSlice(KubeObjectBase):
    """A ResourceSlice: one pool's devices for one driver, usually on one node."""

    driver = models.TextField()
    pool = models.TextField()
    pool_generation = models.BigIntegerField(default=0)
    resource_slice_count = models.PositiveIntegerField(default=1)
    node_name = ClusterTextField(blank=True)
    all_nodes = models.BooleanField(default=False)
    device_count = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["node_name", "driver", "name"]
        constraints = [models.UniqueConstraint(fields=["cluster", "uid"], name="slice_cluster_uid")]
        indexes = [models.Index(fields=["cluster", "node_name"], name="slice_cluster_node")]

    def __str__(self) -> str:
        return self.name


class DeviceType(BadgeChoices):
    GPU = "gpu", "GPU"
    MIG = "mig", "MIG instance"
    OTHER = "other", "Other"


class Device(models.Model):
    """One device of a ResourceSlice, keyed (cluster, driver, pool, name) as allocations name it.

    ``memory_bytes``: capacity ``memory`` in bytes. ``device_classes``: names of the
    DeviceClasses whose CEL selectors this device matches. ``type``: the driver's ``type``
    attribute when it is ``gpu`` or ``mig``, else ``other`` (``type_raw`` keeps the value).
    Latest DCGM values (``metrics``) are keyed by DCGM field name, e.g.
    ``{"DCGM_FI_DEV_GPU_TEMP": 30.0}`` in the field's own unit. The full attribute map is not
    copied here: it is in the slice's ``raw`` (``published()``), and a second copy was a fifth
    of what a full sync writes.
    """

    # Indexed through the natural key (cluster, driver, pool, name), which leads with it. A copy
    # of the slice's cluster, for that key and per-cluster queries: the database checks the
    # slice key (whose own cluster key it checks in turn), not this one, which would cost a
    # second lookup per stored device (a tenth of a PostgreSQL full sync). Deleting a cluster
    # still deletes its devices (Django cascades through both keys).
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="devices", db_index=False, db_constraint=False)
    slice = models.ForeignKey(ResourceSlice, on_delete=models.CASCADE, related_name="devices")
    driver = models.TextField()
    pool = models.TextField()
    name = models.TextField()
    node_name = ClusterTextField(blank=True)
    type = models.CharField(max_length=16, choices=DeviceType.choices, default=DeviceType.OTHER)
    type_raw = models.TextField(blank=True)
    uuid = ClusterTextField(blank=True)
    parent_uuid = ClusterTextField(blank=True)
    product_name = ClusterTextField(blank=True)
    profile = models.TextField(blank=True)
    architecture = models.TextField(blank=True)
    driver_version = models.TextField(blank=True)
    pci_bus_id = models.TextField(blank=True)
    memory_bytes = models.BigIntegerField(null=True, blank=True)
    device_classes = models.JSONField(default=list)
    capacity = JSONTextField(default=dict)
    metrics = models.JSONField(default=dict)
    metrics_at = models.DateTimeField(null=True, blank=True)
    metrics_pod = models.TextField(blank=True)

    class Meta:
        ordering = ["node_name", "driver", "name"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "driver", "pool", "name"], name="device_natural_key")
        ]
        indexes = [
            models.Index(fields=["cluster", "node_name"], name="device_cluster_node"),
            models.Index(fields=["uuid"], name="device_uuid"),
            models.Index(fields=["cluster", "parent_uuid"], name="device_parent"),
            models.Index(fields=["cluster", "type", "product_name"], name="device_type_product"),
        ]

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.name}"

    def get_absolute_url(self) -> str:
        return reverse("inventory:device", args=[self.pk])

    def published(self) -> parse.Device | None:
        """This device as its ResourceSlice's stored ``raw`` lists it (every attribute, keys
        qualified with the driver's domain; capacity), or None when that slice no longer
        does or cannot be read. Loads the slice (one query unless it was selected)."""
        try:
            spec = parse.parse_resource_slice(normalize(self.slice.raw))
        except ValueError:  # includes UnknownAPIVersion
            return None
        return next((d for d in spec.devices if d.name == self.name), None)


class ClaimState(BadgeChoices):
    PENDING = "pending", "Pending"
    ALLOCATED = "allocated", "Allocated, not reserved"
    IN_USE = "in_use", "In use"
    DELETING = "deleting", "Deleting"


ClaimState.COLOURS = {"pending": "amber", "allocated": "blue", "in_use": "green", "deleting": "red"}  # type: ignore[attr-defined]
DeviceType.COLOURS = {"gpu": "green", "mig": "blue", "other": "grey"}  # type: ignore[attr-defined]


class ResourceClaim(KubeObjectBase):
    """A ResourceClaim with its derived state, requests summary and allocation time."""

    namespace = models.TextField()
    state = models.CharField(max_length=16, choices=ClaimState.choices, default=ClaimState.PENDING)
    created = models.DateTimeField(null=True, blank=True)
    allocated_at = models.DateTimeField(null=True, blank=True)
    deletion_timestamp = models.DateTimeField(null=True, blank=True)
    requests = models.JSONField(default=list, help_text="request_summary() of each request")
    device_count = models.PositiveIntegerField(default=0)
    node_name = models.TextField(blank=True, help_text="node of the allocated devices")

    class Meta:
        ordering = ["namespace", "name"]
        constraints = [models.UniqueConstraint(fields=["cluster", "uid"], name="claim_cluster_uid")]
        indexes = [
            models.Index(fields=["cluster", "namespace", "name"], name="claim_cluster_ns_name"),
            models.Index(fields=["cluster", "state"], name="claim_cluster_state"),
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"

    def get_absolute_url(self) -> str:
        return reverse("claims:claim", args=[self.cluster.name, self.namespace, self.name])


class AllocationResult(models.Model):
    """``status.allocation.devices.results[]`` of a claim; ``device`` resolved by natural key."""

    claim = models.ForeignKey(ResourceClaim, on_delete=models.CASCADE, related_name="results")
    # Indexed through result_device_key (cluster, driver, pool, device_name).
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="+", db_index=False)
    request = models.TextField()
    driver = models.TextField()
    pool = models.TextField()
    device_name = models.TextField()
    device = models.ForeignKey(Device, on_delete=models.SET_NULL, null=True, blank=True, related_name="allocations")

    class Meta:
        indexes = [models.Index(fields=["cluster", "driver", "pool", "device_name"], name="result_device_key")]

    def __str__(self) -> str:
        return f"{self.request} -> {self.driver}/{self.pool}/{self.device_name}"


class Reservation(models.Model):
    """``status.reservedFor[]`` of a claim: a consumer, usually a pod (by uid)."""

    claim = models.ForeignKey(ResourceClaim, on_delete=models.CASCADE, related_name="reservations")
    resource = models.TextField()
    name = models.TextField()
    uid = models.TextField()

    class Meta:
        indexes = [models.Index(fields=["uid"], name="reservation_uid")]

    def __str__(self) -> str:
        return f"{self.resource}/{self.name}"


class Pod(KubeObjectBase):
    """A Pod, with the claims it references (``spec.resourceClaims`` + ``status.resourceClaimStatuses``).

    ``claim_names``: the ResourceClaim names this pod uses in its namespace (resolved from
    ``resourceClaimName`` or the generated name in ``resourceClaimStatuses``).
    """

    namespace = models.TextField()
    node_name = ClusterTextField(blank=True)
    phase = models.TextField(blank=True)
    created = models.DateTimeField(null=True, blank=True)
    deletion_timestamp = models.DateTimeField(null=True, blank=True)
    claim_names = models.JSONField(default=list)

    class Meta:
        ordering = ["namespace", "name"]
        constraints = [models.UniqueConstraint(fields=["cluster", "uid"], name="pod_cluster_uid")]
        indexes = [
            models.Index(fields=["cluster", "namespace", "name"], name="pod_cluster_ns_name"),
            models.Index(fields=["cluster", "node_name"], name="pod_cluster_node"),
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class KubeObject(KubeObjectBase):
    """Any other kind the product reads (Events, ResourceClaimTemplates, DaemonSets, workloads,
    GPU Operator resources, ConfigMaps...), kept raw and indexed by kind/namespace/name."""

    kind = ClusterTextField()
    api_version = models.TextField()
    namespace = models.TextField(blank=True)
    raw = models.JSONField(default=dict)
    # An Event's subject (``involvedObject``, or ``regarding`` of events.k8s.io/v1), from its
    # record: the node page and the claim pages find their Events by index, not by a JSON path
    # into every Event's raw. Empty for other kinds.
    subject_kind = models.TextField(blank=True, default="")
    subject_name = ClusterTextField(blank=True, default="")

    class Meta:
        ordering = ["kind", "namespace", "name"]
        constraints = [models.UniqueConstraint(fields=["cluster", "uid"], name="kubeobject_cluster_uid")]
        indexes = [
            models.Index(fields=["cluster", "kind", "namespace", "name"], name="kubeobject_kind_ns_name"),
            models.Index(fields=["cluster", "subject_name"], condition=models.Q(kind="Event"), name="kubeobject_event_subject"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"


class UnmatchedSeries(models.Model):
    """A DCGM series that matched no device in the cluster's slices, with the reason."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="unmatched_series")
    field = models.TextField()
    labels = models.JSONField(default=dict)
    value = models.FloatField(null=True)
    reason = models.TextField()

    def __str__(self) -> str:
        return f"{self.field}: {self.reason}"


class RecordedSeries(models.Model):
    """One DCGM series of a snapshot's recorded history (a ``*.range.json`` file, the answer of
    Prometheus ``/api/v1/query_range``), charted for clusters read from snapshots.

    ``field``: the DCGM field name (``__name__``). ``uuid``: the physical GPU's ``UUID`` label
    (the parent for MIG series), what charts select by. ``points``: ``[[unix_s, value|null],
    ...]`` in time order, value in the field's unit. ``start_s``/``end_s``: first and last
    point (Unix seconds). Replaced whole on each sync of the snapshot; bounded by
    ``inventory.telemetry_range`` (series per file, points per series) and
    ``inventory.telemetry.MAX_RECORDED_SERIES`` per cluster.
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="recorded_series")
    field = models.TextField()
    uuid = ClusterTextField(blank=True)
    labels = JSONTextField(default=dict)
    points = JSONTextField(default=list)
    start_s = models.FloatField()
    end_s = models.FloatField()
    source = models.TextField(blank=True)

    class Meta:
        indexes = [models.Index(fields=["cluster", "uuid"])]

    def __str__(self) -> str:
        return f"{self.field} {self.uuid}"


# The kinds stored in their own tables (every other kind is a KubeObject row), in the order a
# sync writes them: classes before the slices they match, slices before claims allocated from them.
TYPED_MODELS: dict[str, type[KubeObjectBase]] = {
    "Node": Node, "DeviceClass": DeviceClass, "ResourceSlice": ResourceSlice, "ResourceClaim": ResourceClaim, "Pod": Pod,
}  # fmt: skip


class WatchCursor(models.Model):
    """Where the last good sync of one list of a cluster stopped (``inventory.watch``).

    ``target``: the list's key (kind, plus its selector when the kind is read as several
    lists, e.g. ``Event?fieldSelector=involvedObject.kind=Pod``); ``resource_version``: the
    ``metadata.resourceVersion`` of the last list, event or BOOKMARK applied, from which the
    next sync resumes a watch; ``listed_at``: when the list was last read in full (a periodic
    relist catches anything a watch missed)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="watch_cursors")
    target = models.TextField()
    resource_version = models.TextField(blank=True)
    listed_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "target"], name="watchcursor_cluster_target")]

    def __str__(self) -> str:
        return f"{self.cluster} {self.target}@{self.resource_version}"


class SyncLease(models.Model):
    """Who may sync one cluster now (``inventory.locks``): one row per cluster, taken by a
    conditional UPDATE so two workers never both hold it. ``holder`` is empty when free,
    ``queued:<token>`` while beat's dispatcher has a sync queued, ``host:pid`` of a running
    sync otherwise; a lease past ``expires_at`` is free (its holder died)."""

    cluster = models.OneToOneField(Cluster, on_delete=models.CASCADE, related_name="sync_lease")
    holder = models.CharField(max_length=300, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.cluster} held by {self.holder or 'nobody'}"


class ModelChunk(models.Model):
    """Part of one cluster's model (``inventory.stored_model``): the parsed records of one kind
    whose uids fall in one bucket, as msgpack (``inventory.model_codec``). A fresh process
    decodes these instead of parsing every stored raw object again. The row with ``kind=""``
    marks the set valid: ``basis`` is the cluster's ``data_changed_at`` the chunks match and
    ``fingerprint`` the parse layer's code they were made by; anything else reads as absent."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=100)
    bucket = models.SmallIntegerField()
    record_type = models.CharField(max_length=100, blank=True)
    fingerprint = models.CharField(max_length=64, blank=True)
    basis = models.DateTimeField(null=True, blank=True)
    count = models.IntegerField(default=0)
    data = models.BinaryField(default=b"")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "kind", "bucket", "record_type"],
                                               name="modelchunk_cluster_kind_bucket_type")]

    def __str__(self) -> str:
        return f"{self.cluster} {self.kind or 'marker'}#{self.bucket}"


class KeptChunk(models.Model):
    """Part of what a process keeps of one cluster between syncs, kept in the database for the
    next process (a command, a restarted worker), so it need not compute it all again:

    - ``part="node"`` / ``"pool"`` (``inventory.overview_store``): the overview's DRA
      summaries of the nodes, or device counts of the pools, whose names fall in one bucket;
      the row with ``part=""`` marks them valid for the cluster state ``basis`` (its
      ``data_changed_at``), made by the code ``fingerprint`` names;
    - ``part="skipped"`` (``inventory.reconcile``): the uid and resourceVersion of each item
      the last read skipped by its text (pods that use no GPU), decided by the code
      ``fingerprint`` names.

    ``data`` is msgpack."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="+")
    part = models.CharField(max_length=8)
    bucket = models.SmallIntegerField()
    fingerprint = models.CharField(max_length=64, blank=True)
    basis = models.DateTimeField(null=True, blank=True)
    data = models.BinaryField(default=b"")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "part", "bucket"], name="keptchunk_cluster_part_bucket")]

    def __str__(self) -> str:
        return f"{self.cluster} {self.part or 'marker'}#{self.bucket}"

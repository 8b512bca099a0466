"""The run configuration: everything the CLI parsed, as plain typed values (no I/O here)."""

from __future__ import annotations

from dataclasses import field, replace
from enum import StrEnum
from typing import Any

from reconcile.records import dataclass


class LogFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


class ApplyStrategyName(StrEnum):
    CLIENT_SIDE = "client-side"
    SERVER_SIDE = "server-side"


class DryRunMode(StrEnum):
    """`--dry-run[=MODE]`, kubectl's spelling: `client` decides everything on the client and
    sends no mutating request; `server` sends every write as a dry run (`dryRun=All`), so the
    API server runs admission, defaulting and validation and persists nothing."""

    NONE = "none"
    CLIENT = "client"
    SERVER = "server"


class LogLevel(StrEnum):
    DEBUG = "debug"
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True)
class ConnectionSettings:
    """How to reach the API server (kubectl's conventions) and how hard to push it."""

    kubeconfig: str | None = None
    context: str | None = None
    qps: float | None = None  # None: adaptive to the server's answers; 0: no limit
    burst: int = 100
    request_timeout: float = 30.0


@dataclass(frozen=True)
class LoggingSettings:
    level: LogLevel = LogLevel.INFO
    format: LogFormat = LogFormat.TEXT


@dataclass(frozen=True)
class Shard:
    """`--shard INDEX/COUNT`: COUNT processes that share no state, each with its own INDEX,
    cover every parent exactly once."""

    index: int = 0
    count: int = 1

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise ValueError(f"shard {self.index}/{self.count}: INDEX must be 0 to COUNT-1")

    @property
    def everything(self) -> bool:
        return self.count == 1

    def owns(self, obj: dict[str, Any]) -> bool:
        """Whether a parent is this shard's: a stable hash of its uid (of namespace and name
        when it has none yet, as in a dry run's preview of a new parent)."""
        if self.count == 1:
            return True
        import hashlib  # imported here: only sharded runs hash (and --help loads this module)

        meta = obj.get("metadata") or {}
        key = str(meta.get("uid") or "") or f"{meta.get('namespace') or ''}/{meta.get('name')}"
        digest = hashlib.sha256(key.encode()).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def _digits(text: str) -> bool:
    """ASCII digits and nothing else (`str.isdigit` takes full-width digits and `²`; `int` ` 1`)."""
    return 0 < len(text) <= 9 and all("0" <= c <= "9" for c in text)


def parse_shard(text: str, job_index: str | None) -> Shard:
    """`INDEX/COUNT`, or `auto/COUNT` with INDEX from `job_index` (an Indexed Job's
    JOB_COMPLETION_INDEX). ValueError says what is wrong."""
    index_text, slash, count_text = text.partition("/")
    if not slash:
        raise ValueError(f"{text!r} is not INDEX/COUNT (e.g. 0/4, or auto/4 in an Indexed Job)")
    if not _digits(count_text) or int(count_text) < 1:
        raise ValueError(f"{text!r}: COUNT must be a whole number >= 1 (ASCII digits)")
    if index_text == "auto":
        if job_index is None or not _digits(job_index):
            raise ValueError(
                f"{text!r}: auto takes the index from JOB_COMPLETION_INDEX (set in the Pods of "
                f"an Indexed Job), which is {'not set' if job_index is None else repr(job_index)}"
            )
        index_text = job_index
    if not _digits(index_text):
        raise ValueError(f"{text!r}: INDEX must be a whole number or auto (ASCII digits)")
    return Shard(int(index_text), int(count_text))


@dataclass(frozen=True)
class ReconcileSettings:
    """What a run reconciles and how hard it tries."""

    controller_paths: tuple[str, ...] = ()
    only_controllers: frozenset[str] = frozenset()
    controllers_from_cluster: bool = True
    dry_run: bool = False  # either dry run: nothing is persisted, one pass, no lock, no Events
    # --dry-run=server (dry_run is then True too): every write is sent as a dry run
    server_dry_run: bool = False
    workers: int = 8
    max_duration: float = 300.0  # the run's time budget, seconds
    poll_interval: float = 2.0  # between passes while waiting on the cluster
    page_size: int = 500
    recursive: bool = False  # directories of --controllers and --local, like kubectl -R
    # --local manifests: their controllers run too (below --controllers in precedence), with
    # command hooks beside the files they came from.
    manifest_paths: tuple[str, ...] = ()
    # --manifests: applied before the controllers run, recorded in an ApplySet
    apply_paths: tuple[str, ...] = ()
    prune: bool = False  # delete the ApplySet's members that left --manifests
    prune_allow_shrink: bool = False  # a prune may delete more than half of the set
    prune_cascade: bool = False  # a pruned Namespace or CRD may take objects outside the set
    applyset: str = "default/reconcile"  # the ApplySet's parent ConfigMap, NAMESPACE/NAME
    lock: str | None = None  # --lock NAMESPACE/NAME: a Lease held while the run writes
    # --run-record NAMESPACE/NAME: the ConfigMap a run's record is written to; None: beside
    # the --lock Lease, under its name (no lock: no record); "none": no record
    run_record: str | None = None
    # --allowed-hook-hosts: the only hosts webhooks may call (None: any); see specs.hook_hosts
    allowed_hook_hosts: tuple[str, ...] | None = None
    lock_holder: str = ""  # who this run is, in the Lease (default: POD_NAME, or host-pid)
    shard: Shard = field(default_factory=Shard)  # --shard: which parents are this process's
    # --target-label-selector: only the controllers whose labels match (Metacontroller's option)
    target_label_selector: str | None = None
    server_side_apply: bool = False  # --apply-strategy server-side
    force_conflicts: bool = False  # with server-side apply: take fields other managers own
    # A run without controllers is an ordinary one (`reconcile diff` of plain manifests): not
    # warned about.
    controllers_optional: bool = False

    def with_manifest_paths(self, paths: tuple[str, ...]) -> ReconcileSettings:
        return replace(self, manifest_paths=paths)


@dataclass(frozen=True)
class LocalSettings:
    """The embedded default: an in-process cluster seeded from manifests instead of a real one."""

    manifest_paths: tuple[str, ...] = ()
    output_dir: str | None = None  # where the resulting objects are written as YAML
    kubernetes_version: str | None = None  # the release the in-process cluster behaves as

    @property
    def enabled(self) -> bool:
        return bool(self.manifest_paths)


@dataclass(frozen=True)
class GitSettings:
    """`--git`: controllers and manifests read from a repository at a ref."""

    url: str | None = None
    ref: str | None = None  # branch, tag, commit or revision; None: the remote's default branch
    cache_dir: str | None = None  # None: ~/.cache/reconcile/git

    @property
    def enabled(self) -> bool:
        return bool(self.url)


class KustomizeIsolation(StrEnum):
    """`--kustomize-isolation`: how kustomize is cut off from the network when remote entries
    are not allowed. `auto` takes a network namespace of its own where one can be made, else a
    seccomp filter that refuses it every socket but a Unix one, else refuses to run it;
    `namespace` and `seccomp` take only that one; `none` runs it on the network (the fields are
    still checked, proxies point nowhere and git may use no transport)."""

    AUTO = "auto"
    NAMESPACE = "namespace"
    SECCOMP = "seccomp"
    NONE = "none"


@dataclass(frozen=True)
class KustomizeSettings:
    """How a directory holding a kustomization is rendered (`kustomize build`)."""

    # --kustomize-allow-remote: bases and resources fetched from URLs and git repositories
    allow_remote: bool = False
    # with --git: the checkout; a base or resource that resolves outside it is refused
    confined_to: str | None = None
    # --kustomize-isolation: how kustomize is kept off the network (without allow_remote)
    isolation: KustomizeIsolation = KustomizeIsolation.AUTO


@dataclass(frozen=True)
class MetricsSettings:
    """Where a run's Prometheus metrics go (batch jobs push them or leave them in a file)."""

    pushgateway: str | None = None
    file: str | None = None


@dataclass(frozen=True)
class ReportTarget:
    format: str  # text, json or markdown
    path: str | None = None  # None: standard output


@dataclass(frozen=True)
class ReportSettings:
    targets: tuple[ReportTarget, ...] = (ReportTarget("text"),)
    color: bool = False  # ANSI colours in text on standard output
    verbose: bool = False  # the text report in full: every parent and hook call


@dataclass(frozen=True)
class RunConfig:
    connection: ConnectionSettings = field(default_factory=ConnectionSettings)
    logging: LoggingSettings = field(default_factory=LoggingSettings)
    reconcile: ReconcileSettings = field(default_factory=ReconcileSettings)
    local: LocalSettings = field(default_factory=LocalSettings)
    git: GitSettings = field(default_factory=GitSettings)
    kustomize: KustomizeSettings = field(default_factory=KustomizeSettings)
    metrics: MetricsSettings = field(default_factory=MetricsSettings)
    report: ReportSettings = field(default_factory=ReportSettings)
    progress: bool = False  # a progress bar on standard error (only on a terminal)
    # off a terminal: a progress line in the log every this many seconds of a pass (0: none)
    progress_interval: float = 10.0

"""The run configuration: everything the CLI parsed, as plain typed values (no I/O here)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum


class LogFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


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
    qps: float = 50.0
    burst: int = 100
    request_timeout: float = 30.0


@dataclass(frozen=True)
class LoggingSettings:
    level: LogLevel = LogLevel.INFO
    format: LogFormat = LogFormat.TEXT


@dataclass(frozen=True)
class ReconcileSettings:
    """What a run reconciles and how hard it tries."""

    controller_paths: tuple[str, ...] = ()
    only_controllers: frozenset[str] = frozenset()
    controllers_from_cluster: bool = True
    dry_run: bool = False
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
    applyset: str = "default/reconcile"  # the ApplySet's parent ConfigMap, NAMESPACE/NAME
    lock: str | None = None  # --lock NAMESPACE/NAME: a Lease held while the run writes
    lock_holder: str = ""  # who this run is, in the Lease (default: POD_NAME, or host-pid)

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
    ref: str | None = None  # branch, tag or commit; None: the remote's default branch
    cache_dir: str | None = None  # None: ~/.cache/reconcile/git

    @property
    def enabled(self) -> bool:
        return bool(self.url)


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


@dataclass(frozen=True)
class RunConfig:
    connection: ConnectionSettings = field(default_factory=ConnectionSettings)
    logging: LoggingSettings = field(default_factory=LoggingSettings)
    reconcile: ReconcileSettings = field(default_factory=ReconcileSettings)
    local: LocalSettings = field(default_factory=LocalSettings)
    git: GitSettings = field(default_factory=GitSettings)
    metrics: MetricsSettings = field(default_factory=MetricsSettings)
    report: ReportSettings = field(default_factory=ReportSettings)
    progress: bool = False  # a progress bar on standard error (only on a terminal)

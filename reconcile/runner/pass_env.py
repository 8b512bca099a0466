"""What every controller's pass works with (`PassEnv`), and what the pass learns of the kinds'
schemas once a run."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import Any

from reconcile.budget import Budget
from reconcile.cluster.protocol import Cluster
from reconcile.config import Shard
from reconcile.engine.children import Dropped
from reconcile.engine.flow import Facts
from reconcile.engine.status import OBSERVED_GENERATION, pruned_status, schema_keeps
from reconcile.hooks import HookCaller
from reconcile.objects.resource import ResourceInfo
from reconcile.records import dataclass
from reconcile.results import ParentResult
from reconcile.runner.execute import Executor
from reconcile.runner.keeper import KeepWhole
from reconcile.runner.progress import NoProgress, Progress
from reconcile.runner.resolving import kind_schema
from reconcile.runner.snapshot import Snapshot


@dataclass(frozen=True)
class PassEnv:
    """The cluster, the hooks, the run's executor, the pass's snapshot, how many parents (and
    hook calls) at a time, the run's budget and its shard."""

    cluster: Cluster
    hooks: HookCaller
    executor: Executor
    snapshot: Snapshot
    workers: int = 1
    budget: Budget = field(default_factory=Budget)
    shard: Shard = field(default_factory=Shard)
    progress: Progress = field(default_factory=NoProgress)
    # per group/resource/version: what the server keeps of its objects, read once a run (None:
    # everything is kept, or nothing is known)
    kind_schemas: dict[str, Mapping[str, Any] | None] = field(default_factory=dict)
    # what becomes of a parent's result once it is done: kept whole, or its actions' content
    # stowed out of memory for the report (report/spool.py)
    stow: Callable[[ParentResult], None] = field(default_factory=lambda: KeepWhole().stow)
    # per group/resource/version: whether its schema keeps status.observedGeneration
    keeps_generation: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)
    # held while a schema is read: the workers that ask for it at once wait for the one read
    schema_lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    def kind_schema(self, resource: ResourceInfo) -> Mapping[str, Any] | None:
        """What the server keeps of an object of `resource` (`resolving.kind_schema`), read
        once a run however many workers ask for it at the same time."""
        key = _schema_key(resource)
        if key in self.kind_schemas:  # no lock once read: entries are never replaced
            return self.kind_schemas[key]
        with self.schema_lock:
            if key not in self.kind_schemas:
                self.kind_schemas[key] = kind_schema(self.cluster, resource)
            return self.kind_schemas[key]

    def facts(self, resource: ResourceInfo, stamps: bool) -> Facts:
        """What a parent of `resource` is planned with. `stamps`: its kind adds
        status.observedGeneration, unless its schema drops it (noted once) or a status write
        of this run saw it dropped."""
        schema = self.kind_schema(resource)
        if not stamps:
            return Facts(self.executor.strategy, False, schema)
        key = _schema_key(resource)
        keeps = self.keeps_generation.get(key)
        if keeps is None:  # asked for every parent: the schema walked once
            keeps = self.keeps_generation[key] = schema_keeps(
                schema, ("status", OBSERVED_GENERATION)
            )
        if not keeps:
            self.executor.note_dropped_generation(resource.group_resource)
        stamp = keeps and resource.group_resource not in self.executor.drops_generation
        return Facts(self.executor.strategy, stamp, schema)

    def note_dropped_fields(self, controller: str, dropped: Sequence[Dropped]) -> None:
        """Say once a run which fields of a controller's desired objects their kinds' schemas
        have no place for (they are neither written nor compared)."""
        for item in dropped:
            self.executor.note_dropped_fields(item.resource, controller, list(item.paths))

    def note_dropped_status(
        self, resource: ResourceInfo, controller: str, status: Mapping[str, Any] | None
    ) -> None:
        """Say once a run which fields of a status to write (a hook's, or a map's aggregated
        one) the parent's schema has no place for: the server would drop them, so they are not
        written (nor compared)."""
        _, dropped = pruned_status(status or {}, self.kind_schema(resource))
        if dropped:
            self.executor.note_dropped_status(resource.group_resource, controller, dropped)


def _schema_key(resource: ResourceInfo) -> str:
    """How the pass keys what it learns of a kind's schema: its group, resource and version."""
    return f"{resource.group_resource}/{resource.version}"

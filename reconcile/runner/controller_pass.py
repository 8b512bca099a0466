"""What a pass of one controller works with: the cluster, the hooks, the run's executor, the
pass's snapshot, how many workers, and the run's time budget."""

from __future__ import annotations

from reconcile.budget import Budget
from reconcile.cluster.protocol import Cluster
from reconcile.config import Shard
from reconcile.hooks import HookCaller
from reconcile.runner.execute import Executor
from reconcile.runner.snapshot import Snapshot


class ControllerPass:
    def __init__(
        self,
        cluster: Cluster,
        hooks: HookCaller,
        executor: Executor,
        snapshot: Snapshot,
        workers: int,
        *,
        budget: Budget | None = None,
        shard: Shard | None = None,
    ) -> None:
        self.cluster = cluster
        self.hooks = hooks
        self.executor = executor
        self.snapshot = snapshot
        self.workers = max(1, workers)
        self.budget = budget or Budget()
        self.shard = shard or Shard()

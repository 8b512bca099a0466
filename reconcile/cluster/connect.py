"""Building a `Cluster` from the run's connection settings."""

from __future__ import annotations

from reconcile.budget import Budget
from reconcile.cluster.protocol import Cluster
from reconcile.config import ConnectionSettings


def connect_live(
    settings: ConnectionSettings,
    budget: Budget | None = None,
    workers: int = 8,
    *,
    look_up_release: bool = False,
) -> Cluster:
    """`workers`: how many requests may be in flight at once (connections kept alive);
    `look_up_release`: ask the server's release at once, in the background (a run's first
    request, sent while the rest of it loads)."""
    # Imported here so that runs on the memory backend never load the kubernetes client.
    from reconcile.cluster.kubeconfig import load_connection
    from reconcile.cluster.live import LiveCluster, LiveOptions

    connection = load_connection(settings.kubeconfig, settings.context)
    options = LiveOptions(
        qps=settings.qps,
        burst=settings.burst,
        request_timeout=settings.request_timeout,
        pool_size=max(16, 2 * workers + 4),
    )
    cluster = LiveCluster(connection.configuration, options, budget=budget)
    if look_up_release:
        cluster.look_up_release()
    return cluster

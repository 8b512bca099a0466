"""Sharding on both backends: four shards run at once cover every parent exactly once and
converge; a change of the shard count between runs is safe; `--target-label-selector` picks
controllers by their labels."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from reconcile.cluster.types import ResourceInfo
from reconcile.config import ReconcileSettings, Shard
from reconcile.objects.meta import metadata
from reconcile.results import RunResult
from reconcile.runner.run import RunLoop
from reconcile.runner.sources import load_controllers
from tests.support.backends import Backend
from tests.support.controllers import composite, webhook, write_controllers
from tests.support.hookserver import serve

PARENTS = 24


def create_parents(backend: Backend, kind: ResourceInfo, namespace: str) -> list[str]:
    names = [f"p{i:02d}" for i in range(PARENTS)]
    for name in names:
        backend.admin.create(
            kind,
            {
                "apiVersion": kind.api_version,
                "kind": kind.kind,
                "metadata": {"name": name, "namespace": namespace},
                "spec": {"selector": {"matchLabels": {"parent": name}}},
            },
        )
    return names


def sync(request: dict[str, Any]) -> dict[str, Any]:
    name = request["parent"]["metadata"]["name"]
    return {
        "status": {"children": len(request["children"]["ConfigMap.v1"])},
        "children": [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"{name}-cm", "labels": {"parent": name}},
                "data": {"parent": name},
            }
        ],
    }


def run_shards(backend: Backend, path: Path, count: int, namespace: str) -> list[RunResult]:
    results: list[RunResult | None] = [None] * count

    def one(index: int) -> None:
        settings = ReconcileSettings(
            controller_paths=(str(path),),
            controllers_from_cluster=False,
            max_duration=30.0,
            poll_interval=0.1,
            workers=2,
            shard=Shard(index, count),
            lock=f"{namespace}/reconcile",
        )
        results[index] = RunLoop(backend.cluster, settings).run()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert all(r is not None for r in results)
    return [r for r in results if r is not None]


def owned_by_shard(parents: list[dict[str, Any]], count: int) -> list[set[str]]:
    return [
        {metadata(p)["name"] for p in parents if Shard(index, count).owns(p)}
        for index in range(count)
    ]


def synced(result: RunResult) -> set[str]:
    return {p.parent.rsplit("/", 1)[1] for pass_ in result.passes for p in pass_.parents()}


def test_shards_at_once_cover_every_parent_exactly_once(
    backend: Backend, namespace: str, tmp_path: Path
) -> None:
    kind = backend.apply_crd("Sharded")
    names = create_parents(backend, kind, namespace)
    parents = backend.admin.list(kind, namespace=namespace).items
    with serve(sync) as server:
        path = write_controllers(
            tmp_path,
            composite(
                "sharded", kind, [("v1", "configmaps", "InPlace")], {"sync": webhook(server.url)}
            ),
        )
        for count in (4, 3):  # the count changes between runs: still exactly once
            results = run_shards(backend, path, count, namespace)
            shares = [synced(r) for r in results]
            assert all(r.errors == [] and r.converged for r in results), [r.errors for r in results]
            assert set().union(*shares) == set(names)
            assert sum(len(s) for s in shares) == len(names)  # no parent in two shards
            # each shard synced the parents whose uid hashes to it: by chance one of four may
            # own none of 24 (0.4 % of runs); fewer than two own any in 1 run of 10^10
            assert shares == owned_by_shard(parents, count)
            assert sum(1 for share in shares if share) >= 2, "the parents spread over the shards"
            assert all(r.skipped is None for r in results)  # each shard its own lock
        configmaps = backend.admin.discover("v1", "configmaps")
        items = backend.admin.list(configmaps, namespace=namespace).items
        assert {f"{n}-cm" for n in names} <= {metadata(c)["name"] for c in items}
        again = run_shards(backend, path, 2, namespace)
        assert all(r.converged for r in again)
        # converged: no change but the shards' own Leases
        assert sum(sum(r.actions_by_kind(applied=True).values()) for r in again) == 0


def test_target_label_selector_picks_controllers_by_label(backend: Backend, tmp_path: Path) -> None:
    def controller(name: str, team: str) -> dict[str, Any]:
        kind = ResourceInfo("example.com", "v1", f"{name}s", name.title(), True)
        obj = composite(name, kind, [], {"sync": webhook("http://127.0.0.1:1/")})
        obj["metadata"]["labels"] = {"team": team}
        return obj

    path = write_controllers(tmp_path, controller("pay", "payments"), controller("web", "web"))
    loaded = load_controllers(
        backend.cluster, [path], from_cluster=False, target_selector="team=payments"
    )
    assert [c.name for c in loaded.composite] == ["pay"]
    everything = load_controllers(backend.cluster, [path], from_cluster=False)
    assert [c.name for c in everything.composite] == ["pay", "web"]

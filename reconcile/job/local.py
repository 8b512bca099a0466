"""The embedded default: a `memory` cluster seeded from manifests (its YAML dump is
`output_dir`'s)."""

from __future__ import annotations

from pathlib import Path

from reconcile.cluster.memory import MemoryCluster
from reconcile.crds import CRD_FILES
from reconcile.files.seed import load_all_manifests, load_manifests
from reconcile.runner.sources import yaml_documents


def seeded_cluster(
    paths: list[Path], *, recursive: bool = False, kubernetes_version: str | None = None
) -> MemoryCluster:
    """A memory cluster with the metacontroller.k8s.io CRDs and every object of `paths`.

    Raises ManifestError (every object that could not be created, after loading the rest)
    or FileNotFoundError. The seeding requests are not counted in the run's cost.
    `kubernetes_version`: the release the cluster behaves as (default: the newest supported).
    """
    cluster = MemoryCluster(stable_uids=True, kubernetes_version=kubernetes_version)
    # The manifests may carry these CRDs too (a reloaded --output-dir does): theirs then win.
    for crd in CRD_FILES:
        load_manifests(cluster, crd)
    # one load: every path's namespaces and CRDs before any path's other objects
    load_all_manifests(cluster, paths, recursive=recursive)
    cluster.stats.reset()
    return cluster


def controller_dirs(paths: list[Path], *, recursive: bool = False) -> dict[str, Path]:
    """For each controller in the manifests, where its command hooks run by default: the
    directory of the file it came from, of the kustomization that rendered it, or the current
    directory for standard input."""
    dirs: dict[str, Path] = {}
    for path in paths:
        for home, _, obj in yaml_documents(path, recursive=recursive):
            if str(obj.get("apiVersion", "")).startswith("metacontroller.k8s.io/"):
                name = (obj.get("metadata") or {}).get("name")
                if isinstance(name, str):
                    dirs[name] = home
    return dirs

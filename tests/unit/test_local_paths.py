"""Several `--local` paths load as one: every path's Namespaces, then every path's CRDs, then the
other objects with owners before dependents, whichever path each came from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from reconcile.files.seed import ManifestError
from reconcile.job.local import seeded_cluster
from tests.support.cli import reconcile

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "profiles.example.com"},
    "spec": {
        "group": "example.com",
        "names": {"kind": "Profile", "plural": "profiles", "singular": "profile"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                },
            }
        ],
    },
}


def write(path: Path, *objects: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(objects))
    return path


def configmap(name: str, namespace: str, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, **meta},
        "data": {"a": "b"},
    }


def test_a_namespace_and_a_crd_of_a_later_path_come_first(tmp_path: Path) -> None:
    owner_ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner"}
    apps = write(
        tmp_path / "apps" / "all.yaml",
        configmap("settings", "kubeflow", ownerReferences=[owner_ref]),
        {
            "apiVersion": "example.com/v1",
            "kind": "Profile",
            "metadata": {"name": "team-a", "namespace": "kubeflow"},
        },
    )
    base = write(
        tmp_path / "base" / "all.yaml",
        CRD,
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kubeflow"}},
        configmap("owner", "kubeflow"),
    )
    cluster = seeded_cluster([apps, base])
    cms = cluster.discover("v1", "configmaps")
    owner = cluster.get(cms, "owner", namespace="kubeflow")
    settings = cluster.get(cms, "settings", namespace="kubeflow")
    assert settings["metadata"]["ownerReferences"][0]["uid"] == owner["metadata"]["uid"]
    profiles = cluster.discover("example.com/v1", "profiles")
    assert cluster.get(profiles, "team-a", namespace="kubeflow")


def test_every_path_is_loaded_before_the_failures_are_named(tmp_path: Path) -> None:
    first = write(tmp_path / "first.yaml", configmap("a", "nowhere"))
    second = write(tmp_path / "second.yaml", configmap("b", "default"), configmap("c", "gone"))
    with pytest.raises(ManifestError) as raised:
        seeded_cluster([first, second])
    assert [f.split(": ")[0] for f in raised.value.failures] == [
        f"{first} (document 1)",
        f"{second} (document 2)",
    ]
    assert [o["metadata"]["name"] for o in raised.value.objects][-1:] == ["b"]


def test_the_command_with_the_namespace_in_a_later_path(tmp_path: Path) -> None:
    apps = write(tmp_path / "apps" / "settings.yaml", configmap("settings", "kubeflow"))
    base = write(
        tmp_path / "base" / "namespace.yaml",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kubeflow"}},
    )
    out = tmp_path / "out"
    done = reconcile(
        "--local", str(apps), "--local", str(base), "--output-dir", str(out), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "not found" not in done.stderr
    assert (out / "kubeflow" / "configmaps" / "settings.yaml").exists()

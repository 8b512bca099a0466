"""Controller sources (precedence, duplicates, selection) and report file arguments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from reconcile.cluster.memory import MemoryCluster
from reconcile.config import ReportTarget
from reconcile.crds import CRD_FILES
from reconcile.files.seed import load_manifests
from reconcile.report.targets import parse_report_file
from reconcile.runner.sources import load_controllers


def controller(name: str, url: str) -> dict[str, Any]:
    return {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "CompositeController",
        "metadata": {"name": name},
        "spec": {
            # One parent resource each: two controllers syncing every parent of one resource
            # would fight, and are refused (see test_controllers_that_would_fight_are_refused).
            "parentResource": {"apiVersion": "example.com/v1", "resource": f"{name}-things"},
            "hooks": {"sync": {"webhook": {"url": url}}},
        },
    }


@pytest.fixture
def cluster() -> MemoryCluster:
    cluster = MemoryCluster()
    for crd in CRD_FILES:
        load_manifests(cluster, crd)
    resource = cluster.discover("metacontroller.k8s.io/v1alpha1", "compositecontrollers")
    cluster.create(resource, controller("shared", "http://cluster/sync"))
    cluster.create(resource, controller("only-in-cluster", "http://cluster/sync"))
    return cluster


def write(path: Path, *objects: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump_all(objects))
    return path


def urls(loaded: Any) -> dict[str, str]:
    return {c.name: c.hooks.sync.target for c in loaded.composite}


def test_precedence_files_over_local_manifests_over_the_cluster(
    cluster: MemoryCluster, tmp_path: Path
) -> None:
    local = write(tmp_path / "local.yaml", controller("shared", "http://local/sync"))
    files = write(tmp_path / "files.yaml", controller("from-file", "http://file/sync"))
    loaded = load_controllers(cluster, [files], manifest_paths=[local])
    assert loaded.errors == []
    assert urls(loaded) == {
        "from-file": "http://file/sync",
        "only-in-cluster": "http://cluster/sync",
        "shared": "http://local/sync",
    }
    over = write(tmp_path / "over.yaml", controller("shared", "http://file/sync"))
    assert urls(load_controllers(cluster, [over], manifest_paths=[local]))["shared"] == (
        "http://file/sync"
    )


def test_a_name_twice_in_one_source_is_an_error_and_neither_runs(
    cluster: MemoryCluster, tmp_path: Path
) -> None:
    files = write(
        tmp_path / "c.yaml", controller("twice", "http://a/"), controller("twice", "http://b/")
    )
    loaded = load_controllers(cluster, [files], from_cluster=False)
    assert loaded.composite == []
    assert loaded.fatal == [
        "CompositeController twice: defined more than once "
        f"({files} (document 1), {files} (document 2)); none of them runs"
    ]


def test_selection_ignores_errors_of_unselected_controllers(
    cluster: MemoryCluster, tmp_path: Path
) -> None:
    broken = controller("broken", "http://a/")
    broken["spec"]["hooks"]["sync"]["webhook"]["timeout"] = "soon"
    files = write(tmp_path / "c.yaml", broken, controller("fine", "http://a/"))
    loaded = load_controllers(cluster, [files], only=frozenset({"fine", "missing"}))
    assert [c.name for c in loaded.composite] == ["fine"]
    assert loaded.fatal == ["--controller missing: no such controller"]
    everything = load_controllers(cluster, [files])
    assert any("spec.hooks.sync.webhook.timeout" in e for e in everything.fatal)


def test_problems_in_given_files_are_fatal_and_in_the_cluster_are_not(
    cluster: MemoryCluster, tmp_path: Path
) -> None:
    resource = cluster.discover("metacontroller.k8s.io/v1alpha1", "compositecontrollers")
    broken = controller("broken-in-cluster", "http://a/")
    broken["spec"]["hooks"]["sync"]["webhook"]["timeout"] = "soon"
    cluster.create(resource, broken)
    loaded = load_controllers(cluster, [tmp_path / "missing.yaml"])
    assert loaded.fatal == [f"--controllers {tmp_path / 'missing.yaml'}: no such file or directory"]
    assert any("broken-in-cluster" in e for e in loaded.errors)
    assert "only-in-cluster" in urls(loaded)
    (tmp_path / "bad.yaml").write_text("kind: [unclosed\n")
    assert "bad.yaml" in load_controllers(cluster, [tmp_path / "bad.yaml"]).fatal[0]


def test_invalid_controllers_in_files_are_fatal_and_stray_objects_named(
    cluster: MemoryCluster, tmp_path: Path
) -> None:
    decorator = {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "MapController",
        "metadata": {"name": "deco"},
    }
    stray = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"}}
    files = write(tmp_path / "c.yaml", decorator, stray, controller("ok", "http://a/"))
    loaded = load_controllers(cluster, [files], from_cluster=False)
    assert len(loaded.fatal) == 1 and "MapController deco" in loaded.fatal[0]
    assert "spec.parentResource: is required" in loaded.fatal[0]
    assert loaded.warnings == [
        f"--controllers: ignored Service svc ({files} (document 2)): not a controller"
    ]
    # In --local manifests, other objects are what the controllers act on: no warning.
    local = load_controllers(cluster, [], manifest_paths=[write(tmp_path / "l.yaml", stray)])
    assert local.warnings == [] and local.fatal == []


def test_controllers_that_would_fight_are_refused(cluster: MemoryCluster, tmp_path: Path) -> None:
    first, second, narrow = (controller(n, "http://a/") for n in ("first", "second", "narrow"))
    for c in (first, second, narrow):
        c["spec"]["parentResource"]["resource"] = "things"
    second["spec"]["parentResource"]["apiVersion"] = "example.com/v2"  # same objects
    narrow["spec"]["parentResource"]["labelSelector"] = {"matchLabels": {"team": "a"}}
    files = write(tmp_path / "c.yaml", first, second, narrow)
    loaded = load_controllers(cluster, [files], from_cluster=False)
    assert [c.name for c in loaded.composite] == ["narrow"]
    assert len(loaded.fatal) == 1
    assert "first and second both sync every things.example.com" in loaded.fatal[0]


def test_directories_are_read_like_kubectl_apply_f(cluster: MemoryCluster, tmp_path: Path) -> None:
    write(tmp_path / "top.yaml", controller("top", "http://a/"))
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub" / "deep.yaml", controller("deep", "http://a/"))
    flat = load_controllers(cluster, [tmp_path], from_cluster=False)
    deep = load_controllers(cluster, [tmp_path], from_cluster=False, recursive=True)
    assert [c.name for c in flat.composite] == ["top"]
    assert [c.name for c in deep.composite] == ["deep", "top"]


@pytest.mark.parametrize(
    ("value", "target"),
    [
        ("json:out.json", ReportTarget("json", "out.json")),
        ("markdown:/tmp/summary", ReportTarget("markdown", "/tmp/summary")),
        ("report.md", ReportTarget("markdown", "report.md")),
        ("report.json", ReportTarget("json", "report.json")),
        ("report.txt", ReportTarget("text", "report.txt")),
        ("C:report", ReportTarget("text", "C:report")),
    ],
)
def test_report_file_arguments(value: str, target: ReportTarget) -> None:
    assert parse_report_file(value) == target


def test_an_unknown_report_format_is_named() -> None:
    with pytest.raises(ValueError, match="yaml"):
        parse_report_file("yaml:out.yaml")


def decorator_object(name: str, url: str) -> dict[str, Any]:
    return {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "DecoratorController",
        "metadata": {"name": name},
        "spec": {
            "resources": [{"apiVersion": "v1", "resource": "configmaps"}],
            "hooks": {"sync": {"webhook": {"url": url}}},
        },
    }


def test_decorators_come_from_the_cluster_and_files_with_the_same_precedence(
    cluster: MemoryCluster, tmp_path: Path
) -> None:
    decorators = cluster.discover("metacontroller.k8s.io/v1alpha1", "decoratorcontrollers")
    cluster.create(decorators, decorator_object("in-cluster", "http://cluster/"))
    cluster.create(decorators, decorator_object("overridden", "http://cluster/"))
    files = write(tmp_path / "d.yaml", decorator_object("overridden", "http://file/"))
    loaded = load_controllers(cluster, [files])
    assert [d.name for d in loaded.decorator] == ["in-cluster", "overridden"]
    assert loaded.decorator[1].hooks.sync.target == "http://file/"
    broken = decorator_object("broken", "http://file/")
    broken["spec"]["resources"] = []
    refused = load_controllers(cluster, [write(tmp_path / "b.yaml", broken)])
    assert refused.fatal == [
        f"DecoratorController broken ({tmp_path / 'b.yaml'} (document 1)): "
        "spec.resources: is required: at least one rule"
    ]


def map_object(name: str, url: str) -> dict[str, Any]:
    return {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "MapController",
        "metadata": {"name": name},
        "spec": {
            "parentResource": {"apiVersion": "example.com/v1", "resource": "schedules"},
            "inputResources": [{"apiVersion": "v1", "resource": "persistentvolumeclaims"}],
            "outputResources": [{"apiVersion": "v1", "resource": "configmaps"}],
            "hooks": {"map": {"webhook": {"url": url}}},
        },
    }


def test_map_controllers_come_from_the_cluster_and_files_with_the_same_precedence(
    cluster: MemoryCluster, tmp_path: Path
) -> None:
    maps = cluster.discover("metacontroller.k8s.io/v1alpha1", "mapcontrollers")
    cluster.create(maps, map_object("in-cluster", "http://cluster/"))
    cluster.create(maps, map_object("overridden", "http://cluster/"))
    broken = map_object("broken-in-cluster", "http://cluster/")
    broken["spec"]["hooks"]["map"] = {}
    cluster.create(maps, broken)
    files = write(tmp_path / "m.yaml", map_object("overridden", "http://file/"))
    loaded = load_controllers(cluster, [files])
    assert [m.name for m in loaded.map] == ["in-cluster", "overridden"]
    assert loaded.map[1].hooks.map.target == "http://file/"
    assert loaded.errors == [
        "MapController broken-in-cluster: spec.hooks.map.webhook: exactly one of webhook and "
        "command must be set, and neither is (read from a cluster, a command hook is dropped by "
        "a CRD that does not declare it, as Metacontroller's own do not: install reconcile's "
        "CRDs, `kubectl apply -k manifests/crds`)"
    ]
    only = load_controllers(cluster, [files], only=frozenset({"in-cluster"}))
    assert [m.name for m in only.map] == ["in-cluster"] and not only.fatal

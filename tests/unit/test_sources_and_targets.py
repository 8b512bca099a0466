"""Controller sources (precedence, duplicates, selection) and report file arguments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from reconcile.cluster.memory import MemoryCluster, load_manifests
from reconcile.config import ReportTarget
from reconcile.crds import CRD_DIR
from reconcile.report.targets import parse_report_file
from reconcile.runner.sources import load_controllers


def controller(name: str, url: str) -> dict[str, Any]:
    return {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "CompositeController",
        "metadata": {"name": name},
        "spec": {
            "parentResource": {"apiVersion": "example.com/v1", "resource": "things"},
            "hooks": {"sync": {"webhook": {"url": url}}},
        },
    }


@pytest.fixture
def cluster() -> MemoryCluster:
    cluster = MemoryCluster()
    load_manifests(cluster, CRD_DIR)
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
    assert loaded.errors == ["CompositeController twice: defined more than once; none of them runs"]


def test_selection_ignores_errors_of_unselected_controllers(
    cluster: MemoryCluster, tmp_path: Path
) -> None:
    broken = controller("broken", "http://a/")
    broken["spec"]["hooks"]["sync"]["webhook"]["timeout"] = "soon"
    files = write(tmp_path / "c.yaml", broken, controller("fine", "http://a/"))
    loaded = load_controllers(cluster, [files], only=frozenset({"fine", "missing"}))
    assert [c.name for c in loaded.composite] == ["fine"]
    assert loaded.errors == ["--controller missing: no such controller"]
    everything = load_controllers(cluster, [files])
    assert any("spec.hooks.sync.webhook.timeout" in e for e in everything.errors)


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

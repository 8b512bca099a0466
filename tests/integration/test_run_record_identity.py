"""The run record writes, reads and reports only ConfigMaps that carry its mark (the label
`reconcile.dev/run-record: "true"`): someone else's ConfigMap of the record's name is never
overwritten (an error names it, the run's other work is done), `reconcile status` shows no other
ConfigMap as a run, a record's identity is its metadata's and never its data's, and a name the
API server would refuse is a usage error before any work. On both backends where the API is
involved; the command's own tests on the real control plane."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest

from reconcile.cluster.errors import ApiError
from reconcile.job.run_record import (
    RECORD_LABEL,
    NotARecord,
    describe,
    read_records,
    write_record,
)
from reconcile.job.status import render_record
from tests.support.backends import Backend
from tests.support.cli import reconcile
from tests.support.controlplane import ControlPlane
from tests.support.examples import EXAMPLES, LoadedExample, load_example

Obj = dict[str, Any]
DATA = {"outcome": "succeeded", "exitCode": "0", "endTime": "2026-11-26T12:05:04Z"}
# ConfigMaps that look like records and are not: only the exact label is the mark
LOOKALIKES: dict[str, dict[str, Any]] = {
    "no-labels": {},
    "mark-false": {"labels": {RECORD_LABEL: "false"}},
    "mark-yes": {"labels": {RECORD_LABEL: "yes"}},
    "mark-upper": {"labels": {RECORD_LABEL: "True"}},
    "managed-by-only": {"labels": {"app.kubernetes.io/managed-by": "reconcile"}},
    "other-key": {"labels": {"reconcile.dev/run-record-x": "true"}},
    "annotation": {"annotations": {RECORD_LABEL: "true"}},
}


def configmap(namespace: str, name: str, data: dict[str, str], **meta: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, **meta},
        "data": data,
    }


@pytest.mark.parametrize("lookalike", sorted(LOOKALIKES))
def test_a_configmap_that_is_not_a_record_is_never_overwritten(
    backend: Backend, namespace: str, lookalike: str
) -> None:
    configmaps = backend.resource("v1", "configmaps")
    theirs = backend.admin.create(
        configmaps,
        configmap(namespace, "settings", {"key": "value"}, **LOOKALIKES[lookalike]),
    )
    mark = backend.mark()
    with pytest.raises(NotARecord) as refused:
        write_record(backend.cluster, namespace, "settings", DATA)
    assert f"ConfigMap {namespace}/settings is not a run record" in str(refused.value)
    assert backend.mutations_since(mark) == {}
    after = backend.admin.get(configmaps, "settings", namespace=namespace)
    assert after["data"] == {"key": "value"}
    assert after["metadata"]["resourceVersion"] == theirs["metadata"]["resourceVersion"]
    # nor is it read or reported as one
    with pytest.raises(NotARecord):
        read_records(backend.cluster, namespace, "settings")
    assert read_records(backend.cluster, namespace) == []


def test_a_record_is_created_then_replaced_and_keeps_its_mark(
    backend: Backend, namespace: str
) -> None:
    write_record(backend.cluster, namespace, "reconcile", DATA)
    failed = {**DATA, "outcome": "failed", "exitCode": "1"}
    write_record(backend.cluster, namespace, "reconcile", failed)
    (record,) = read_records(backend.cluster, namespace)
    assert record["data"] == failed
    assert record["metadata"]["labels"][RECORD_LABEL] == "true"
    assert read_records(backend.cluster, namespace, "reconcile")[0]["data"] == failed


def test_identity_comes_from_metadata_never_from_data(backend: Backend, namespace: str) -> None:
    """A record whose data says it is another (name, namespace keys, anything else) is shown
    under its own name, with only the record's fields."""
    configmaps = backend.resource("v1", "configmaps")
    forged = {
        **DATA,
        "name": "production",
        "namespace": "kube-system",
        "exitCode": "0",
        "extra": "\x1b[2Jcleared",
    }
    backend.admin.create(
        configmaps, configmap(namespace, "reconcile-a", forged, labels={RECORD_LABEL: "true"})
    )
    backend.admin.create(configmaps, configmap(namespace, "aaa-not-ours", {"outcome": "x"}))
    records = [describe(r) for r in read_records(backend.cluster, namespace)]
    assert [(r["namespace"], r["name"]) for r in records] == [(namespace, "reconcile-a")]
    assert "extra" not in records[0] and records[0]["exitCode"] == "0"
    shown = render_record(records[0])
    assert shown.startswith(f"{namespace}/reconcile-a: succeeded, exit 0")
    assert "production" not in shown and "kube-system" not in shown


def test_a_configmap_made_between_the_read_and_the_create_is_not_taken(
    backend: Backend, namespace: str
) -> None:
    """A race: someone creates the ConfigMap after the record found none. The create fails
    (AlreadyExists), the ConfigMap is read again and, not being a record, left alone."""
    configmaps = backend.resource("v1", "configmaps")
    cluster = backend.cluster
    real_create = cluster.create

    def create_theirs_first(resource: Any, body: Obj, **kwargs: Any) -> Obj:
        backend.admin.create(configmaps, configmap(namespace, "late", {"theirs": "1"}))
        return real_create(resource, body, **kwargs)

    cluster.create = create_theirs_first  # type: ignore[method-assign,assignment]
    try:
        with pytest.raises(NotARecord):
            write_record(cluster, namespace, "late", DATA)
    finally:
        del cluster.create
    assert backend.admin.get(configmaps, "late", namespace=namespace)["data"] == {"theirs": "1"}


# --- the command, on the real control plane --------------------------------------------------


@pytest.fixture
def hello(live_backend: Backend) -> Any:
    loaded: LoadedExample = load_example(live_backend, "hello-world", "crd.yaml", "hello.yaml")
    yield loaded
    loaded.cleanup()


def run(control_plane: ControlPlane, tmp_path: Path, *extra: str) -> Any:
    return reconcile(
        "--kubeconfig", str(control_plane.kubeconfig),
        "--controllers", str(EXAMPLES / "hello-world" / "controller.yaml"),
        "--controller", "hello-controller", "--no-cluster-controllers",
        "--report-format", "json", *extra,
        cwd=tmp_path,
    )  # fmt: skip


@pytest.mark.controlplane
def test_the_run_does_its_work_and_names_the_configmap_it_would_not_overwrite(
    control_plane: ControlPlane, live_backend: Backend, hello: LoadedExample, tmp_path: Path
) -> None:
    namespace = hello.name("hello")
    configmaps = live_backend.resource("v1", "configmaps")
    live_backend.admin.create(configmaps, configmap(namespace, "settings", {"db": "primary"}))
    done = run(control_plane, tmp_path, "--run-record", f"{namespace}/settings")
    assert done.returncode == 1, done.stderr[-3000:]
    assert f"ConfigMap {namespace}/settings is not a run record" in done.stderr
    report = json.loads(done.stdout)
    assert report["errors"] == [] and report["converged"]  # the run's own work is done
    pods = live_backend.resource("v1", "pods")
    assert live_backend.admin.get(pods, "your-name", namespace=namespace)
    after = live_backend.admin.get(configmaps, "settings", namespace=namespace)
    assert after["data"] == {"db": "primary"} and RECORD_LABEL not in (
        after["metadata"].get("labels") or {}
    )
    # `reconcile status` shows no ConfigMap of the namespace as a run (a cluster's
    # kube-root-ca.crt, which the test control plane does not publish, as one), and says what
    # the named one is
    with contextlib.suppress(ApiError):
        live_backend.admin.create(
            configmaps, configmap(namespace, "kube-root-ca.crt", {"ca.crt": "-----BEGIN..."})
        )
    shown = status(control_plane, namespace)
    assert shown.returncode == 1 and "no run record in namespace" in shown.stdout
    assert "kube-root-ca.crt" not in shown.stdout
    for name in ("settings", "kube-root-ca.crt"):
        named = status(control_plane, namespace, name)
        assert named.returncode == 1
        assert f"ConfigMap {namespace}/{name} is not a run record" in named.stdout
    # a record of its own is written and read back as before
    done = run(control_plane, tmp_path, "--run-record", f"{namespace}/reconcile")
    assert done.returncode == 0, done.stderr[-3000:]
    shown = status(control_plane, namespace, "-o", "json")
    assert [(r["namespace"], r["name"]) for r in json.loads(shown.stdout)] == [
        (namespace, "reconcile")
    ]


def status(control_plane: ControlPlane, namespace: str, *extra: str) -> Any:
    return reconcile(
        "status", "-n", namespace, "--kubeconfig", str(control_plane.kubeconfig), *extra,
        cwd=control_plane.workdir,
    )  # fmt: skip


@pytest.mark.parametrize(
    "value",
    [
        "Bad/Name!",
        "UPPER",
        "ns/",
        "a/b/c",
        "-leading",
        "name.",
        "x" * 254,
        "ns_underscore/name",
        "a" * 64 + "/name",
        "name with space",
        "\uff46\uff55\uff4c\uff4c",  # full-width letters
    ],
)
def test_a_run_record_name_the_server_would_refuse_is_a_usage_error_before_any_work(
    tmp_path: Path, value: str
) -> None:
    """No cluster is needed to find out: the name is checked before the run starts (this one
    would fail to connect, which the usage error comes before)."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\n")
    done = reconcile(
        "--kubeconfig", str(kubeconfig), "--run-record", value, "--lock", "reconcile",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1
    assert "--run-record" in done.stderr and "is not [NAMESPACE/]NAME of a ConfigMap" in " ".join(
        done.stderr.replace("│", " ").split()
    )
    assert done.stdout == ""  # no run, so no report


@pytest.mark.parametrize("value", ["BAD", "a/b", "", "-n", "name.", "a b", "x" * 254, "ok!"])
def test_status_refuses_a_name_that_cannot_be_a_configmap(tmp_path: Path, value: str) -> None:
    done = reconcile("status", "--kubeconfig", str(tmp_path / "none"), "--", value, cwd=tmp_path)
    assert done.returncode != 0 and "is not the name of a ConfigMap" in " ".join(
        done.stderr.replace("│", " ").split()
    )


def test_not_a_record_is_an_api_error_with_its_own_words() -> None:
    error = NotARecord("ops", "settings")
    assert isinstance(error, ApiError)
    assert str(error).startswith("ConfigMap ops/settings is not a run record")


def test_a_planted_records_fields_are_shown_no_longer_than_a_run_writes_them() -> None:
    """A ConfigMap marked by someone else is shown as a record (whoever may create ConfigMaps
    in the namespace can plant one), but no field longer than a run writes it, no more errors
    than a run keeps, and escapes written out visibly."""
    shown = render_record(
        {
            "namespace": "ops",
            "name": "planted",
            "outcome": "succeeded" + "\u202e" + "x" * 100_000,
            "exitCode": "0",
            "errors": "\n".join(["\x1b[2J" + "e" * 5_000] * 100),
            "errorCount": "100",
        }
    )
    assert len(shown) < 6_000 and shown.count("\n") == 8
    assert "\\u202e" in shown and "\\x1b[2J" in shown and "\x1b" not in shown

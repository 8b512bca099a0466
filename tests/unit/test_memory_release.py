"""The memory backend as a chosen Kubernetes release: what it serves, how it decodes and
defaults built-in kinds, and what it refuses."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from reconcile.cluster.errors import BadRequest, Invalid, NotFound
from reconcile.cluster.memory import MemoryCluster, UnsupportedVersion, release
from reconcile.cluster.types import Obj
from reconcile.objects.quantity import canonical_quantity
from reconcile.releases import DEFAULT_VERSION, supported_versions

Spec = dict[str, Any]


def create(cluster: MemoryCluster, obj: Obj) -> Obj:
    return cluster.create(cluster.discover(obj["apiVersion"], obj["kind"]), obj)


def pod_template(**spec: Any) -> Obj:
    return {
        "metadata": {"labels": {"app": "a"}},
        "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}], **spec},
    }


def test_the_default_release_is_current_and_versions_are_listed() -> None:
    assert MemoryCluster().release.version == DEFAULT_VERSION == supported_versions()[-1]
    assert supported_versions()[:3] == ("1.20", "1.25", "1.26")
    assert release("v1.31.4").version == "1.31"
    with pytest.raises(UnsupportedVersion, match=r"'1\.19' is not supported .*1\.20, 1\.25"):
        release("1.19")


@pytest.mark.parametrize(
    ("version", "served", "not_served"),
    [
        (
            DEFAULT_VERSION,
            [
                ("batch/v1", "cronjobs"),
                ("policy/v1", "poddisruptionbudgets"),
                ("autoscaling/v2", "horizontalpodautoscalers"),
                ("discovery.k8s.io/v1", "endpointslices"),
                ("resource.k8s.io/v1", "resourceclaims"),
                ("admissionregistration.k8s.io/v1", "validatingadmissionpolicies"),
            ],
            [("batch/v1beta1", "cronjobs"), ("policy/v1beta1", "poddisruptionbudgets")],
        ),
        ("1.25", [("batch/v1", "cronjobs")], [("resource.k8s.io/v1", "resourceclaims")]),
        ("1.20", [("batch/v1beta1", "cronjobs")], [("batch/v1", "cronjobs")]),
    ],
)
def test_each_release_serves_its_resource_set(
    version: str, served: list[tuple[str, str]], not_served: list[tuple[str, str]]
) -> None:
    cluster = MemoryCluster(kubernetes_version=version)
    for api_version, plural in served:
        assert cluster.discover(api_version, plural).resource == plural
    for api_version, plural in not_served:
        with pytest.raises(NotFound):
            cluster.discover(api_version, plural)


def test_a_current_cronjob_is_defaulted_down_to_its_pod_template() -> None:
    cron = create(
        MemoryCluster(),
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {"name": "nightly", "namespace": "default"},
            "spec": {
                "schedule": "0 3 * * *",
                "jobTemplate": {"spec": {"template": pod_template(restartPolicy="OnFailure")}},
            },
        },
    )
    spec = cron["spec"]
    assert (spec["concurrencyPolicy"], spec["suspend"]) == ("Allow", False)
    assert (spec["successfulJobsHistoryLimit"], spec["failedJobsHistoryLimit"]) == (3, 1)
    container = spec["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    assert container["imagePullPolicy"] == "IfNotPresent"
    assert container["terminationMessagePath"] == "/dev/termination-log"


def test_release_gated_defaults() -> None:
    job: Obj = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "default"},
        # no template labels: the Job's own labels are then the generated ones
        "spec": {"template": {"spec": pod_template(restartPolicy="Never")["spec"]}},
    }
    service: Obj = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s", "namespace": "default"},
        "spec": {"ports": [{"port": 80}]},
    }
    old, new = MemoryCluster(kubernetes_version="1.20"), MemoryCluster()
    old_job, new_job = create(old, job), create(new, job)
    assert "completionMode" not in old_job["spec"]
    assert new_job["spec"]["completionMode"] == "NonIndexed"
    assert new_job["spec"]["podReplacementPolicy"] == "TerminatingOrFailed"
    uid = new_job["metadata"]["uid"]
    assert new_job["spec"]["selector"] == {
        "matchLabels": {"batch.kubernetes.io/controller-uid": uid}
    }
    assert new_job["metadata"]["labels"]["batch.kubernetes.io/job-name"] == "j"
    assert "ipFamilies" not in create(old, service)["spec"]
    new_service = create(new, service)["spec"]
    assert (new_service["ipFamilies"], new_service["internalTrafficPolicy"]) == (
        ["IPv4"],
        "Cluster",
    )
    namespaces = new.discover("v1", "namespaces")
    labels = new.get(namespaces, "default")["metadata"]["labels"]
    assert labels == {"kubernetes.io/metadata.name": "default"}


def test_unknown_fields_are_dropped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        pod = create(
            MemoryCluster(),
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p", "namespace": "default"},
                "spec": {"containers": [{"name": "c", "image": "x", "imagePullPolicyy": "Never"}]},
            },
        )
    assert "imagePullPolicyy" not in pod["spec"]["containers"][0]
    assert 'unknown field "spec.containers[0].imagePullPolicyy"' in caplog.text


def test_quantities_are_stored_canonical_wherever_the_schema_has_one() -> None:
    claim = create(
        MemoryCluster(),
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "q", "namespace": "default"},
            "spec": {"hard": {"requests.cpu": 0.5, "requests.memory": "2048Mi", "pods": 10}},
        },
    )
    assert claim["spec"]["hard"] == {
        "requests.cpu": "500m",
        "requests.memory": "2Gi",
        "pods": "10",
    }


@pytest.mark.parametrize(
    ("written", "stored"),
    [
        ("0.5", "500m"),
        (0.5, "500m"),
        (1, "1"),
        ("1024Mi", "1Gi"),
        ("1.5Gi", "1536Mi"),
        ("0.5Gi", "512Mi"),
        ("0.5Ki", "512"),
        ("1000", "1k"),
        ("1500", "1500"),
        ("1e3", "1e3"),
        ("1.5e3", "1500"),
        ("2G", "2G"),
        ("0.1Gi", "107374182400m"),
        ("0.0000000001", "1n"),
        ("-1", "-1"),
        ("abc", None),
    ],
)
def test_canonical_quantity(written: Any, stored: str | None) -> None:
    assert canonical_quantity(written) == stored


def test_decode_errors_are_bad_requests_that_name_the_field() -> None:
    with pytest.raises(BadRequest, match=r"DeploymentSpec\.spec\.replicas of type int32"):
        create(
            MemoryCluster(),
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "d", "namespace": "default"},
                "spec": {
                    "replicas": "2",
                    "selector": {"matchLabels": {"app": "a"}},
                    "template": pod_template(),
                },
            },
        )


def test_statefulset_fields_outside_the_mutable_ones_are_refused() -> None:
    cluster = MemoryCluster()
    sts = create(
        cluster,
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": "default"},
            "spec": {
                "serviceName": "db",
                "selector": {"matchLabels": {"app": "a"}},
                "template": pod_template(),
            },
        },
    )
    assert sts["spec"]["persistentVolumeClaimRetentionPolicy"] == {
        "whenDeleted": "Retain",
        "whenScaled": "Retain",
    }
    sts["spec"]["replicas"] = 3
    sts = cluster.update(cluster.discover("apps/v1", "statefulsets"), sts)
    sts["spec"]["serviceName"] = "other"
    with pytest.raises(Invalid, match="updates to statefulset spec for fields other than"):
        cluster.update(cluster.discover("apps/v1", "statefulsets"), sts)


def test_a_daemonset_counts_its_template_generations() -> None:
    cluster = MemoryCluster()
    daemonsets = cluster.discover("apps/v1", "daemonsets")
    ds = create(
        cluster,
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": "agent", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": pod_template()},
        },
    )
    annotation = "deprecated.daemonset.template.generation"
    assert ds["metadata"]["annotations"][annotation] == "1"
    assert ds["spec"]["updateStrategy"]["rollingUpdate"] == {"maxUnavailable": 1, "maxSurge": 0}
    ds["spec"]["template"]["spec"]["containers"][0]["image"] = "busybox:1.37"
    assert cluster.update(daemonsets, ds)["metadata"]["annotations"][annotation] == "2"


def test_services_keep_their_allocations_across_updates_that_leave_them_out() -> None:
    cluster = MemoryCluster()
    services = cluster.discover("v1", "services")
    service = create(
        cluster,
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"type": "NodePort", "ports": [{"port": 80}]},
        },
    )
    allocated = (service["spec"]["clusterIP"], service["spec"]["ports"][0]["nodePort"])
    spec: Spec = service["spec"]
    for key in ("clusterIP", "clusterIPs"):
        del spec[key]
    del spec["ports"][0]["nodePort"]
    updated = cluster.update(services, service)
    assert (updated["spec"]["clusterIP"], updated["spec"]["ports"][0]["nodePort"]) == allocated

"""One object under the several versions its release serves, on the real API server and on the
memory backend behaving as the same release: Ingresses under `extensions/v1beta1`,
`networking.k8s.io/v1beta1` and `v1` (1.20), HorizontalPodAutoscalers under `autoscaling/v1`
and v2 (and 1.20's v2beta1 and v2beta2), each version decoded and defaulted as its release
does (a 1.20 `batch/v1beta1` CronJob's unknown field dropped, `1000m` stored as `"1"`), and what
an install writes (RBAC bindings, PriorityClasses, StorageClasses, webhook configurations) under
v1 and, on 1.20, v1beta1, with each version's defaults."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from reconcile.cluster import NotFound
from reconcile.cluster.types import Obj
from tests.support.backends import Backend
from tests.support.controlplane import CURRENT_RELEASE, OLDEST_RELEASE

INGRESS_VERSIONS = ("extensions/v1beta1", "networking.k8s.io/v1beta1", "networking.k8s.io/v1")
V1BETA1_SPEC = {
    "backend": {"serviceName": "default", "servicePort": 80},
    "rules": [
        {
            "host": "x.example.com",
            "http": {
                "paths": [
                    {
                        "path": "/",
                        "pathType": "ImplementationSpecific",  # v1beta1's default
                        "backend": {"serviceName": "web", "servicePort": "http"},
                    },
                    {
                        "path": "/api",
                        "pathType": "Prefix",
                        "backend": {"serviceName": "api", "servicePort": 8080},
                    },
                ]
            },
        }
    ],
}
V1_SPEC = {
    "defaultBackend": {"service": {"name": "default", "port": {"number": 80}}},
    "rules": [
        {
            "host": "x.example.com",
            "http": {
                "paths": [
                    {
                        "path": "/",
                        "pathType": "ImplementationSpecific",
                        "backend": {"service": {"name": "web", "port": {"name": "http"}}},
                    },
                    {
                        "path": "/api",
                        "pathType": "Prefix",
                        "backend": {"service": {"name": "api", "port": {"number": 8080}}},
                    },
                ]
            },
        }
    ],
}
SPEC_BY_VERSION = {
    "extensions/v1beta1": V1BETA1_SPEC,
    "networking.k8s.io/v1beta1": V1BETA1_SPEC,
    "networking.k8s.io/v1": V1_SPEC,
}


def ingress(api_version: str, namespace: str) -> Obj:
    spec: Any = copy.deepcopy(SPEC_BY_VERSION[api_version])
    if api_version != "networking.k8s.io/v1":
        del spec["rules"][0]["http"]["paths"][0]["pathType"]  # left to the default
        spec["bogus"] = True  # dropped
    return {
        "apiVersion": api_version,
        "kind": "Ingress",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": spec,
    }


@pytest.mark.releases(OLDEST_RELEASE, why="1.20 serves Ingresses under three versions")
@pytest.mark.parametrize("written_as", ["extensions/v1beta1", "networking.k8s.io/v1"])
def test_an_ingress_reads_back_under_every_version_its_release_serves(
    backend: Backend, namespace: str, written_as: str
) -> None:
    created = backend.cluster.create(
        backend.cluster.discover(written_as, "ingresses"), ingress(written_as, namespace)
    )
    assert created["spec"] == SPEC_BY_VERSION[written_as]
    uids = set()
    for api_version in INGRESS_VERSIONS:
        read = backend.cluster.get(
            backend.cluster.discover(api_version, "ingresses"), "web", namespace=namespace
        )
        assert (read["apiVersion"], read["spec"]) == (api_version, SPEC_BY_VERSION[api_version])
        assert read["status"] == {"loadBalancer": {}}
        uids.add(read["metadata"]["uid"])
    assert uids == {created["metadata"]["uid"]}


@pytest.mark.releases(OLDEST_RELEASE, why="1.20 serves Ingresses under extensions/v1beta1")
def test_errors_name_the_group_asked_through(backend: Backend, namespace: str) -> None:
    with pytest.raises(NotFound) as missing:
        backend.cluster.get(
            backend.cluster.discover("extensions/v1beta1", "ingresses"), "none", namespace=namespace
        )
    assert missing.value.message == 'ingresses.extensions "none" not found'


@pytest.mark.releases(OLDEST_RELEASE, why="batch/v1beta1 is 1.20's CronJob")
def test_a_v1beta1_cronjob_is_decoded_and_defaulted_as_its_release_does(
    backend: Backend, namespace: str
) -> None:
    container = {"name": "c", "image": "busybox", "resources": {"limits": {"cpu": "1000m"}}}
    cronjob = {
        "apiVersion": "batch/v1beta1",
        "kind": "CronJob",
        "metadata": {"name": "nightly", "namespace": namespace},
        "spec": {
            "schedule": "0 3 * * *",
            "jobTemplate": {
                "spec": {
                    "_ttlSecondsAfterFinished": 100,
                    "template": {"spec": {"restartPolicy": "Never", "containers": [container]}},
                }
            },
        },
    }
    created = backend.cluster.create(backend.cluster.discover("batch/v1beta1", "cronjobs"), cronjob)
    job = created["spec"]["jobTemplate"]["spec"]
    assert "_ttlSecondsAfterFinished" not in job
    assert job["template"]["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "1"}
    assert created["spec"]["concurrencyPolicy"] == "Allow"
    assert "generation" not in created["metadata"]


REF = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}
CPU_80 = {
    "type": "Resource",
    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
}
MEMORY = {
    "type": "Resource",
    "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "100Mi"}},
}
CPU_60 = {
    "type": "Resource",
    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}},
}
QPS = {
    "type": "Pods",
    "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "1k"}},
}
BEHAVIOR = {
    "scaleDown": {
        "policies": [{"periodSeconds": 15, "type": "Percent", "value": 100}],
        "selectPolicy": "Max",
        "stabilizationWindowSeconds": 60,
    },
    "scaleUp": {
        "policies": [
            {"periodSeconds": 15, "type": "Pods", "value": 4},
            {"periodSeconds": 15, "type": "Percent", "value": 100},
        ],
        "selectPolicy": "Max",
        "stabilizationWindowSeconds": 0,
    },
}
V1_ANNOTATIONS = {
    "autoscaling.alpha.kubernetes.io/metrics": json.dumps(
        [
            {"type": "Resource", "resource": {"name": "memory", "targetAverageValue": "100Mi"}},
            {"type": "Pods", "pods": {"metricName": "qps", "targetAverageValue": "1k"}},
        ],
        separators=(",", ":"),
    )
}
V2 = {CURRENT_RELEASE: "autoscaling/v2", OLDEST_RELEASE: "autoscaling/v2beta2"}
# the status each version shows for a new HPA
STATUS = {
    "autoscaling/v1": {"currentReplicas": 0, "desiredReplicas": 0},
    "autoscaling/v2": {"currentMetrics": None, "desiredReplicas": 0},
    "autoscaling/v2beta2": {
        "conditions": None,
        "currentMetrics": None,
        "currentReplicas": 0,
        "desiredReplicas": 0,
    },
}


def hpa(api_version: str, name: str, namespace: str, **spec: Any) -> Obj:
    return {
        "apiVersion": api_version,
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"scaleTargetRef": REF, "maxReplicas": 3, **spec},
    }


def read(backend: Backend, api_version: str, name: str, namespace: str) -> Obj:
    resource = backend.cluster.discover(api_version, "horizontalpodautoscalers")
    return backend.cluster.get(resource, name, namespace=namespace)


@pytest.mark.releases(
    CURRENT_RELEASE,
    OLDEST_RELEASE,
    why="1.20 stores HPAs as autoscaling/v1 beside v2beta1 and v2beta2; 1.37 as v2 beside v1",
)
def test_an_hpa_reads_back_under_every_version_its_release_serves(
    backend: Backend, namespace: str, kube_release: str
) -> None:
    v2 = V2[kube_release]
    client = backend.cluster
    client.create(
        client.discover("autoscaling/v1", "hpa"), hpa("autoscaling/v1", "bare", namespace)
    )
    metrics = [MEMORY, CPU_60, QPS]
    behavior = {"scaleDown": {"stabilizationWindowSeconds": 60}}
    client.create(
        client.discover(v2, "hpa"), hpa(v2, "many", namespace, metrics=metrics, behavior=behavior)
    )

    bare = read(backend, "autoscaling/v1", "bare", namespace)
    assert bare["spec"]["targetCPUUtilizationPercentage"] == 80  # no target: CPU at 80%
    assert bare["status"] == STATUS["autoscaling/v1"]
    bare = read(backend, v2, "bare", namespace)
    assert (bare["spec"]["metrics"], bare["status"]) == ([CPU_80], STATUS[v2])

    many = read(backend, "autoscaling/v1", "many", namespace)
    assert many["spec"]["targetCPUUtilizationPercentage"] == 60
    annotations = many["metadata"]["annotations"]
    assert {k: v for k, v in annotations.items() if k.endswith("/metrics")} == V1_ANNOTATIONS
    behavior_annotation = json.loads(annotations["autoscaling.alpha.kubernetes.io/behavior"])
    assert behavior_annotation["ScaleDown"]["StabilizationWindowSeconds"] == 60
    assert behavior_annotation["ScaleUp"]["Policies"][0] == {
        "Type": "Pods",
        "Value": 4,
        "PeriodSeconds": 15,
    }
    many = read(backend, v2, "many", namespace)
    # stored as v1 (1.20), the CPU target comes back last; stored as v2, where it was written
    expected = [MEMORY, QPS, CPU_60] if kube_release == OLDEST_RELEASE else metrics
    assert (many["spec"]["metrics"], many["spec"]["behavior"]) == (expected, BEHAVIOR)
    assert "annotations" not in many["metadata"]
    if kube_release == OLDEST_RELEASE:
        beta1 = read(backend, "autoscaling/v2beta1", "many", namespace)
        assert beta1["spec"]["metrics"][0] == {
            "type": "Resource",
            "resource": {"name": "memory", "targetAverageValue": "100Mi"},
        }
        assert "autoscaling.alpha.kubernetes.io/behavior" in beta1["metadata"]["annotations"]


# a rule no request matches: the real server is shared with the other tests
WEBHOOK_RULE = {
    "apiGroups": ["nothing.example.com"],
    "apiVersions": ["v1"],
    "operations": ["CREATE"],
    "resources": ["nothings"],
}
# What an install writes (Metacontroller's own, a webhook of a Metacontroller-era operator), as
# each version stores it: (apiVersion, resource, written, what the server adds).
INSTALLED = [
    (
        "rbac.authorization.k8s.io/{v}",
        "clusterrolebindings",
        {
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "x",
            },
            "subjects": [
                {"kind": "ServiceAccount", "name": "metacontroller", "namespace": "metacontroller"},
                {"kind": "User", "name": "admin"},
            ],
        },
        {
            "subjects": [
                {"kind": "ServiceAccount", "name": "metacontroller", "namespace": "metacontroller"},
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "admin"},
            ]
        },
    ),
    (
        "scheduling.k8s.io/{v}",
        "priorityclasses",
        {"value": 1000},
        {"preemptionPolicy": "PreemptLowerPriority"},
    ),
    (
        "storage.k8s.io/{v}",
        "storageclasses",
        {"provisioner": "example.com/disk"},
        {"reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"},
    ),
]
WEBHOOK_DEFAULTS = {
    "v1": {
        "failurePolicy": "Fail",
        "matchPolicy": "Equivalent",
        "namespaceSelector": {},
        "objectSelector": {},
        "timeoutSeconds": 10,
    },
    "v1beta1": {
        "admissionReviewVersions": ["v1beta1"],
        "failurePolicy": "Ignore",
        "matchPolicy": "Exact",
        "namespaceSelector": {},
        "objectSelector": {},
        "sideEffects": "Unknown",
        "timeoutSeconds": 30,
    },
}


def installed(version: str) -> list[Any]:
    """The cases of one version: (apiVersion, resource, written, what the server adds)."""
    cases = [
        pytest.param(api_version.format(v=version), resource, written, added, id=resource)
        for api_version, resource, written, added in INSTALLED
    ]
    webhook: dict[str, Any] = {
        "name": "a.example.com",
        "clientConfig": {"url": "https://x.example.com/"},
    }
    if version == "v1":
        webhook.update(sideEffects="None", admissionReviewVersions=["v1"], rules=[WEBHOOK_RULE])
    stored = {**webhook, **WEBHOOK_DEFAULTS[version]}
    if version == "v1":
        stored["rules"] = [{**WEBHOOK_RULE, "scope": "*"}]
    cases.append(
        pytest.param(
            f"admissionregistration.k8s.io/{version}",
            "validatingwebhookconfigurations",
            {"webhooks": [webhook]},
            {"webhooks": [stored]},
            id="validatingwebhookconfigurations",
        )
    )
    return cases


def stored_with_defaults(
    backend: Backend, namespace: str, api_version: str, resource: str, written: Obj, added: Obj
) -> None:
    info = backend.cluster.discover(api_version, resource)
    name = f"{namespace}-{resource}"
    body = {
        "apiVersion": api_version,
        "kind": info.kind,
        "metadata": {"name": name},
        **copy.deepcopy(written),
    }
    created = backend.cluster.create(info, body)
    try:
        kept = {k: v for k, v in created.items() if k not in ("apiVersion", "kind", "metadata")}
        assert kept == {**written, **added}
        generation = (
            1 if resource in ("priorityclasses", "validatingwebhookconfigurations") else None
        )
        assert created["metadata"].get("generation") == generation
    finally:  # cluster-wide objects of a server the other tests share
        backend.delete_quietly(info, name, None)


@pytest.mark.releases(CURRENT_RELEASE, OLDEST_RELEASE, why="each release's defaults")
@pytest.mark.parametrize(("api_version", "resource", "written", "added"), installed("v1"))
def test_what_an_install_writes_is_stored_with_the_servers_defaults(
    backend: Backend, namespace: str, api_version: str, resource: str, written: Obj, added: Obj
) -> None:
    stored_with_defaults(backend, namespace, api_version, resource, written, added)


@pytest.mark.releases(
    OLDEST_RELEASE, why="1.20 serves these kinds under v1beta1 too, with its defaults"
)
@pytest.mark.parametrize(("api_version", "resource", "written", "added"), installed("v1beta1"))
def test_what_an_install_writes_as_v1beta1_is_stored_with_v1beta1s_defaults(
    backend: Backend, namespace: str, api_version: str, resource: str, written: Obj, added: Obj
) -> None:
    stored_with_defaults(backend, namespace, api_version, resource, written, added)

"""The API versions each release `--local` models serves, for the releases no real control plane
of the suite holds it to (1.20's and 1.37's discovery are compared with real servers in
`tests/contract/test_discovery_contract.py`): each removal of the Kubernetes deprecation guide
in its release, and the 404 for a version removed before the release, naming that release."""

from __future__ import annotations

import pytest

from reconcile.cluster.errors import NotFound
from reconcile.cluster.memory import MemoryCluster

# (release, group version, resource, served)
SERVED = [
    ("1.20", "apiextensions.k8s.io/v1beta1", "customresourcedefinitions", True),
    ("1.20", "extensions/v1beta1", "ingresses", True),
    ("1.20", "rbac.authorization.k8s.io/v1beta1", "clusterroles", True),
    ("1.20", "batch/v1beta1", "cronjobs", True),
    ("1.20", "batch/v1", "cronjobs", False),
    ("1.25", "batch/v1beta1", "cronjobs", False),
    ("1.25", "policy/v1beta1", "poddisruptionbudgets", False),
    ("1.25", "policy/v1beta1", "podsecuritypolicies", False),
    ("1.25", "discovery.k8s.io/v1beta1", "endpointslices", False),
    ("1.25", "events.k8s.io/v1beta1", "events", False),
    ("1.25", "node.k8s.io/v1beta1", "runtimeclasses", False),
    ("1.25", "autoscaling/v2beta1", "horizontalpodautoscalers", False),
    ("1.25", "autoscaling/v2beta2", "horizontalpodautoscalers", True),
    ("1.25", "autoscaling/v1", "horizontalpodautoscalers", True),
    ("1.25", "autoscaling/v2", "horizontalpodautoscalers", True),
    ("1.25", "flowcontrol.apiserver.k8s.io/v1beta1", "flowschemas", True),
    ("1.25", "flowcontrol.apiserver.k8s.io/v1beta2", "flowschemas", True),
    ("1.25", "storage.k8s.io/v1beta1", "csistoragecapacities", True),
    ("1.26", "autoscaling/v2beta2", "horizontalpodautoscalers", False),
    ("1.26", "flowcontrol.apiserver.k8s.io/v1beta1", "flowschemas", False),
    ("1.26", "flowcontrol.apiserver.k8s.io/v1beta3", "prioritylevelconfigurations", True),
    ("1.26", "storage.k8s.io/v1beta1", "csistoragecapacities", True),
    ("1.27", "storage.k8s.io/v1beta1", "csistoragecapacities", False),
    ("1.28", "flowcontrol.apiserver.k8s.io/v1beta2", "flowschemas", True),
    ("1.29", "flowcontrol.apiserver.k8s.io/v1beta2", "flowschemas", False),
    ("1.29", "flowcontrol.apiserver.k8s.io/v1", "flowschemas", True),
    ("1.31", "flowcontrol.apiserver.k8s.io/v1beta3", "flowschemas", True),
    ("1.32", "flowcontrol.apiserver.k8s.io/v1beta3", "flowschemas", False),
]


@pytest.mark.parametrize(("release", "api_version", "resource", "served"), SERVED)
def test_each_release_serves_the_versions_it_served(
    release: str, api_version: str, resource: str, served: bool
) -> None:
    cluster = MemoryCluster(kubernetes_version=release)
    if served:
        assert cluster.discover(api_version, resource).api_version == api_version
    else:
        with pytest.raises(NotFound):
            cluster.discover(api_version, resource)


@pytest.mark.parametrize(
    ("release", "api_version", "resource", "why"),
    [
        (
            "1.37",
            "batch/v1beta1",
            "cronjobs",
            "batch/v1beta1 CronJobs were removed in Kubernetes 1.25",
        ),
        (
            "1.25",
            "batch/v1beta1",
            "CronJob",
            "batch/v1beta1 CronJobs were removed in Kubernetes 1.25",
        ),
        (
            "1.20",
            "extensions/v1beta1",
            "deployments",
            "extensions/v1beta1 Deployments were removed in Kubernetes 1.16",
        ),
        (
            "1.25",
            "extensions/v1beta1",
            "ingresses",
            "extensions/v1beta1 Ingresses were removed in Kubernetes 1.22",
        ),
        (
            "1.30",
            "apiextensions.k8s.io/v1beta1",
            "crd",
            "apiextensions.k8s.io/v1beta1 CustomResourceDefinitions were removed in "
            "Kubernetes 1.22",
        ),
        (
            "1.26",
            "autoscaling/v2beta2",
            "hpa",
            "autoscaling/v2beta2 HorizontalPodAutoscalers were removed in Kubernetes 1.26",
        ),
        (
            "1.33",
            "policy/v1beta1",
            "podsecuritypolicies",
            "policy/v1beta1 PodSecurityPolicies were removed in Kubernetes 1.25",
        ),
        (
            "1.32",
            "flowcontrol.apiserver.k8s.io/v1beta3",
            "flowschemas",
            "flowcontrol.apiserver.k8s.io/v1beta3 FlowSchemas were removed in Kubernetes 1.32",
        ),
    ],
)
def test_a_removed_version_is_a_404_naming_the_release_that_removed_it(
    release: str, api_version: str, resource: str, why: str
) -> None:
    cluster = MemoryCluster(kubernetes_version=release)
    with pytest.raises(NotFound) as missing:
        cluster.discover(api_version, resource)
    assert missing.value.message == (
        f'the server doesn\'t have a resource type "{resource}" in apiVersion "{api_version}": '
        f"{why}"
    )


def test_a_version_never_served_is_a_plain_404() -> None:
    cluster = MemoryCluster(kubernetes_version="1.20")
    with pytest.raises(NotFound) as missing:
        cluster.discover("batch/v2alpha1", "cronjobs")
    assert missing.value.message.endswith('in apiVersion "batch/v2alpha1"')


def test_one_resource_under_two_groups_is_one_set_of_objects() -> None:
    """1.20's ingresses under `extensions` and `networking.k8s.io`: one storage (one
    `storageVersionHash`, as the real server gives it), the same objects and uids."""
    cluster = MemoryCluster(kubernetes_version="1.20")
    old = cluster.discover("extensions/v1beta1", "ingresses")
    new = cluster.discover("networking.k8s.io/v1", "ingresses")
    assert old.storage_hash == new.storage_hash != ""
    created = cluster.create(
        old,
        {
            "apiVersion": "extensions/v1beta1",
            "kind": "Ingress",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"backend": {"serviceName": "web", "servicePort": 80}},
        },
    )
    [listed] = cluster.list(new, namespace="default").items
    assert listed["metadata"]["uid"] == created["metadata"]["uid"]
    assert listed["spec"] == {
        "defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}
    }
    assert [o["apiVersion"] for o in cluster.all_objects() if o["kind"] == "Ingress"] == [
        "networking.k8s.io/v1"
    ]

"""The built-in API versions that are not GA, with the releases that served them (data only):
a release serves each one from `since` until the release before `until`, as the Kubernetes
deprecation guide lists their removals (1.16, 1.22, 1.25, 1.26, 1.27, 1.29, 1.32). Those gone
before 1.20 (the oldest release modelled) are kept for the words of a 404: which release
removed them. Beta versions that arrived after 1.24 are off by default and served by none.

Also here: where one resource is served under two groups (ingresses under `extensions` and
`networking.k8s.io`), and the version each resource is stored as where kube-apiserver's
`storageVersionHash` names one --local does not store it as (1.20 kept many at v1beta1)."""

from __future__ import annotations

import base64
import hashlib

from reconcile.cluster.memory.resources.catalog import resource as _r
from reconcile.cluster.types import ResourceInfo
from reconcile.records import dataclass


@dataclass(frozen=True)
class Beta:
    info: ResourceInfo
    since: int  # the first minor release serving it (0: before any modelled)
    until: int  # the first minor release no longer serving it


BETA: tuple[Beta, ...] = (
    # no longer served from 1.16
    *(
        Beta(_r(api_version, plural, singular, kind, status=True), 0, 16)
        for api_version in ("extensions/v1beta1", "apps/v1beta1", "apps/v1beta2")
        for plural, singular, kind in (
            ("deployments", "deployment", "Deployment"),
            ("replicasets", "replicaset", "ReplicaSet"),
        )
    ),
    *(
        Beta(_r(api_version, "daemonsets", "daemonset", "DaemonSet", status=True), 0, 16)
        for api_version in ("extensions/v1beta1", "apps/v1beta2")
    ),
    *(
        Beta(_r(api_version, "statefulsets", "statefulset", "StatefulSet", status=True), 0, 16)
        for api_version in ("apps/v1beta1", "apps/v1beta2")
    ),
    Beta(_r("extensions/v1beta1", "networkpolicies", "networkpolicy", "NetworkPolicy"), 0, 16),
    Beta(
        _r(
            "extensions/v1beta1",
            "podsecuritypolicies",
            "podsecuritypolicy",
            "PodSecurityPolicy",
            cluster=True,
        ),
        0,
        16,
    ),
    # no longer served from 1.22
    *(
        Beta(
            _r("admissionregistration.k8s.io/v1beta1", plural, plural[:-1], kind, cluster=True),
            9,
            22,
        )
        for plural, kind in (
            ("mutatingwebhookconfigurations", "MutatingWebhookConfiguration"),
            ("validatingwebhookconfigurations", "ValidatingWebhookConfiguration"),
        )
    ),
    Beta(
        _r(
            "apiextensions.k8s.io/v1beta1",
            "customresourcedefinitions",
            "customresourcedefinition",
            "CustomResourceDefinition",
            cluster=True,
            status=True,
            short=("crd", "crds"),
        ),
        7,
        22,
    ),
    Beta(
        _r(
            "apiregistration.k8s.io/v1beta1",
            "apiservices",
            "apiservice",
            "APIService",
            cluster=True,
            status=True,
        ),
        7,
        22,
    ),
    Beta(
        _r(
            "certificates.k8s.io/v1beta1",
            "certificatesigningrequests",
            "certificatesigningrequest",
            "CertificateSigningRequest",
            cluster=True,
            status=True,
            short=("csr",),
        ),
        6,
        22,
    ),
    Beta(_r("coordination.k8s.io/v1beta1", "leases", "lease", "Lease"), 12, 22),
    *(
        Beta(
            _r(api_version, "ingresses", "ingress", "Ingress", status=True, short=("ing",)),
            since,
            22,
        )
        for api_version, since in (("extensions/v1beta1", 0), ("networking.k8s.io/v1beta1", 14))
    ),
    Beta(
        _r(
            "networking.k8s.io/v1beta1",
            "ingressclasses",
            "ingressclass",
            "IngressClass",
            cluster=True,
        ),
        18,
        22,
    ),
    *(
        Beta(
            _r("rbac.authorization.k8s.io/v1beta1", plural, plural[:-1], kind, cluster=cluster),
            6,
            22,
        )
        for plural, kind, cluster in (
            ("roles", "Role", False),
            ("rolebindings", "RoleBinding", False),
            ("clusterroles", "ClusterRole", True),
            ("clusterrolebindings", "ClusterRoleBinding", True),
        )
    ),
    Beta(
        _r(
            "scheduling.k8s.io/v1beta1",
            "priorityclasses",
            "priorityclass",
            "PriorityClass",
            cluster=True,
            short=("pc",),
        ),
        11,
        22,
    ),
    *(
        Beta(
            _r("storage.k8s.io/v1beta1", plural, kind.lower(), kind, cluster=True, short=short),
            6,
            22,
        )
        for plural, kind, short in (
            ("csidrivers", "CSIDriver", ()),
            ("csinodes", "CSINode", ()),
            ("storageclasses", "StorageClass", ("sc",)),
            ("volumeattachments", "VolumeAttachment", ()),
        )
    ),
    # no longer served from 1.25
    Beta(_r("batch/v1beta1", "cronjobs", "cronjob", "CronJob", status=True, short=("cj",)), 8, 25),
    Beta(
        _r("discovery.k8s.io/v1beta1", "endpointslices", "endpointslice", "EndpointSlice"), 17, 25
    ),
    Beta(_r("events.k8s.io/v1beta1", "events", "event", "Event", short=("ev",)), 8, 25),
    Beta(
        _r(
            "autoscaling/v2beta1",
            "horizontalpodautoscalers",
            "horizontalpodautoscaler",
            "HorizontalPodAutoscaler",
            status=True,
            short=("hpa",),
        ),
        8,
        25,
    ),
    Beta(
        _r(
            "policy/v1beta1",
            "poddisruptionbudgets",
            "poddisruptionbudget",
            "PodDisruptionBudget",
            status=True,
            short=("pdb",),
        ),
        5,
        25,
    ),
    Beta(
        _r(
            "policy/v1beta1",
            "podsecuritypolicies",
            "podsecuritypolicy",
            "PodSecurityPolicy",
            cluster=True,
            short=("psp",),
        ),
        10,
        25,
    ),
    Beta(
        _r("node.k8s.io/v1beta1", "runtimeclasses", "runtimeclass", "RuntimeClass", cluster=True),
        14,
        25,
    ),
    # no longer served from 1.26
    Beta(
        _r(
            "autoscaling/v2beta2",
            "horizontalpodautoscalers",
            "horizontalpodautoscaler",
            "HorizontalPodAutoscaler",
            status=True,
            short=("hpa",),
        ),
        12,
        26,
    ),
    *(
        Beta(_r(api_version, plural, plural[:-1], kind, cluster=True, status=True), since, until)
        for api_version, since, until in (
            ("flowcontrol.apiserver.k8s.io/v1beta1", 20, 26),
            ("flowcontrol.apiserver.k8s.io/v1beta2", 23, 29),
            ("flowcontrol.apiserver.k8s.io/v1beta3", 26, 32),
        )
        for plural, kind in (
            ("flowschemas", "FlowSchema"),
            ("prioritylevelconfigurations", "PriorityLevelConfiguration"),
        )
    ),
    # no longer served from 1.27
    Beta(
        _r(
            "storage.k8s.io/v1beta1",
            "csistoragecapacities",
            "csistoragecapacity",
            "CSIStorageCapacity",
        ),
        21,
        27,
    ),
)

# A resource served under a second group: that group's group/resource -> the one it is stored as.
ALIASES: dict[str, str] = {"ingresses.extensions": "ingresses.networking.k8s.io"}

# The version kube-apiserver stores a resource as, by release, where it is not the one --local
# stores it as (the group's GA version, else its newest beta): its `storageVersionHash` is
# that version's (`storage_version_hash`). Core events back events.k8s.io's Events.
STORED_AS: dict[int, dict[str, tuple[str, str]]] = {
    20: {
        "apiservices.apiregistration.k8s.io": ("apiregistration.k8s.io/v1beta1", "APIService"),
        "events.events.k8s.io": ("v1", "Event"),
        "certificatesigningrequests.certificates.k8s.io": (
            "certificates.k8s.io/v1beta1",
            "CertificateSigningRequest",
        ),
        "ingressclasses.networking.k8s.io": ("networking.k8s.io/v1beta1", "IngressClass"),
        "ingresses.networking.k8s.io": ("networking.k8s.io/v1beta1", "Ingress"),
        "csidrivers.storage.k8s.io": ("storage.k8s.io/v1beta1", "CSIDriver"),
        "mutatingwebhookconfigurations.admissionregistration.k8s.io": (
            "admissionregistration.k8s.io/v1beta1",
            "MutatingWebhookConfiguration",
        ),
        "validatingwebhookconfigurations.admissionregistration.k8s.io": (
            "admissionregistration.k8s.io/v1beta1",
            "ValidatingWebhookConfiguration",
        ),
        "customresourcedefinitions.apiextensions.k8s.io": (
            "apiextensions.k8s.io/v1beta1",
            "CustomResourceDefinition",
        ),
        "leases.coordination.k8s.io": ("coordination.k8s.io/v1beta1", "Lease"),
        "runtimeclasses.node.k8s.io": ("node.k8s.io/v1beta1", "RuntimeClass"),
    },
    37: {
        "events.events.k8s.io": ("v1", "Event"),
        "clustertrustbundles.certificates.k8s.io": (
            "certificates.k8s.io/v1beta1",
            "ClusterTrustBundle",
        ),
        "podcertificaterequests.certificates.k8s.io": (
            "certificates.k8s.io/v1beta1",
            "PodCertificateRequest",
        ),
        "customresourcedefinitions.apiextensions.k8s.io": (
            "apiextensions.k8s.io/v1beta1",
            "CustomResourceDefinition",
        ),
        "devicetaintrules.resource.k8s.io": ("resource.k8s.io/v1beta2", "DeviceTaintRule"),
        "storageversionmigrations.storagemigration.k8s.io": (
            "storagemigration.k8s.io/v1beta1",
            "StorageVersionMigration",
        ),
    },
}


def storage_version_hash(api_version: str, kind: str) -> str:
    """kube-apiserver's `storageVersionHash` of objects stored as `api_version` `kind`."""
    group, _, version = api_version.rpartition("/")
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


def served_betas(minor: int) -> list[ResourceInfo]:
    return [beta.info for beta in BETA if beta.since <= minor < beta.until]


def removal(minor: int, api_version: str, resource: str) -> str:
    """Why release 1.`minor` serves no `resource` (a plural, singular, short name or kind) in
    `api_version`, when a release before it removed it: `batch/v1beta1 CronJobs were removed in
    Kubernetes 1.25`; else ""."""
    lowered = resource.lower()
    for beta in BETA:
        info = beta.info
        names = (info.resource, info.singular, info.kind.lower(), *info.short_names)
        if info.api_version == api_version and lowered in names and beta.until <= minor:
            return f"{api_version} {plural_of(info.kind)} were removed in Kubernetes 1.{beta.until}"
    return ""


def plural_of(kind: str) -> str:
    """`CronJobs`, `Ingresses`, `NetworkPolicies`, as English writes a kind's plural."""
    if kind.endswith(("s", "sh", "ch", "x")):
        return kind + "es"
    if kind.endswith("y") and kind[-2:-1].lower() not in "aeiou":
        return kind[:-1] + "ies"
    return kind + "s"

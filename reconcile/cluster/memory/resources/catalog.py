"""The built-in resources the in-process cluster can serve (data only), plus the per-resource
facts the server hard-codes for them. Which of them a release serves is `releases`' business:
each release serves the GA versions of `STABLE_RESOURCES` its OpenAPI schemas define, and the
beta versions `served` lists for it. Not served: resources no object is stored as (reviews,
bindings, component statuses)."""

from __future__ import annotations

from reconcile.cluster.types import ResourceInfo

STANDARD_VERBS = frozenset(
    {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
)


def _r(
    api_version: str,
    plural: str,
    singular: str,
    kind: str,
    *,
    cluster: bool = False,
    status: bool = False,
    short: tuple[str, ...] = (),
) -> ResourceInfo:
    group, _, version = api_version.rpartition("/")
    return ResourceInfo(
        group=group,
        version=version,
        resource=plural,
        kind=kind,
        namespaced=not cluster,
        has_status=status,
        verbs=STANDARD_VERBS,
        short_names=short,
        singular=singular,
    )


resource = _r  # for the other tables of built-in resources


_WORKLOADS_AND_MORE: tuple[ResourceInfo, ...] = (
    # core/v1
    ResourceInfo(
        group="",
        version="v1",
        resource="namespaces",
        kind="Namespace",
        namespaced=False,
        has_status=True,
        verbs=STANDARD_VERBS - {"deletecollection"},
        short_names=("ns",),
        singular="namespace",
    ),
    _r("v1", "pods", "pod", "Pod", status=True, short=("po",)),
    _r("v1", "services", "service", "Service", status=True, short=("svc",)),
    _r("v1", "configmaps", "configmap", "ConfigMap", short=("cm",)),
    _r("v1", "secrets", "secret", "Secret"),
    _r("v1", "serviceaccounts", "serviceaccount", "ServiceAccount", short=("sa",)),
    _r(
        "v1",
        "persistentvolumeclaims",
        "persistentvolumeclaim",
        "PersistentVolumeClaim",
        status=True,
        short=("pvc",),
    ),
    _r(
        "v1",
        "persistentvolumes",
        "persistentvolume",
        "PersistentVolume",
        cluster=True,
        status=True,
        short=("pv",),
    ),
    _r("v1", "events", "event", "Event", short=("ev",)),
    _r("v1", "nodes", "node", "Node", cluster=True, status=True, short=("no",)),
    _r("v1", "endpoints", "endpoints", "Endpoints", short=("ep",)),
    _r("v1", "limitranges", "limitrange", "LimitRange", short=("limits",)),
    _r("v1", "resourcequotas", "resourcequota", "ResourceQuota", status=True, short=("quota",)),
    _r(
        "v1",
        "replicationcontrollers",
        "replicationcontroller",
        "ReplicationController",
        status=True,
        short=("rc",),
    ),
    # apps/v1
    _r("apps/v1", "deployments", "deployment", "Deployment", status=True, short=("deploy",)),
    _r("apps/v1", "statefulsets", "statefulset", "StatefulSet", status=True, short=("sts",)),
    _r("apps/v1", "replicasets", "replicaset", "ReplicaSet", status=True, short=("rs",)),
    _r("apps/v1", "daemonsets", "daemonset", "DaemonSet", status=True, short=("ds",)),
    _r("apps/v1", "controllerrevisions", "controllerrevision", "ControllerRevision"),
    # batch
    _r("batch/v1", "jobs", "job", "Job", status=True),
    # rbac.authorization.k8s.io/v1
    _r("rbac.authorization.k8s.io/v1", "roles", "role", "Role"),
    _r("rbac.authorization.k8s.io/v1", "rolebindings", "rolebinding", "RoleBinding"),
    _r("rbac.authorization.k8s.io/v1", "clusterroles", "clusterrole", "ClusterRole", cluster=True),
    _r(
        "rbac.authorization.k8s.io/v1",
        "clusterrolebindings",
        "clusterrolebinding",
        "ClusterRoleBinding",
        cluster=True,
    ),
    # coordination, events, policy, networking
    _r("coordination.k8s.io/v1", "leases", "lease", "Lease"),
    _r("events.k8s.io/v1", "events", "event", "Event", short=("ev",)),
    _r("networking.k8s.io/v1", "ingresses", "ingress", "Ingress", status=True, short=("ing",)),
    _r(
        "networking.k8s.io/v1",
        "networkpolicies",
        "networkpolicy",
        "NetworkPolicy",
        short=("netpol",),
    ),
    # apiextensions.k8s.io/v1
    _r(
        "apiextensions.k8s.io/v1",
        "customresourcedefinitions",
        "customresourcedefinition",
        "CustomResourceDefinition",
        cluster=True,
        status=True,
        short=("crd", "crds"),
    ),
)

# Stable (GA) versions of persisted built-in resources, newest releases included: a release serves
# each one its OpenAPI schemas define.
STABLE_RESOURCES: tuple[ResourceInfo, ...] = (
    *_WORKLOADS_AND_MORE,
    _r("v1", "podtemplates", "podtemplate", "PodTemplate"),
    _r(
        "autoscaling/v1",
        "horizontalpodautoscalers",
        "horizontalpodautoscaler",
        "HorizontalPodAutoscaler",
        status=True,
        short=("hpa",),
    ),
    _r(
        "certificates.k8s.io/v1",
        "podcertificaterequests",
        "podcertificaterequest",
        "PodCertificateRequest",
        status=True,
    ),
    _r(
        "resource.k8s.io/v1",
        "devicetaintrules",
        "devicetaintrule",
        "DeviceTaintRule",
        cluster=True,
        status=True,
    ),
    _r("batch/v1", "cronjobs", "cronjob", "CronJob", status=True, short=("cj",)),
    _r(
        "policy/v1",
        "poddisruptionbudgets",
        "poddisruptionbudget",
        "PodDisruptionBudget",
        status=True,
        short=("pdb",),
    ),
    _r(
        "autoscaling/v2",
        "horizontalpodautoscalers",
        "horizontalpodautoscaler",
        "HorizontalPodAutoscaler",
        status=True,
        short=("hpa",),
    ),
    _r("discovery.k8s.io/v1", "endpointslices", "endpointslice", "EndpointSlice"),
    _r("networking.k8s.io/v1", "ingressclasses", "ingressclass", "IngressClass", cluster=True),
    _r(
        "networking.k8s.io/v1", "ipaddresses", "ipaddress", "IPAddress", cluster=True, short=("ip",)
    ),
    _r(
        "networking.k8s.io/v1",
        "servicecidrs",
        "servicecidr",
        "ServiceCIDR",
        cluster=True,
        status=True,
    ),
    _r("node.k8s.io/v1", "runtimeclasses", "runtimeclass", "RuntimeClass", cluster=True),
    _r(
        "scheduling.k8s.io/v1",
        "priorityclasses",
        "priorityclass",
        "PriorityClass",
        cluster=True,
        short=("pc",),
    ),
    _r(
        "storage.k8s.io/v1",
        "storageclasses",
        "storageclass",
        "StorageClass",
        cluster=True,
        short=("sc",),
    ),
    _r("storage.k8s.io/v1", "csidrivers", "csidriver", "CSIDriver", cluster=True),
    _r("storage.k8s.io/v1", "csinodes", "csinode", "CSINode", cluster=True),
    _r("storage.k8s.io/v1", "csistoragecapacities", "csistoragecapacity", "CSIStorageCapacity"),
    _r(
        "storage.k8s.io/v1",
        "volumeattachments",
        "volumeattachment",
        "VolumeAttachment",
        cluster=True,
        status=True,
    ),
    _r(
        "storage.k8s.io/v1",
        "volumeattributesclasses",
        "volumeattributesclass",
        "VolumeAttributesClass",
        cluster=True,
        short=("vac",),
    ),
    _r(
        "certificates.k8s.io/v1",
        "certificatesigningrequests",
        "certificatesigningrequest",
        "CertificateSigningRequest",
        cluster=True,
        status=True,
        short=("csr",),
    ),
    _r(
        "certificates.k8s.io/v1",
        "clustertrustbundles",
        "clustertrustbundle",
        "ClusterTrustBundle",
        cluster=True,
    ),
    _r(
        "admissionregistration.k8s.io/v1",
        "mutatingwebhookconfigurations",
        "mutatingwebhookconfiguration",
        "MutatingWebhookConfiguration",
        cluster=True,
    ),
    _r(
        "admissionregistration.k8s.io/v1",
        "validatingwebhookconfigurations",
        "validatingwebhookconfiguration",
        "ValidatingWebhookConfiguration",
        cluster=True,
    ),
    _r(
        "admissionregistration.k8s.io/v1",
        "validatingadmissionpolicies",
        "validatingadmissionpolicy",
        "ValidatingAdmissionPolicy",
        cluster=True,
        status=True,
    ),
    _r(
        "admissionregistration.k8s.io/v1",
        "validatingadmissionpolicybindings",
        "validatingadmissionpolicybinding",
        "ValidatingAdmissionPolicyBinding",
        cluster=True,
    ),
    _r(
        "admissionregistration.k8s.io/v1",
        "mutatingadmissionpolicies",
        "mutatingadmissionpolicy",
        "MutatingAdmissionPolicy",
        cluster=True,
    ),
    _r(
        "admissionregistration.k8s.io/v1",
        "mutatingadmissionpolicybindings",
        "mutatingadmissionpolicybinding",
        "MutatingAdmissionPolicyBinding",
        cluster=True,
    ),
    _r(
        "flowcontrol.apiserver.k8s.io/v1",
        "flowschemas",
        "flowschema",
        "FlowSchema",
        cluster=True,
        status=True,
    ),
    _r(
        "flowcontrol.apiserver.k8s.io/v1",
        "prioritylevelconfigurations",
        "prioritylevelconfiguration",
        "PriorityLevelConfiguration",
        cluster=True,
        status=True,
    ),
    _r(
        "apiregistration.k8s.io/v1",
        "apiservices",
        "apiservice",
        "APIService",
        cluster=True,
        status=True,
    ),
    _r("resource.k8s.io/v1", "deviceclasses", "deviceclass", "DeviceClass", cluster=True),
    _r("resource.k8s.io/v1", "resourceclaims", "resourceclaim", "ResourceClaim", status=True),
    _r(
        "resource.k8s.io/v1",
        "resourceclaimtemplates",
        "resourceclaimtemplate",
        "ResourceClaimTemplate",
    ),
    _r("resource.k8s.io/v1", "resourceslices", "resourceslice", "ResourceSlice", cluster=True),
    _r(
        "storagemigration.k8s.io/v1",
        "storageversionmigrations",
        "storageversionmigration",
        "StorageVersionMigration",
        cluster=True,
        status=True,
    ),
)

NAMESPACES = "namespaces"
CRDS = "customresourcedefinitions.apiextensions.k8s.io"
PODS = "pods"
DEPLOYMENTS = "deployments.apps"

BUILTIN_NAMESPACES: tuple[str, ...] = ("default", "kube-system", "kube-public", "kube-node-lease")

# The NamespaceLifecycle admission plugin refuses to delete these.
UNDELETABLE_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})

# Built-in resources whose strategies set metadata.generation (1 on create, +1 on spec changes);
# the others leave it unset. Custom resources always track it.
GENERATION_GROUPS = frozenset({"apps", "batch"})
# Resources that set it only from a release on (1.20's Jobs and CronJobs have none; Pods have one
# from 1.33, KEP 5067).
GENERATION_SINCE = {"jobs.batch": 21, "cronjobs.batch": 21, "pods": 33}
NO_GENERATION_RESOURCES = frozenset({"controllerrevisions.apps"})
GENERATION_RESOURCES = frozenset(
    {
        "replicationcontrollers",
        "poddisruptionbudgets.policy",
        "ingresses.networking.k8s.io",
        "networkpolicies.networking.k8s.io",
        "mutatingwebhookconfigurations.admissionregistration.k8s.io",
        "validatingwebhookconfigurations.admissionregistration.k8s.io",
        "validatingadmissionpolicies.admissionregistration.k8s.io",
        "priorityclasses.scheduling.k8s.io",
        CRDS,
    }
)

"""The built-in resources the in-process cluster serves (data only), as kube-apiserver 1.20
lists them in discovery, plus the per-resource facts the server hard-codes for them."""

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


BUILTIN_RESOURCES: tuple[ResourceInfo, ...] = (
    # core/v1
    _r("v1", "namespaces", "namespace", "Namespace", cluster=True, status=True, short=("ns",)),
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
    _r("batch/v1beta1", "cronjobs", "cronjob", "CronJob", status=True, short=("cj",)),
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
    _r(
        "policy/v1beta1",
        "poddisruptionbudgets",
        "poddisruptionbudget",
        "PodDisruptionBudget",
        status=True,
        short=("pdb",),
    ),
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
NO_GENERATION_RESOURCES = frozenset({"controllerrevisions.apps"})
GENERATION_RESOURCES = frozenset(
    {
        "replicationcontrollers",
        "poddisruptionbudgets.policy",
        "ingresses.networking.k8s.io",
        "networkpolicies.networking.k8s.io",
        CRDS,
    }
)

# How each resource's names are validated (anything not listed: a DNS-1123 subdomain).
DNS1123_LABEL_NAMES = frozenset({NAMESPACES})
DNS1035_LABEL_NAMES = frozenset({"services"})
PATH_SEGMENT_NAMES = frozenset(
    {
        "roles.rbac.authorization.k8s.io",
        "rolebindings.rbac.authorization.k8s.io",
        "clusterroles.rbac.authorization.k8s.io",
        "clusterrolebindings.rbac.authorization.k8s.io",
    }
)

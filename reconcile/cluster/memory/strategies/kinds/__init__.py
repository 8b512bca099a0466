"""The built-in kinds the in-process API server knows beyond their schemas, one module per kind
family, one table keyed by group/resource. A kind not in the table is decoded and validated by
its schema only. Not modelled: defaults of fields behind a feature gate off by default, HPA
`behavior`, and the statuses controllers write later (there is no kubelet, scheduler or
workload controller)."""

from __future__ import annotations

from reconcile.cluster.memory.strategies.kinds import (
    access,
    batch,
    config,
    namespaces,
    pods,
    policy,
    services,
    storage,
    workloads,
)
from reconcile.cluster.memory.strategies.kinds.base import NO_RULES, Context, Errors, KindRules

RULES: dict[str, KindRules] = {
    "pods": pods.PODS,
    "podtemplates": pods.PODTEMPLATES,
    "deployments.apps": workloads.DEPLOYMENTS,
    "statefulsets.apps": workloads.STATEFULSETS,
    "daemonsets.apps": workloads.DAEMONSETS,
    "replicasets.apps": workloads.REPLICASETS,
    "replicationcontrollers": workloads.REPLICATIONCONTROLLERS,
    "jobs.batch": batch.JOBS,
    "cronjobs.batch": batch.CRONJOBS,
    "services": services.SERVICES,
    "ingresses.networking.k8s.io": services.INGRESSES,
    "persistentvolumeclaims": storage.PERSISTENTVOLUMECLAIMS,
    "persistentvolumes": storage.PERSISTENTVOLUMES,
    "configmaps": config.CONFIGMAPS,
    "secrets": config.SECRETS,
    "horizontalpodautoscalers.autoscaling": policy.HORIZONTALPODAUTOSCALERS,
    "networkpolicies.networking.k8s.io": policy.NETWORKPOLICIES,
    "poddisruptionbudgets.policy": policy.PODDISRUPTIONBUDGETS,
    "namespaces": namespaces.NAMESPACES,
    "rolebindings.rbac.authorization.k8s.io": access.BINDINGS,
    "clusterrolebindings.rbac.authorization.k8s.io": access.BINDINGS,
    "priorityclasses.scheduling.k8s.io": access.PRIORITY_CLASSES,
    "storageclasses.storage.k8s.io": access.STORAGE_CLASSES,
    "mutatingwebhookconfigurations.admissionregistration.k8s.io": access.MUTATING_WEBHOOKS,
    "validatingwebhookconfigurations.admissionregistration.k8s.io": access.VALIDATING_WEBHOOKS,
}


def rules_for(group_resource: str) -> KindRules:
    return RULES.get(group_resource, NO_RULES)


__all__ = ["RULES", "Context", "Errors", "KindRules", "rules_for"]

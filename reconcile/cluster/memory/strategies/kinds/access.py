"""RBAC bindings, PriorityClasses, StorageClasses and admission webhook configurations: what
their defaulting gives them (what a Metacontroller install writes).

Defaults: a binding's subjects of kind User or Group `apiGroup: rbac.authorization.k8s.io`; a
PriorityClass's `preemptionPolicy: PreemptLowerPriority`; a StorageClass's `reclaimPolicy:
Delete` and `volumeBindingMode: Immediate`; a webhook's `failurePolicy: Fail`, `matchPolicy:
Equivalent`, empty namespace and object selectors, `timeoutSeconds: 10`, its rules' `scope: *`,
a service's `port: 443`, a mutating webhook's `reinvocationPolicy: Never`. Through
admissionregistration.k8s.io/v1beta1 (1.20) a webhook's defaults are v1beta1's first:
`failurePolicy: Ignore`, `matchPolicy: Exact`, `sideEffects: Unknown`, `timeoutSeconds: 30`,
`admissionReviewVersions: [v1beta1]` (`webhook_version_defaults`)."""

from __future__ import annotations

from reconcile.cluster.memory.strategies.kinds.base import Context, KindRules, as_dict, items
from reconcile.objects.meta import Obj

RBAC_GROUP = "rbac.authorization.k8s.io"


def _binding(obj: Obj, _: Context) -> None:
    for subject in items(obj, "subjects"):
        if subject.get("kind") in ("User", "Group"):
            subject.setdefault("apiGroup", RBAC_GROUP)


def _priority_class(obj: Obj, _: Context) -> None:
    obj.setdefault("preemptionPolicy", "PreemptLowerPriority")


def _storage_class(obj: Obj, _: Context) -> None:
    obj.setdefault("reclaimPolicy", "Delete")
    obj.setdefault("volumeBindingMode", "Immediate")


def _webhooks(mutating: bool) -> KindRules:
    def default(obj: Obj, _: Context) -> None:
        for webhook in items(obj, "webhooks"):
            webhook.setdefault("failurePolicy", "Fail")
            webhook.setdefault("matchPolicy", "Equivalent")
            webhook.setdefault("namespaceSelector", {})
            webhook.setdefault("objectSelector", {})
            webhook.setdefault("timeoutSeconds", 10)
            if mutating:
                webhook.setdefault("reinvocationPolicy", "Never")
            for rule in items(webhook, "rules"):
                rule.setdefault("scope", "*")
            service = as_dict(webhook.get("clientConfig")).get("service")
            if isinstance(service, dict):
                service.setdefault("port", 443)

    return KindRules(default=default)


BINDINGS = KindRules(default=_binding)
PRIORITY_CLASSES = KindRules(default=_priority_class)
STORAGE_CLASSES = KindRules(default=_storage_class)
MUTATING_WEBHOOKS = _webhooks(mutating=True)
VALIDATING_WEBHOOKS = _webhooks(mutating=False)

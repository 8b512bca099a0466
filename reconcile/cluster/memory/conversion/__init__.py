"""One object between the versions a release serves of its resource, as kube-apiserver
converts it: most versions differ in name only; Ingresses (`ingresses`), CRDs
(`crds`), HorizontalPodAutoscalers (`hpas`) and PriorityLevelConfigurations
(v1beta3 renamed `assuredConcurrencyShares` to `nominalConcurrencyShares`) are converted field by
field. Also each version's own defaults, given before an object is converted to the version it
is stored as."""

from __future__ import annotations

from typing import Any

from reconcile.cluster.memory.conversion import crds, hpas, ingresses
from reconcile.cluster.memory.resources.catalog import CRDS
from reconcile.objects.jsondata import normalized_copy
from reconcile.objects.meta import Obj

HPAS = "horizontalpodautoscalers.autoscaling"
_INGRESSES = ("ingresses.networking.k8s.io", "ingresses.extensions")
_PRIORITY_LEVELS = "prioritylevelconfigurations.flowcontrol.apiserver.k8s.io"
_CSRS = "certificatesigningrequests.certificates.k8s.io"
_WEBHOOKS = (
    "mutatingwebhookconfigurations.admissionregistration.k8s.io",
    "validatingwebhookconfigurations.admissionregistration.k8s.io",
)
_NOMINAL_SHARES_FROM = ("v1beta3", "v1")


def _version(api_version: Any) -> str:
    return str(api_version or "").rpartition("/")[2]


def version_defaults(group_resource: str, obj: Obj) -> None:
    """The defaults of the version `obj` is written in (its `apiVersion`), in place, where they
    are not the stored version's."""
    version = _version(obj.get("apiVersion"))
    if group_resource in _INGRESSES and version == "v1beta1":
        ingresses.version_defaults(obj)
    elif group_resource == CRDS and version == "v1beta1":
        crds.version_defaults(obj)
    elif group_resource == HPAS:
        hpas.version_defaults(obj)
    elif group_resource in _WEBHOOKS and version == "v1beta1":
        _webhook_version_defaults(obj)
    elif group_resource == _CSRS and version == "v1beta1" and isinstance(obj.get("spec"), dict):
        # v1beta1 picks a kubelet's signer from the request's subject; others are legacy
        obj["spec"].setdefault("usages", ["digital signature", "key encipherment"])
        obj["spec"].setdefault("signerName", "kubernetes.io/legacy-unknown")


def convert(obj: Obj, api_version: str, group_resource: str, minor: int) -> Obj:
    """`obj` (not changed) as `api_version` shows it."""
    if group_resource == HPAS:  # its printing differs by version, even without a conversion
        return hpas.from_hub(hpas.to_hub(obj), api_version, minor)
    source, target = _version(obj.get("apiVersion")), _version(api_version)
    if obj.get("apiVersion") == api_version:
        return obj
    if source == target:  # extensions/v1beta1 and networking.k8s.io/v1beta1 Ingresses
        out = {**obj}
    elif group_resource in _INGRESSES:
        v1 = obj if source == "v1" else ingresses.to_v1(obj)
        out = v1 if target == "v1" else ingresses.to_v1beta1(v1)
    elif group_resource == CRDS:
        out = crds.to_v1(obj) if target == "v1" else crds.to_v1beta1(obj)
    elif group_resource == _PRIORITY_LEVELS:
        out = _priority_level(obj, target in _NOMINAL_SHARES_FROM)
    else:
        out = {**obj}
    out["apiVersion"] = api_version
    return out


def _priority_level(obj: Obj, nominal: bool) -> Obj:
    out: Obj = normalized_copy(obj)
    limited = (out.get("spec") or {}).get("limited")
    if isinstance(limited, dict):
        old, new = (
            ("assuredConcurrencyShares", "nominalConcurrencyShares")
            if nominal
            else ("nominalConcurrencyShares", "assuredConcurrencyShares")
        )
        if old in limited:
            limited[new] = limited.pop(old)
    return out


def _webhook_version_defaults(obj: Obj) -> None:
    """admissionregistration.k8s.io/v1beta1's own defaults, before the v1 ones."""
    for webhook in _items(obj, "webhooks"):
        webhook.setdefault("failurePolicy", "Ignore")
        webhook.setdefault("matchPolicy", "Exact")
        webhook.setdefault("sideEffects", "Unknown")
        webhook.setdefault("timeoutSeconds", 30)
        webhook.setdefault("admissionReviewVersions", ["v1beta1"])


def _items(obj: Obj, key: str) -> list[Obj]:
    value = obj.get(key)
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []

"""HorizontalPodAutoscalers, NetworkPolicies and PodDisruptionBudgets.

Defaults: an HPA's `minReplicas: 1` and its CPU target at 80% (v2 `metrics`, v1
`targetCPUUtilizationPercentage` unless its annotations name other targets), v2's scaling rules
where `behavior` is given; a NetworkPolicy's
`policyTypes: [Ingress]` (and `Egress` with egress rules). Initial statuses of HPAs and PDBs
(all counts 0; v2 leaves out a zero `currentReplicas`)."""

from __future__ import annotations

from reconcile.cluster.memory.conversion.hpas import METRICS, default_behavior
from reconcile.cluster.memory.strategies.kinds.base import Context, KindRules, as_dict, child
from reconcile.objects.meta import Obj


def _hpa(obj: Obj, _: Context) -> None:
    spec = child(obj, "spec")
    spec.setdefault("minReplicas", 1)
    if obj.get("apiVersion") == "autoscaling/v2":
        default_behavior(spec)
    if obj.get("apiVersion") == "autoscaling/v2" and not spec.get("metrics"):
        spec["metrics"] = [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 80},
                },
            }
        ]
    elif obj.get("apiVersion") == "autoscaling/v1":
        annotations = as_dict(as_dict(obj.get("metadata")).get("annotations"))
        if METRICS not in annotations:  # targets beyond CPU, in v2's words
            spec.setdefault("targetCPUUtilizationPercentage", 80)


def _hpa_status(obj: Obj, _: int) -> Obj:
    # v2 leaves out a zero `currentReplicas`; v1 writes it
    if obj.get("apiVersion") == "autoscaling/v1":
        return {"currentReplicas": 0, "desiredReplicas": 0}
    return {"desiredReplicas": 0}


def _network_policy(obj: Obj, _: Context) -> None:
    spec = child(obj, "spec")
    if "policyTypes" not in spec:
        spec["policyTypes"] = ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]


HORIZONTALPODAUTOSCALERS = KindRules(default=_hpa, initial_status=_hpa_status)
NETWORKPOLICIES = KindRules(default=_network_policy)
PODDISRUPTIONBUDGETS = KindRules(
    initial_status=lambda _, __: {
        "currentHealthy": 0,
        "desiredHealthy": 0,
        "disruptionsAllowed": 0,
        "expectedPods": 0,
    }
)

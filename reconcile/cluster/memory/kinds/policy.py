"""HorizontalPodAutoscalers, NetworkPolicies and PodDisruptionBudgets.

Defaults: an HPA's `minReplicas: 1` and its CPU target at 80% (v2 `metrics`, v1
`targetCPUUtilizationPercentage`); a NetworkPolicy's `policyTypes: [Ingress]` (and `Egress`
with egress rules). Initial statuses of HPAs and PDBs (all counts 0)."""

from __future__ import annotations

from reconcile.cluster.memory.kinds.base import Context, KindRules, child
from reconcile.objects.meta import Obj


def _hpa(obj: Obj, _: Context) -> None:
    spec = child(obj, "spec")
    spec.setdefault("minReplicas", 1)
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
        spec.setdefault("targetCPUUtilizationPercentage", 80)


def _network_policy(obj: Obj, _: Context) -> None:
    spec = child(obj, "spec")
    if "policyTypes" not in spec:
        spec["policyTypes"] = ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]


HORIZONTALPODAUTOSCALERS = KindRules(
    default=_hpa, initial_status=lambda _, __: {"currentReplicas": 0, "desiredReplicas": 0}
)
NETWORKPOLICIES = KindRules(default=_network_policy)
PODDISRUPTIONBUDGETS = KindRules(
    initial_status=lambda _, __: {
        "currentHealthy": 0,
        "desiredHealthy": 0,
        "disruptionsAllowed": 0,
        "expectedPods": 0,
    }
)

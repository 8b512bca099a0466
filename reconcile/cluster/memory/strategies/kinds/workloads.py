"""Deployments, StatefulSets, DaemonSets, ReplicaSets and ReplicationControllers.

Defaults: Deployment `replicas: 1`, `strategy: RollingUpdate 25%/25%`, `revisionHistoryLimit:
10`, `progressDeadlineSeconds: 600`; StatefulSet `replicas: 1`, `podManagementPolicy:
OrderedReady`, `updateStrategy: RollingUpdate, partition 0` (1.37+: `maxUnavailable: 1`),
`revisionHistoryLimit: 10`, claim templates' `apiVersion`, `kind`, `volumeMode: Filesystem`,
`status.phase: Pending` (1.27+: `persistentVolumeClaimRetentionPolicy: Retain/Retain`), status
`replicas: 0` (1.25+: and `availableReplicas: 0`); DaemonSet `updateStrategy:
RollingUpdate, maxUnavailable 1` (1.21+: `maxSurge: 0`), `revisionHistoryLimit: 10`, annotation
`deprecated.daemonset.template.generation` (following template changes); ReplicaSet and
ReplicationController `replicas: 1` (the latter's selector and labels from its template's).

Validation: selectors present, non-empty and matching their template's labels, pod templates
with `restartPolicy: Always`; on update, selectors immutable, and a StatefulSet's spec outside
the fields it may change. A Deployment's status write keeps its labels and holds its counts to
be non-negative and within `replicas`.
"""

from __future__ import annotations

from collections.abc import Callable

from reconcile.cluster.memory.strategies.kinds.base import (
    Context,
    Errors,
    KindRules,
    as_dict,
    child,
    immutable,
    items,
    spec_of,
)
from reconcile.cluster.memory.strategies.kinds.pods import (
    default_template,
    pod_spec_errors,
    template_metadata,
)
from reconcile.cluster.memory.validation import fielderrors
from reconcile.objects.meta import Obj
from reconcile.objects.selectors import SelectorError, label_selector_from_spec

TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"
_STATEFULSET_MUTABLE = (
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
)


def _deployment(obj: Obj, context: Context) -> None:
    spec = child(obj, "spec")
    spec.setdefault("replicas", 1)
    strategy = child(spec, "strategy")
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = child(strategy, "rollingUpdate")
        rolling.setdefault("maxUnavailable", "25%")
        rolling.setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    default_template(spec, context.minor)


def _statefulset(obj: Obj, context: Context) -> None:
    spec = child(obj, "spec")
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = child(spec, "updateStrategy")
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = child(strategy, "rollingUpdate")
        rolling.setdefault("partition", 0)
        if context.minor >= 37:  # MaxUnavailableStatefulSet on by default
            rolling.setdefault("maxUnavailable", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    if context.minor >= 27:
        policy = child(spec, "persistentVolumeClaimRetentionPolicy")
        policy.setdefault("whenDeleted", "Retain")
        policy.setdefault("whenScaled", "Retain")
    for claim in items(spec, "volumeClaimTemplates"):
        claim.setdefault("apiVersion", "v1")
        claim.setdefault("kind", "PersistentVolumeClaim")
        template_metadata(claim, context.minor)
        child(claim, "spec").setdefault("volumeMode", "Filesystem")
        claim.setdefault("status", {"phase": "Pending"})
    default_template(spec, context.minor)


def _daemonset(obj: Obj, context: Context) -> None:
    spec = child(obj, "spec")
    strategy = child(spec, "updateStrategy")
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = child(strategy, "rollingUpdate")
        rolling.setdefault("maxUnavailable", 1)
        if context.minor >= 21:
            rolling.setdefault("maxSurge", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    default_template(spec, context.minor)
    annotations = child(child(obj, "metadata"), "annotations")
    annotations.setdefault(TEMPLATE_GENERATION, "1")


def _next_template_generation(old: Obj, new: Obj) -> None:
    """A DaemonSet's template generation annotation follows changes of its template."""
    annotations = child(child(new, "metadata"), "annotations")
    previous = as_dict(as_dict(old.get("metadata")).get("annotations")).get(
        TEMPLATE_GENERATION, "1"
    )
    changed = spec_of(old).get("template") != spec_of(new).get("template")
    try:
        number = int(previous)
    except ValueError:
        number = 1
    annotations[TEMPLATE_GENERATION] = str(number + 1 if changed else number)


def _replicaset(obj: Obj, context: Context) -> None:
    spec = child(obj, "spec")
    spec.setdefault("replicas", 1)
    default_template(spec, context.minor)


def _replicationcontroller(obj: Obj, context: Context) -> None:
    spec = child(obj, "spec")
    spec.setdefault("replicas", 1)
    template = as_dict(spec.get("template"))
    if template:
        # selector and labels default from the template's labels
        labels = as_dict(as_dict(template.get("metadata")).get("labels"))
        if labels:
            spec.setdefault("selector", dict(labels))
            child(obj, "metadata").setdefault("labels", dict(labels))
        default_template(spec, context.minor)


def _workload_errors(kind: str) -> Callable[[Obj], Errors]:
    """A workload's checks, named by the lower-case kind the server's messages use."""

    def errors(obj: Obj) -> Errors:
        spec = spec_of(obj)
        template = as_dict(spec.get("template"))
        found = pod_spec_errors(as_dict(template.get("spec")), "spec.template.spec", ("Always",))
        labels = as_dict(as_dict(template.get("metadata")).get("labels"))
        mismatch = fielderrors.invalid_value(
            "spec.template.metadata.labels", labels, "`selector` does not match template `labels`"
        )
        selector = spec.get("selector")
        if selector is None:  # a missing selector matches no labels
            return [fielderrors.required("spec.selector"), mismatch, *found]
        selector = as_dict(selector)
        if not selector.get("matchLabels") and not selector.get("matchExpressions"):
            found.append(
                fielderrors.invalid_value(
                    "spec.selector", selector, f"empty selector is invalid for {kind}"
                )
            )
            return found
        try:
            matches = label_selector_from_spec(selector, "spec.selector").matches_labels(labels)
        except SelectorError as exc:
            found.append(fielderrors.invalid_value("spec.selector", selector, str(exc)))
            return found
        if not matches:
            found.append(mismatch)
        return found

    return errors


def _selector_immutable(old: Obj, new: Obj, _: int) -> Errors:
    return immutable(spec_of(old).get("selector"), spec_of(new).get("selector"), "spec.selector")


def _statefulset_update_errors(old_set: Obj, new_set: Obj, minor: int) -> Errors:
    errors = _selector_immutable(old_set, new_set, minor)
    mutable = _STATEFULSET_MUTABLE if minor >= 25 else ("replicas", "template", "updateStrategy")

    def rest(spec: Obj) -> Obj:
        return {k: val for k, val in spec.items() if k not in mutable}

    if rest(spec_of(old_set)) == rest(spec_of(new_set)):
        return errors
    if minor >= 25:
        detail = (
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', "
            "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and "
            "'minReadySeconds' are forbidden"
        )
    else:
        detail = (
            "updates to statefulset spec for fields other than 'replicas', 'template', and "
            "'updateStrategy' are forbidden"
        )
    return [*errors, fielderrors.forbidden("spec", detail)]


def _replicas(_: Obj, __: int) -> Obj:
    return {"replicas": 0}


def _keep_labels(stored: Obj, deployment: Obj, _: int) -> None:
    labels = as_dict(stored.get("metadata")).get("labels")
    meta = child(deployment, "metadata")
    if labels is None:
        meta.pop("labels", None)
    else:
        meta["labels"] = dict(labels)


_COUNTS = ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas")


def _deployment_status_errors(_: Obj, deployment: Obj, __: int) -> Errors:
    status = as_dict(deployment.get("status"))

    def count(name: str) -> int:
        value = status.get(name, 0)
        return value if isinstance(value, int) else 0

    errors = [
        fielderrors.invalid_value(
            f"status.{name}", count(name), "must be greater than or equal to 0"
        )
        for name in ("observedGeneration", *_COUNTS, "unavailableReplicas", "collisionCount")
        if count(name) < 0
    ]
    for name in _COUNTS[1:]:
        if count(name) > count("replicas"):
            errors.append(
                fielderrors.invalid_value(
                    f"status.{name}", count(name), "cannot be greater than status.replicas"
                )
            )
    if count("availableReplicas") > count("readyReplicas"):
        errors.append(
            fielderrors.invalid_value(
                "status.availableReplicas",
                count("availableReplicas"),
                "cannot be greater than readyReplicas",
            )
        )
    return errors


DEPLOYMENTS = KindRules(
    default=_deployment,
    errors=_workload_errors("deployment"),
    update_errors=_selector_immutable,
    status_update=_keep_labels,
    status_errors=_deployment_status_errors,
    annotations_are_spec=True,
)


def _statefulset_status(_: Obj, minor: int) -> Obj:
    # `availableReplicas` (1.22) is written even when 0 (no `omitempty`) in every release from
    # 1.25 on that --local models
    return {"replicas": 0, "availableReplicas": 0} if minor >= 25 else {"replicas": 0}


STATEFULSETS = KindRules(
    default=_statefulset,
    errors=_workload_errors("statefulset"),
    update_errors=_statefulset_update_errors,
    initial_status=_statefulset_status,
)
DAEMONSETS = KindRules(
    default=_daemonset,
    after_update=_next_template_generation,
    errors=_workload_errors("daemonset"),
    update_errors=_selector_immutable,
    initial_status=lambda _, __: {
        "currentNumberScheduled": 0,
        "desiredNumberScheduled": 0,
        "numberMisscheduled": 0,
        "numberReady": 0,
    },
)
REPLICASETS = KindRules(
    default=_replicaset,
    errors=_workload_errors("replicaset"),
    update_errors=_selector_immutable,
    initial_status=_replicas,
)
REPLICATIONCONTROLLERS = KindRules(default=_replicationcontroller, initial_status=_replicas)

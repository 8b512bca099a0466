"""Pods, PodTemplates, and the pod spec every workload's template holds.

Defaults: containers' `imagePullPolicy` (`Always` for `:latest` or no tag, else
`IfNotPresent`), `terminationMessagePath: /dev/termination-log`, `terminationMessagePolicy:
File`, `resources: {}`, ports' `protocol: TCP`, probes' `timeoutSeconds: 1`, `periodSeconds:
10`, `successThreshold: 1`, `failureThreshold: 3`, `httpGet.scheme: HTTP`, env `fieldRef.apiVersion:
v1`; the pod spec's `dnsPolicy: ClusterFirst`, `restartPolicy: Always`, `schedulerName:
default-scheduler`, `securityContext: {}`, `terminationGracePeriodSeconds: 30`, volumes'
`defaultMode: 420` and `hostPath.type: ""`; template metadata `creationTimestamp: null` (until
1.34). A Pod also: limits copied to missing requests, `enableServiceLinks: true`, `priority: 0`,
`preemptionPolicy: PreemptLowerPriority`, tolerations `not-ready`/`unreachable` for 300 s (the
Priority and DefaultTolerationSeconds admission plugins), `status: {phase: Pending, qosClass}`.

Validation: containers and images present, container names unique and DNS labels, container
ports in range, a supported restart policy; on update only images, `activeDeadlineSeconds`,
added tolerations and `terminationGracePeriodSeconds` may change.

A status write keeps the stored owner references; 1.32+ a status without `qosClass` keeps the
stored one; `observedGeneration` (of the status and of each condition) is dropped before 1.34
(its feature gate off) and, from 1.34, kept from the stored status where a write leaves it out.
"""

from __future__ import annotations

from reconcile.cluster.memory.strategies.kinds.base import (
    Context,
    Errors,
    KindRules,
    as_dict,
    child,
    items,
    spec_of,
)
from reconcile.cluster.memory.validation import fielderrors, name_rules
from reconcile.objects.meta import Obj

ANY_RESTART = ("Always", "OnFailure", "Never")
# 1.27 (InPlacePodVerticalScaling) lists the fields a pod update may change joined by ","; until
# then one sentence ended "... or `spec.terminationGracePeriodSeconds` (...)".
UPDATABLE_FIELDS_JOINED_SINCE = 27


def default_pod_spec(spec: Obj) -> None:
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    spec.setdefault("terminationGracePeriodSeconds", 30)
    for container in items(spec, "containers") + items(spec, "initContainers"):
        _default_container(container)
    for volume in items(spec, "volumes"):
        for source in ("secret", "configMap", "projected", "downwardAPI"):
            if isinstance(volume.get(source), dict):
                volume[source].setdefault("defaultMode", 420)
        if isinstance(volume.get("hostPath"), dict):
            volume["hostPath"].setdefault("type", "")


# From 1.34 an embedded object's metadata drops a zero `creationTimestamp` (apimachinery marks it
# `omitzero`); until then every template carried `creationTimestamp: null`.
ZERO_TIMESTAMP_OMITTED_SINCE = 34


def template_metadata(template: Obj, minor: int) -> None:
    meta = child(template, "metadata")
    if minor < ZERO_TIMESTAMP_OMITTED_SINCE:
        meta.setdefault("creationTimestamp", None)
    elif "creationTimestamp" in meta and meta["creationTimestamp"] is None:
        del meta["creationTimestamp"]


def default_template(holder: Obj, minor: int) -> None:
    """The pod template inside a workload (`holder.template`): its metadata and pod spec."""
    template = child(holder, "template")
    template_metadata(template, minor)
    default_pod_spec(child(template, "spec"))


def _default_pod(pod: Obj, _: Context) -> None:
    spec = child(pod, "spec")
    for container in items(spec, "containers") + items(spec, "initContainers"):
        resources = as_dict(container.get("resources"))
        limits = as_dict(resources.get("limits"))
        if limits:
            requests = resources.setdefault("requests", {})
            for name, value in limits.items():
                requests.setdefault(name, value)
            container["resources"] = resources
    default_pod_spec(spec)
    spec.setdefault("enableServiceLinks", True)
    # the Priority admission plugin, with no PriorityClass named or marked global default
    if "priorityClassName" not in spec:
        spec.setdefault("priority", 0)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    # the DefaultTolerationSeconds admission plugin
    tolerations = items(spec, "tolerations")
    for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
        if not any(
            t.get("key") == key and t.get("effect") in ("NoExecute", None, "") for t in tolerations
        ):
            tolerations.append(
                {"effect": "NoExecute", "key": key, "operator": "Exists", "tolerationSeconds": 300}
            )
    spec["tolerations"] = tolerations


def _default_container(container: Obj) -> None:
    container.setdefault("imagePullPolicy", _pull_policy(str(container.get("image", ""))))
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    container.setdefault("resources", {})
    for port in items(container, "ports"):
        port.setdefault("protocol", "TCP")
    for probe_name in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = container.get(probe_name)
        if isinstance(probe, dict):
            probe.setdefault("timeoutSeconds", 1)
            probe.setdefault("periodSeconds", 10)
            probe.setdefault("successThreshold", 1)
            probe.setdefault("failureThreshold", 3)
            if isinstance(probe.get("httpGet"), dict):
                probe["httpGet"].setdefault("scheme", "HTTP")
    for env in items(container, "env"):
        field_ref = as_dict(env.get("valueFrom")).get("fieldRef")
        if isinstance(field_ref, dict):
            field_ref.setdefault("apiVersion", "v1")


def _pull_policy(image: str) -> str:
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    if ":" not in last or last.endswith(":latest"):
        return "Always"
    return "IfNotPresent"


def qos_class(spec: Obj) -> str:
    """A pod's QoS class from its containers' requests and limits (after defaulting)."""
    containers = items(spec, "containers") + items(spec, "initContainers")
    requests_seen = limits_seen = False
    guaranteed = True
    for container in containers:
        resources = as_dict(container.get("resources"))
        requests, limits = as_dict(resources.get("requests")), as_dict(resources.get("limits"))
        requests_seen |= any(k in requests for k in ("cpu", "memory"))
        limits_seen |= any(k in limits for k in ("cpu", "memory"))
        for name in ("cpu", "memory"):
            if name not in limits or requests.get(name, limits[name]) != limits[name]:
                guaranteed = False
    if not requests_seen and not limits_seen:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def pod_spec_errors(spec: Obj, path: str, restart_policies: tuple[str, ...]) -> Errors:
    errors: Errors = []
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        errors.append(fielderrors.required(f"{path}.containers"))
    seen: set[str] = set()
    for field in ("initContainers", "containers"):
        for index, container in enumerate(items(spec, field)):
            where = f"{path}.{field}[{index}]"
            name = container.get("name")
            if isinstance(name, str) and name:
                if name in seen:
                    errors.append(
                        fielderrors.FieldError(f"{where}.name", "Duplicate value", "", name, True)
                    )
                seen.add(name)
                errors += [
                    fielderrors.invalid_value(f"{where}.name", name, m)
                    for m in name_rules.dns1123_label_errors(name)
                ]
            if not container.get("image"):
                errors.append(fielderrors.required(f"{where}.image"))
            for port_index, port in enumerate(items(container, "ports")):
                number = port.get("containerPort")
                if isinstance(number, int) and not 1 <= number <= 65535:
                    errors.append(
                        fielderrors.invalid_value(
                            f"{where}.ports[{port_index}].containerPort",
                            number,
                            "must be between 1 and 65535, inclusive",
                        )
                    )
    policy = spec.get("restartPolicy")
    if policy is not None and policy not in restart_policies:
        errors.append(
            fielderrors.unsupported(f"{path}.restartPolicy", policy, list(restart_policies))
        )
    return errors


def _pod_update_errors(old_pod: Obj, new_pod: Obj, minor: int) -> Errors:
    """Only images, activeDeadlineSeconds, added tolerations and the grace period may change."""
    old, new = spec_of(old_pod), spec_of(new_pod)

    def comparable(spec: Obj) -> Obj:
        copy = {
            k: val
            for k, val in spec.items()
            if k not in ("activeDeadlineSeconds", "terminationGracePeriodSeconds", "tolerations")
        }
        for field in ("containers", "initContainers"):
            if isinstance(copy.get(field), list):
                copy[field] = [
                    {k: val for k, val in c.items() if k != "image"} if isinstance(c, dict) else c
                    for c in copy[field]
                ]
        return copy

    old_tolerations = items(old, "tolerations")
    new_tolerations = items(new, "tolerations")
    removed = any(t not in new_tolerations for t in old_tolerations)
    if comparable(old) == comparable(new) and not removed:
        return []
    fields = [
        "`spec.containers[*].image`",
        "`spec.initContainers[*].image`",
        "`spec.activeDeadlineSeconds`",
        "`spec.tolerations` (only additions to existing tolerations)",
    ]
    if minor >= 21:
        fields.append(
            "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously "
            "negative)"
        )
    if minor >= UPDATABLE_FIELDS_JOINED_SINCE:
        listed = ",".join(fields)
    else:
        listed = ", ".join(fields[:-1]) + " or " + fields[-1]
    detail = f"pod updates may not change fields other than {listed}"
    return [fielderrors.forbidden("spec", detail)]


# The status strategy backfills `qosClass` from 1.32; pods' `observedGeneration` (KEP 5067) is
# served from 1.34 (beta, on by default).
QOS_CLASS_KEPT_SINCE = 32
OBSERVED_GENERATION_SINCE = 34


def _pod_status_update(stored: Obj, pod: Obj, minor: int) -> None:
    refs = as_dict(stored.get("metadata")).get("ownerReferences")
    meta = child(pod, "metadata")
    if refs is None:
        meta.pop("ownerReferences", None)
    else:
        meta["ownerReferences"] = refs
    status, old = child(pod, "status"), as_dict(stored.get("status"))
    if minor >= QOS_CLASS_KEPT_SINCE and not status.get("qosClass") and old.get("qosClass"):
        status["qosClass"] = old["qosClass"]
    conditions = items(status, "conditions")
    if minor < OBSERVED_GENERATION_SINCE:
        for holder in (status, *conditions):
            holder.pop("observedGeneration", None)
        return
    if not status.get("observedGeneration") and old.get("observedGeneration"):
        status["observedGeneration"] = old["observedGeneration"]
    earlier: dict[object, list[object]] = {}
    for condition in items(old, "conditions"):
        earlier.setdefault(condition.get("type"), []).append(condition.get("observedGeneration"))
    for condition in conditions:
        previous = earlier.get(condition.get("type")) or [None]
        generation = previous.pop(0)
        if not condition.get("observedGeneration") and generation:
            condition["observedGeneration"] = generation


PODS = KindRules(
    default=_default_pod,
    errors=lambda pod: pod_spec_errors(spec_of(pod), "spec", ANY_RESTART),
    update_errors=_pod_update_errors,
    initial_status=lambda pod, _: {"phase": "Pending", "qosClass": qos_class(spec_of(pod))},
    status_update=_pod_status_update,
)
PODTEMPLATES = KindRules(default=lambda obj, context: default_template(obj, context.minor))

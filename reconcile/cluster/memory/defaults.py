"""The defaults kube-apiserver gives built-in objects, in one place.

Each is what the server's defaulting functions (`pkg/apis/*/v1/defaults.go`), the admission
plugins enabled by default (Priority, DefaultTolerationSeconds, StorageObjectInUseProtection)
and a create's strategy write into an object that a controller sent without them. The 1.20
forms were read off the test control plane; `minor` gates what later releases added. Objects
are changed in place; a value the writer set is never replaced.

- container (any pod spec): `imagePullPolicy` (`Always` for `:latest` or no tag, else
  `IfNotPresent`), `terminationMessagePath: /dev/termination-log`, `terminationMessagePolicy:
  File`, `resources: {}`, ports' `protocol: TCP`, probes' `timeoutSeconds: 1`, `periodSeconds:
  10`, `successThreshold: 1`, `failureThreshold: 3`, `httpGet.scheme: HTTP`, env
  `fieldRef.apiVersion: v1`
- pod spec (pods and templates): `dnsPolicy: ClusterFirst`, `restartPolicy: Always`,
  `schedulerName: default-scheduler`, `securityContext: {}`, `terminationGracePeriodSeconds: 30`;
  volumes: `secret`/`configMap`/`projected`/`downwardAPI` `defaultMode: 420`, `hostPath.type: ""`
- Pod: limits copied to missing requests, `enableServiceLinks: true`, `priority: 0`,
  `preemptionPolicy: PreemptLowerPriority`, tolerations `not-ready`/`unreachable` for 300 s,
  `status: {phase: Pending, qosClass}`
- template metadata: `creationTimestamp: null`
- Service: `type: ClusterIP`, `sessionAffinity: None`, ports' `protocol: TCP` and `targetPort:
  <port>`, `clusterIP`/`clusterIPs` allocated from 10.0.0.0/24, `nodePort` allocated for
  NodePort/LoadBalancer with `externalTrafficPolicy: Cluster`, `status.loadBalancer: {}`; 1.21+:
  `ipFamilies: [IPv4]`, `ipFamilyPolicy: SingleStack`; 1.22+: `internalTrafficPolicy: Cluster`;
  1.24+: LoadBalancer `allocateLoadBalancerNodePorts: true`
- Deployment: `replicas: 1`, `strategy: RollingUpdate 25%/25%`, `revisionHistoryLimit: 10`,
  `progressDeadlineSeconds: 600`
- StatefulSet: `replicas: 1`, `podManagementPolicy: OrderedReady`, `updateStrategy: RollingUpdate,
  partition 0`, `revisionHistoryLimit: 10`, claim templates `apiVersion`, `kind`, `volumeMode:
  Filesystem`, `status.phase: Pending`; 1.27+: `persistentVolumeClaimRetentionPolicy:
  Retain/Retain`
- DaemonSet: `updateStrategy: RollingUpdate, maxUnavailable 1` (1.21+: `maxSurge: 0`),
  `revisionHistoryLimit: 10`, annotation `deprecated.daemonset.template.generation`
- ReplicaSet: `replicas: 1`
- Job: `backoffLimit: 6`, `completions`/`parallelism: 1`, generated selector and `controller-
  uid`/`job-name` labels (1.27+: also the `batch.kubernetes.io/` ones); 1.21+: `completionMode:
  NonIndexed`, `suspend: false`; 1.29+: `podReplacementPolicy`
- CronJob: `concurrencyPolicy: Allow`, `suspend: false`, `successfulJobsHistoryLimit: 3`,
  `failedJobsHistoryLimit: 1`
- PersistentVolumeClaim: `volumeMode: Filesystem`, finalizer `kubernetes.io/pvc-protection` (on
  create only, as admission adds it), `status.phase: Pending`
- PersistentVolume: `persistentVolumeReclaimPolicy: Retain`, `volumeMode: Filesystem`, finalizer
  `kubernetes.io/pv-protection` (on create only), `status.phase: Pending`
- Secret: `type: Opaque`
- HorizontalPodAutoscaler (v2): `minReplicas: 1`, `metrics`: cpu at 80% utilization
- NetworkPolicy: `policyTypes: [Ingress]` (and `Egress` with egress rules)
- Namespace: 1.21+: label `kubernetes.io/metadata.name`

Not modelled: defaults of fields that need a feature gate off by default, HPA `behavior`,
and the statuses controllers write later (there is no kubelet, scheduler or workload controller).
"""

from __future__ import annotations

import hashlib
import ipaddress
from collections.abc import Callable
from typing import Any

from reconcile.objects.meta import Obj

_TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"
_SERVICE_RANGE = ipaddress.ip_network("10.0.0.0/24")
_NODE_PORTS = (30000, 32767)


class Defaulter:
    """Defaults for one release. `uid` is the object's uid (Jobs label their pods with it);
    `taken` tells which Service IPs and node ports are in use."""

    def __init__(self, minor: int) -> None:
        self.minor = minor
        self._by_resource: dict[str, Callable[[Obj], None]] = {
            "pods": self._pod,
            "services": self._service,
            "deployments.apps": self._deployment,
            "statefulsets.apps": self._statefulset,
            "daemonsets.apps": self._daemonset,
            "replicasets.apps": self._replicaset,
            "replicationcontrollers": self._replicationcontroller,
            "jobs.batch": self._job,
            "cronjobs.batch": self._cronjob,
            "persistentvolumeclaims": self._pvc,
            "persistentvolumes": self._pv,
            "secrets": self._secret,
            "horizontalpodautoscalers.autoscaling": self._hpa,
            "networkpolicies.networking.k8s.io": self._network_policy,
            "namespaces": self._namespace,
            "podtemplates": self._podtemplate,
        }
        self.used_ips: set[str] = set()
        self.used_node_ports: set[int] = set()

    def apply(self, group_resource: str, obj: Obj) -> None:
        handler = self._by_resource.get(group_resource)
        if handler is not None:
            handler(obj)

    def protect(self, group_resource: str, obj: Obj) -> None:
        """The storage protection finalizers, which admission adds on create only (the
        protection controllers remove them; an update may remove them too)."""
        if group_resource == "persistentvolumeclaims":
            _add_finalizer(obj, "kubernetes.io/pvc-protection")
        elif group_resource == "persistentvolumes":
            _add_finalizer(obj, "kubernetes.io/pv-protection")

    def initial_status(self, group_resource: str, obj: Obj) -> Obj:
        """The status a create gives an object (its status subresource being ours to set)."""
        if group_resource == "pods":
            return {"phase": "Pending", "qosClass": qos_class(_dict(obj.get("spec")))}
        if group_resource in ("services", "ingresses.networking.k8s.io"):
            return {"loadBalancer": {}}
        if group_resource in ("persistentvolumeclaims", "persistentvolumes"):
            return {"phase": "Pending"}
        if group_resource in ("statefulsets.apps", "replicasets.apps", "replicationcontrollers"):
            return {"replicas": 0}
        if group_resource == "daemonsets.apps":
            return {
                "currentNumberScheduled": 0,
                "desiredNumberScheduled": 0,
                "numberMisscheduled": 0,
                "numberReady": 0,
            }
        if group_resource == "poddisruptionbudgets.policy":
            return {
                "currentHealthy": 0,
                "desiredHealthy": 0,
                "disruptionsAllowed": 0,
                "expectedPods": 0,
            }
        if group_resource == "horizontalpodautoscalers.autoscaling":
            return {"currentReplicas": 0, "desiredReplicas": 0}
        return {}

    # --- pods and pod templates ---------------------------------------------------------------

    def _pod(self, pod: Obj) -> None:
        spec = _child(pod, "spec")
        for container in _items(spec, "containers") + _items(spec, "initContainers"):
            resources = _dict(container.get("resources"))
            limits = _dict(resources.get("limits"))
            if limits:
                requests = resources.setdefault("requests", {})
                for name, value in limits.items():
                    requests.setdefault(name, value)
                container["resources"] = resources
        self._pod_spec(spec)
        spec.setdefault("enableServiceLinks", True)
        # the Priority admission plugin, with no PriorityClass named or marked global default
        if "priorityClassName" not in spec:
            spec.setdefault("priority", 0)
        spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
        # the DefaultTolerationSeconds admission plugin
        tolerations = _items(spec, "tolerations")
        for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
            if not any(
                t.get("key") == key and t.get("effect") in ("NoExecute", None, "")
                for t in tolerations
            ):
                tolerations.append(
                    {
                        "effect": "NoExecute",
                        "key": key,
                        "operator": "Exists",
                        "tolerationSeconds": 300,
                    }
                )
        spec["tolerations"] = tolerations

    def _template(self, holder: Obj) -> None:
        """A pod template inside a workload: its metadata and pod spec."""
        template = _child(holder, "template")
        _template_metadata(template)
        self._pod_spec(_child(template, "spec"))

    def _podtemplate(self, obj: Obj) -> None:
        self._template(obj)

    def _pod_spec(self, spec: Obj) -> None:
        spec.setdefault("dnsPolicy", "ClusterFirst")
        spec.setdefault("restartPolicy", "Always")
        spec.setdefault("schedulerName", "default-scheduler")
        spec.setdefault("securityContext", {})
        spec.setdefault("terminationGracePeriodSeconds", 30)
        for container in _items(spec, "containers") + _items(spec, "initContainers"):
            _container(container)
        for volume in _items(spec, "volumes"):
            for source in ("secret", "configMap", "projected", "downwardAPI"):
                if isinstance(volume.get(source), dict):
                    volume[source].setdefault("defaultMode", 420)
            if isinstance(volume.get("hostPath"), dict):
                volume["hostPath"].setdefault("type", "")

    # --- workloads ----------------------------------------------------------------------------

    def _deployment(self, obj: Obj) -> None:
        spec = _child(obj, "spec")
        spec.setdefault("replicas", 1)
        strategy = _child(spec, "strategy")
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = _child(strategy, "rollingUpdate")
            rolling.setdefault("maxUnavailable", "25%")
            rolling.setdefault("maxSurge", "25%")
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
        self._template(spec)

    def _statefulset(self, obj: Obj) -> None:
        spec = _child(obj, "spec")
        spec.setdefault("replicas", 1)
        spec.setdefault("podManagementPolicy", "OrderedReady")
        strategy = _child(spec, "updateStrategy")
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            _child(strategy, "rollingUpdate").setdefault("partition", 0)
        spec.setdefault("revisionHistoryLimit", 10)
        if self.minor >= 27:
            policy = _child(spec, "persistentVolumeClaimRetentionPolicy")
            policy.setdefault("whenDeleted", "Retain")
            policy.setdefault("whenScaled", "Retain")
        for claim in _items(spec, "volumeClaimTemplates"):
            claim.setdefault("apiVersion", "v1")
            claim.setdefault("kind", "PersistentVolumeClaim")
            _template_metadata(claim)
            _child(claim, "spec").setdefault("volumeMode", "Filesystem")
            claim.setdefault("status", {"phase": "Pending"})
        self._template(spec)

    def _daemonset(self, obj: Obj) -> None:
        spec = _child(obj, "spec")
        strategy = _child(spec, "updateStrategy")
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = _child(strategy, "rollingUpdate")
            rolling.setdefault("maxUnavailable", 1)
            if self.minor >= 21:
                rolling.setdefault("maxSurge", 0)
        spec.setdefault("revisionHistoryLimit", 10)
        self._template(spec)
        annotations = _child(_child(obj, "metadata"), "annotations")
        annotations.setdefault(_TEMPLATE_GENERATION, "1")

    def _replicaset(self, obj: Obj) -> None:
        spec = _child(obj, "spec")
        spec.setdefault("replicas", 1)
        self._template(spec)

    def _replicationcontroller(self, obj: Obj) -> None:
        spec = _child(obj, "spec")
        spec.setdefault("replicas", 1)
        template = _dict(spec.get("template"))
        if template:
            # selector and labels default from the template's labels
            labels = _dict(_dict(template.get("metadata")).get("labels"))
            if labels:
                spec.setdefault("selector", dict(labels))
                _child(obj, "metadata").setdefault("labels", dict(labels))
            self._template(spec)

    def _job(self, obj: Obj) -> None:
        spec = _child(obj, "spec")
        if "completions" not in spec and "parallelism" not in spec:
            spec["completions"] = 1
        spec.setdefault("parallelism", 1)
        spec.setdefault("backoffLimit", 6)
        if self.minor >= 21:
            spec.setdefault("completionMode", "NonIndexed")
            spec.setdefault("suspend", False)
        if self.minor >= 29:
            spec.setdefault(
                "podReplacementPolicy",
                "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed",
            )
        self._template(spec)
        _labels_from_template(obj)

    def _cronjob(self, obj: Obj) -> None:
        spec = _child(obj, "spec")
        spec.setdefault("concurrencyPolicy", "Allow")
        spec.setdefault("suspend", False)
        spec.setdefault("successfulJobsHistoryLimit", 3)
        spec.setdefault("failedJobsHistoryLimit", 1)
        job_template = _child(spec, "jobTemplate")
        _template_metadata(job_template)
        self._template(_child(job_template, "spec"))

    # --- services, storage, the rest ----------------------------------------------------------

    def _service(self, obj: Obj) -> None:
        spec = _child(obj, "spec")
        kind = spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        if spec["sessionAffinity"] == "ClientIP":
            client = _child(_child(spec, "sessionAffinityConfig"), "clientIP")
            client.setdefault("timeoutSeconds", 10800)
        for port in _items(spec, "ports"):
            port.setdefault("protocol", "TCP")
            if "port" in port:
                port.setdefault("targetPort", port["port"])
            if kind in ("NodePort", "LoadBalancer") and "nodePort" not in port:
                port["nodePort"] = self._node_port(obj, port)
        if kind == "ExternalName":
            return
        if not spec.get("clusterIP"):
            spec["clusterIP"] = self._cluster_ip(obj)
        spec.setdefault("clusterIPs", [spec["clusterIP"]])
        if kind in ("NodePort", "LoadBalancer"):
            spec.setdefault("externalTrafficPolicy", "Cluster")
        if self.minor >= 21:
            spec.setdefault("ipFamilies", ["IPv4"])
            spec.setdefault("ipFamilyPolicy", "SingleStack")
        if self.minor >= 22:
            spec.setdefault("internalTrafficPolicy", "Cluster")
        if self.minor >= 24 and kind == "LoadBalancer":
            spec.setdefault("allocateLoadBalancerNodePorts", True)

    def _cluster_ip(self, obj: Obj) -> str:
        """A free address of the service range, chosen from the object's name so that the same
        manifests give the same addresses."""
        hosts = list(_SERVICE_RANGE.hosts())[9:]  # low addresses are the cluster's own services
        start = _stable_index(obj, len(hosts))
        for offset in range(len(hosts)):
            candidate = str(hosts[(start + offset) % len(hosts)])
            if candidate not in self.used_ips:
                self.used_ips.add(candidate)
                return candidate
        return str(hosts[start])

    def _node_port(self, obj: Obj, port: Obj) -> int:
        low, high = _NODE_PORTS
        count = high - low + 1
        start = _stable_index({**obj, "port": port.get("port")}, count)
        for offset in range(count):
            candidate = low + (start + offset) % count
            if candidate not in self.used_node_ports:
                self.used_node_ports.add(candidate)
                return candidate
        return low + start

    def _pvc(self, obj: Obj) -> None:
        _child(obj, "spec").setdefault("volumeMode", "Filesystem")

    def _pv(self, obj: Obj) -> None:
        spec = _child(obj, "spec")
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
        spec.setdefault("volumeMode", "Filesystem")

    def _secret(self, obj: Obj) -> None:
        obj.setdefault("type", "Opaque")

    def _hpa(self, obj: Obj) -> None:
        spec = _child(obj, "spec")
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

    def _network_policy(self, obj: Obj) -> None:
        spec = _child(obj, "spec")
        if "policyTypes" not in spec:
            spec["policyTypes"] = ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]

    def _namespace(self, obj: Obj) -> None:
        if self.minor >= 21:
            meta = _child(obj, "metadata")
            labels = _child(meta, "labels")
            labels["kubernetes.io/metadata.name"] = str(meta.get("name", ""))


def qos_class(spec: Obj) -> str:
    """A pod's QoS class from its containers' requests and limits (after defaulting)."""
    containers = _items(spec, "containers") + _items(spec, "initContainers")
    requests_seen = limits_seen = False
    guaranteed = True
    for container in containers:
        resources = _dict(container.get("resources"))
        requests, limits = _dict(resources.get("requests")), _dict(resources.get("limits"))
        requests_seen |= any(k in requests for k in ("cpu", "memory"))
        limits_seen |= any(k in limits for k in ("cpu", "memory"))
        for name in ("cpu", "memory"):
            if name not in limits or requests.get(name, limits[name]) != limits[name]:
                guaranteed = False
    if not requests_seen and not limits_seen:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def assign_job_selector(job: Obj, uid: str, minor: int) -> None:
    """The Job strategy's generated selector: the Job's uid, labelled on its pod template."""
    spec = _child(job, "spec")
    if spec.get("manualSelector"):
        return
    name = str(_dict(job.get("metadata")).get("name", ""))
    labels = {"controller-uid": uid, "job-name": name}
    selector = {"controller-uid": uid}
    if minor >= 27:
        labels = {
            "batch.kubernetes.io/controller-uid": uid,
            "batch.kubernetes.io/job-name": name,
            **labels,
        }
        selector = {"batch.kubernetes.io/controller-uid": uid}
    spec.setdefault("selector", {"matchLabels": selector})
    template_labels = _child(_child(_child(spec, "template"), "metadata"), "labels")
    for key, value in labels.items():
        template_labels.setdefault(key, value)
    meta = _child(job, "metadata")
    if meta.get("labels") == {}:
        del meta["labels"]
    _labels_from_template(job)


def keep_job_selector(stored: Obj, job: Obj) -> None:
    """An update that leaves out the generated selector keeps it."""
    spec = _child(job, "spec")
    old = _dict(stored.get("spec")).get("selector")
    if "selector" not in spec and old is not None and not spec.get("manualSelector"):
        spec["selector"] = old


def keep_allocations(stored: Obj, service: Obj) -> None:
    """An update that leaves out the allocated cluster IPs and node ports keeps them."""
    old, new = _dict(stored.get("spec")), _child(service, "spec")
    for field in ("clusterIP", "clusterIPs", "healthCheckNodePort"):
        if not new.get(field) and field in old:
            new[field] = old[field]
    old_ports = {(p.get("port"), p.get("protocol", "TCP")): p for p in _items(old, "ports")}
    for port in _items(new, "ports"):
        previous = old_ports.get((port.get("port"), port.get("protocol", "TCP")))
        if previous is not None and "nodePort" not in port and "nodePort" in previous:
            port["nodePort"] = previous["nodePort"]


def next_template_generation(old: Obj, new: Obj) -> None:
    """A DaemonSet's template generation annotation follows changes of its template."""
    annotations = _child(_child(new, "metadata"), "annotations")
    previous = _dict(_dict(old.get("metadata")).get("annotations")).get(_TEMPLATE_GENERATION, "1")
    changed = _dict(old.get("spec")).get("template") != _dict(new.get("spec")).get("template")
    try:
        number = int(previous)
    except ValueError:
        number = 1
    annotations[_TEMPLATE_GENERATION] = str(number + 1 if changed else number)


def _container(container: Obj) -> None:
    container.setdefault("imagePullPolicy", _pull_policy(str(container.get("image", ""))))
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    container.setdefault("resources", {})
    for port in _items(container, "ports"):
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
    for env in _items(container, "env"):
        field_ref = _dict(env.get("valueFrom")).get("fieldRef")
        if isinstance(field_ref, dict):
            field_ref.setdefault("apiVersion", "v1")


def _pull_policy(image: str) -> str:
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    if ":" not in last or last.endswith(":latest"):
        return "Always"
    return "IfNotPresent"


def _labels_from_template(obj: Obj) -> None:
    """Jobs (and ReplicationControllers) without labels take their template's."""
    meta = _child(obj, "metadata")
    template = _dict(_dict(obj.get("spec")).get("template"))
    labels = _dict(_dict(template.get("metadata")).get("labels"))
    if not meta.get("labels") and labels:
        meta["labels"] = dict(labels)


def _template_metadata(template: Obj) -> None:
    metadata = _child(template, "metadata")
    metadata.setdefault("creationTimestamp", None)


def _add_finalizer(obj: Obj, finalizer: str) -> None:
    meta = _child(obj, "metadata")
    finalizers = meta.get("finalizers")
    if not isinstance(finalizers, list):
        finalizers = []
    if finalizer not in finalizers:
        finalizers.append(finalizer)
    meta["finalizers"] = finalizers


def _stable_index(obj: Obj, modulo: int) -> int:
    meta = _dict(obj.get("metadata"))
    key = f"{meta.get('namespace', '')}/{meta.get('name', '')}/{obj.get('port', '')}"
    return int(hashlib.sha256(key.encode()).hexdigest(), 16) % modulo


def _child(obj: Obj, key: str) -> Obj:
    value = obj.get(key)
    if not isinstance(value, dict):
        value = {}
        obj[key] = value
    return value


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _items(obj: Obj, key: str) -> list[Obj]:
    value = obj.get(key)
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, dict)]

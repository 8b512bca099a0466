"""`--manifests`: objects applied before the controllers run, in the order `kubectl apply`
users expect (CustomResourceDefinitions, waited for until established, then Namespaces, then
the rest), with the three-way apply children get, recorded in an ApplySet so that `--prune`
deletes what left the manifests (`engine.applyset`)."""

from __future__ import annotations

import logging
import time
from dataclasses import field, replace
from pathlib import Path

from reconcile.budget import Budget, BudgetExhausted
from reconcile.cluster.errors import ApiError, NotFound
from reconcile.cluster.protocol import Cluster, list_all, with_type
from reconcile.engine import applyset
from reconcile.engine.actions import Action, ActionKind
from reconcile.engine.applyset import ApplySetRef
from reconcile.objects.meta import Obj, identity, metadata, name_of
from reconcile.objects.names import metadata_problems
from reconcile.objects.resource import ResourceInfo
from reconcile.records import dataclass
from reconcile.results import ControllerResult, ParentResult
from reconcile.runner.execute import Executor, failed_writes
from reconcile.runner.snapshot import Snapshot, managers_to_keep
from reconcile.runner.sources import yaml_documents

log = logging.getLogger(__name__)

CONTROLLER_NAME = "--manifests"
CRD_API = "apiextensions.k8s.io/v1"
ESTABLISHED_TIMEOUT = 60.0


@dataclass
class LoadedManifests:
    objects: list[tuple[str, Obj]] = field(default_factory=list)  # (where, object)
    errors: list[str] = field(default_factory=list)  # nothing is applied, or pruned, when set


def load_manifests(paths: list[Path], *, recursive: bool = False) -> LoadedManifests:
    """Every object of the paths, in file order; any file or object that cannot be read is an
    error (and then nothing is applied)."""
    loaded = LoadedManifests()
    for path in paths:
        try:
            documents = yaml_documents(path, recursive=recursive)
        except (OSError, ValueError) as exc:
            loaded.errors.append(f"--manifests {path}: {' '.join(str(exc).split())}")
            continue
        for _, where, obj in documents:
            missing = [k for k in ("apiVersion", "kind") if not isinstance(obj.get(k), str)]
            if not name_of(obj):
                missing.append("metadata.name")
            if missing:
                loaded.errors.append(f"--manifests {where}: missing {', '.join(missing)}")
                continue
            # what the API server would refuse is found before anything is written (a dry
            # run fails where the run would)
            loaded.errors += [
                f"--manifests {where}: {p.removeprefix('object.')}"
                for p in metadata_problems(obj, "object")
            ]
            loaded.objects.append((where, obj))
    return loaded


def duplicates(objects: list[tuple[str, ResourceInfo, Obj]]) -> list[str]:
    """Objects defined more than once (after namespaces are defaulted), naming every place:
    applied once, the second would fail with AlreadyExists or silently win."""
    places: dict[tuple[str, str, str], list[str]] = {}
    for where, resource, obj in objects:
        places.setdefault(applyset.member_key(obj, resource.namespaced), []).append(where)
    return [
        f"--manifests: {kind} {namespace + '/' if namespace else ''}{name} is defined more than "
        f"once ({', '.join(found)})"
        for (kind, namespace, name), found in places.items()
        if len(found) > 1
    ]


def _rank(obj: Obj) -> int:
    if obj.get("kind") == "CustomResourceDefinition":
        return 0
    if obj.get("kind") == "Namespace" and obj.get("apiVersion") == "v1":
        return 1
    return 2


class ManifestApplier:
    """Plans (and, unless dry, applies) the manifests as one parent-like unit of the report."""

    def __init__(
        self,
        cluster: Cluster,
        executor: Executor,
        ref: ApplySetRef,
        *,
        prune: bool,
        dry_run: bool,
        prune_allow_shrink: bool = False,
        prune_cascade: bool = False,
        budget: Budget,
        page_size: int = 500,
    ) -> None:
        self.cluster = cluster
        self.executor = executor
        self.ref = ref
        self.prune = prune
        self.prune_allow_shrink = prune_allow_shrink
        self.prune_cascade = prune_cascade
        # kinds of members held back from the prune: the parent keeps listing them, so the next
        # run still finds (and reports) them
        self.held_back: set[str] = set()
        self.dry_run = dry_run
        self.budget = budget
        self.snapshot = Snapshot(
            cluster, page_size, keep_managers=managers_to_keep(executor.strategy.server_side)
        )
        self.page_size = page_size
        self.new_kinds: list[ResourceInfo] = []  # kinds whose CRD this change brings (dry run)

    def run(self, loaded: LoadedManifests) -> ControllerResult:
        result = ParentResult(CONTROLLER_NAME, str(self.ref), "apply")
        controller = ControllerResult(CONTROLLER_NAME, [result])
        if loaded.errors:
            result.errors += loaded.errors
            result.errors.append("nothing was applied or pruned: the manifests failed to load")
            return controller
        try:
            self._apply(loaded, result)
            result.errors += [f"{self.ref}: {m}" for m in failed_writes(result.actions)]
        except BudgetExhausted as exc:
            result.interrupted = True
            result.errors.append(f"{self.ref}: {exc}")
        except ApiError as exc:
            result.errors.append(f"{self.ref}: {exc}")
        return controller

    def _apply(self, loaded: LoadedManifests, result: ParentResult) -> None:
        ordered = sorted(loaded.objects, key=lambda item: _rank(item[1]))
        crds = [obj for _, obj in ordered if _rank(obj) == 0]
        parent_resource = self.cluster.discover("v1", "configmaps")
        parent = self.snapshot.find(parent_resource, self.ref.namespace, self.ref.name)
        problem = applyset.parent_problem(parent, self.ref)
        if problem is not None:
            result.errors += [problem, "nothing was applied or pruned"]
            return
        crd_resource = self.cluster.discover(CRD_API, "customresourcedefinitions")
        planned_crds: list[tuple[ResourceInfo, Obj]] = [(crd_resource, obj) for obj in crds]
        # every object's kind is resolved before anything is written (a kind whose CRD is in
        # this change is described by that CRD)
        rest: list[tuple[ResourceInfo, Obj]] = []
        placed: list[tuple[str, ResourceInfo, Obj]] = [
            (where, crd_resource, obj) for where, obj in ordered if _rank(obj) == 0
        ]
        for where, manifest in ordered:
            if _rank(manifest) == 0:
                continue
            resource = self._resource(manifest, crds)
            if resource is None:
                result.errors.append(
                    f"--manifests {where}: {identity(manifest)}: the server has no kind "
                    f"{manifest['kind']} in apiVersion {manifest['apiVersion']}"
                )
                continue
            obj = manifest
            if resource.namespaced and not metadata(obj).get("namespace"):
                obj = {**obj, "metadata": {**metadata(obj), "namespace": "default"}}
            rest.append((resource, obj))
            placed.append((where, resource, obj))
        result.errors += duplicates(placed)
        if result.errors:
            result.errors.append("nothing was applied or pruned")
            return
        members = planned_crds + rest
        prunes = self._plan_prune(parent, members, result) if self.prune else []
        if prunes is None:
            return  # the prune was refused as a whole: nothing is written
        # 1. CRDs, then wait for them: the objects of their kinds need them served
        self._parent_first(parent, [obj for _, obj in ordered], result)
        self._write(planned_crds, result)
        if crds and not self.dry_run:
            self._wait_established([name_of(c) for c in crds])
        # 2. Namespaces and the rest, in file order
        self._write(rest, result)
        if prunes and not any(a.error for a in result.actions):
            self.executor.execute(prunes, result.actions)
        self._parent_last(members, result)

    def _resource(self, obj: Obj, crds: list[Obj]) -> ResourceInfo | None:
        try:
            return self.cluster.discover(str(obj["apiVersion"]), str(obj["kind"]))
        except NotFound:
            # a kind whose CRD is in this change: described by the manifest (a dry run did not
            # create it)
            info = _from_crd(crds, str(obj["apiVersion"]), str(obj["kind"]))
            if info is not None and info not in self.new_kinds:
                self.new_kinds.append(info)
            return info

    def _write(self, planned: list[tuple[ResourceInfo, Obj]], result: ParentResult) -> None:
        actions: list[Action] = []
        for resource, obj in planned:
            desired = applyset.as_member(obj, self.ref)
            namespace = str(metadata(desired).get("namespace") or "") if resource.namespaced else ""
            observed = self._observed(resource, namespace, name_of(desired))
            actions += applyset.plan_apply(resource, desired, observed, self.executor.strategy)
        self.executor.execute(actions, result.actions)

    def _observed(self, resource: ResourceInfo, namespace: str, name: str) -> Obj | None:
        try:
            return self.snapshot.find(resource, namespace, name)
        except NotFound:
            return None  # the resource itself is new in this change

    def _parent_first(self, parent: Obj | None, objects: list[Obj], result: ParentResult) -> None:
        """Before any member is written, the parent lists every kind it may hold: the ones it
        had and the new ones, so that a run stopped half-way still knows where to prune."""
        kinds = applyset.recorded_group_kinds(parent) | {applyset.group_kind(o) for o in objects}
        namespaces = applyset.recorded_namespaces(parent) | _namespaces(objects)
        self._write_parent(parent, kinds, namespaces, result)

    def _parent_last(self, members: list[tuple[ResourceInfo, Obj]], result: ParentResult) -> None:
        if self.dry_run or any(a.error for a in result.actions):
            return
        resource = self.cluster.discover("v1", "configmaps")
        current = self.cluster.get(resource, self.ref.name, namespace=self.ref.namespace)
        kinds = {applyset.group_kind(obj) for _, obj in members} | self.held_back
        self._write_parent(current, kinds, _namespaces([obj for _, obj in members]), result)

    def _write_parent(
        self, parent: Obj | None, kinds: set[str], namespaces: set[str], result: ParentResult
    ) -> None:
        resource = self.cluster.discover("v1", "configmaps")
        desired = applyset.parent_object(self.ref, kinds, namespaces)
        actions = applyset.plan_apply(resource, desired, parent, self.executor.strategy)
        if actions:
            self.executor.execute(actions, result.actions)

    def _plan_prune(
        self, parent: Obj | None, members: list[tuple[ResourceInfo, Obj]], result: ParentResult
    ) -> list[Action] | None:
        """The deletes `--prune` makes, planned before anything is written. A prune that would
        delete most of the set is refused as a whole (None, and nothing is written); a
        Namespace or CRD still holding objects outside the set is held back unless
        `--prune-cascade` (an error naming what it would take)."""
        wanted = {applyset.member_key(obj, r.namespaced) for r, obj in members}
        kinds = applyset.recorded_group_kinds(parent) | {k for k, _, _ in wanted}
        found: list[tuple[ResourceInfo, Obj]] = []
        selector = f"{applyset.PART_OF}={self.ref.id}"
        for kind in sorted(kinds):
            resource = self._resource_of_group_kind(kind)
            if resource is None:
                continue
            listed = list_all(
                self.cluster, resource, label_selector=selector, page_size=self.page_size
            ).items
            found += [(resource, obj) for obj in listed]
        deletes = applyset.plan_prune(found, wanted, self.ref)
        shrink = applyset.shrink_problem(applyset.count_members(found, self.ref), len(deletes))
        if shrink is not None and not self.prune_allow_shrink:
            result.errors.append(f"{self.ref}: {shrink}")
            return None
        pruned = applyset.pruned_keys(deletes)
        kept: list[Action] = []
        for action in deletes:
            if not applyset.holds_objects(action):
                kept.append(action)
                continue
            contents, unlisted = self._contents(action)
            taken = applyset.cascade(contents, pruned)
            if not taken and not unlisted:
                kept.append(action)
            elif self.prune_cascade:
                why = f"{action.reason}; deletes with it {applyset.describe_taken(taken)}"
                kept.append(replace(action, reason=why))
            else:
                self.held_back.add(applyset.group_kind(action.target))
                holds = applyset.describe_taken(taken) if taken else ""
                if unlisted:
                    unknown = f"what it holds cannot all be listed ({', '.join(unlisted)})"
                    holds = f"{holds}, and {unknown}" if holds else unknown
                result.errors.append(
                    f"{self.ref}: {identity(action.target)} left the manifests but holds "
                    f"{holds}: not pruned (--prune-cascade deletes it with them)"
                )
        return kept

    def _contents(self, action: Action) -> tuple[list[Obj], list[str]]:
        """What deleting a Namespace or CRD takes: every object in the namespace (of every
        kind served that can be listed) or every object of the CRD's kind; and the kinds that
        could not be listed (then what it holds is not known)."""
        target = action.target
        if target.get("kind") == "Namespace":
            kinds = [
                r for r in self.cluster.served_resources() if r.namespaced and "list" in r.verbs
            ]
            namespace: str | None = name_of(target)
        else:
            spec = target.get("spec") or {}
            names = spec.get("names") or {}
            try:
                version = self.cluster.preferred_version(str(spec.get("group") or ""))
                kinds = [self.cluster.discover(version, str(names.get("plural") or ""))]
            except NotFound:
                return [], []  # not served: nothing of its kind to take
            namespace = None
        out: list[Obj] = []
        unlisted: list[str] = []
        for resource in kinds:
            try:
                listed = list_all(
                    self.cluster, resource, namespace=namespace, page_size=self.page_size
                )
            except ApiError as exc:
                unlisted.append(f"{resource.group_resource}: {exc.status or 'error'}")
                continue
            out += [with_type(resource, obj) for obj in listed.items]
        return out, unlisted

    def _resource_of_group_kind(self, group_kind: str) -> ResourceInfo | None:
        kind, _, group = group_kind.partition(".")
        try:
            return self.cluster.discover(self.cluster.preferred_version(group), kind)
        except NotFound:
            return None  # the kind is gone from the server: nothing of it to prune

    def _wait_established(self, names: list[str]) -> None:
        resource = self.cluster.discover(CRD_API, "customresourcedefinitions")
        deadline = time.monotonic() + self.budget.bound(ESTABLISHED_TIMEOUT)
        waiting = list(names)
        while waiting:
            crd = self.cluster.get(resource, waiting[0])
            conditions = (crd.get("status") or {}).get("conditions") or []
            if any(
                c.get("type") == "Established" and c.get("status") == "True" for c in conditions
            ):
                waiting.pop(0)
                continue
            if time.monotonic() >= deadline:
                raise ApiError(f"CustomResourceDefinition {waiting[0]} is not established yet")
            self.budget.sleep(0.2)


def _namespaces(objects: list[Obj]) -> set[str]:
    return {str(metadata(o).get("namespace")) for o in objects if metadata(o).get("namespace")}


def _from_crd(crds: list[Obj], api_version: str, kind: str) -> ResourceInfo | None:
    group, _, version = api_version.rpartition("/")
    for crd in crds:
        spec = crd.get("spec") or {}
        names = spec.get("names") or {}
        versions = [v.get("name") for v in spec.get("versions") or [] if isinstance(v, dict)]
        if spec.get("group") == group and names.get("kind") == kind and version in versions:
            status = any(
                (v.get("subresources") or {}).get("status") is not None
                for v in spec.get("versions") or []
                if isinstance(v, dict) and v.get("name") == version
            )
            return ResourceInfo(
                group=group,
                version=version,
                resource=str(names.get("plural") or ""),
                kind=kind,
                namespaced=spec.get("scope", "Namespaced") == "Namespaced",
                has_status=status,
                singular=str(names.get("singular") or ""),
            )
    return None


__all__ = ["ActionKind", "LoadedManifests", "ManifestApplier", "load_manifests"]

"""Deletion and what follows it: finalizers, the garbage collector (background, foreground and
orphan propagation through owner references), the namespace controller and the CRD finalizer.

The real controllers work asynchronously from watches; here every write that may concern them
queues the uids involved and `settle()` runs the queue to a fixed point before the request
returns, so the outcome is the one the real cluster converges to.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from reconcile.cluster.memory.resources.catalog import CRDS, NAMESPACES
from reconcile.cluster.memory.resources.discovery import ResourceRegistry
from reconcile.cluster.memory.storage.store import ObjectStore
from reconcile.cluster.memory.strategies import crd
from reconcile.cluster.memory.strategies.kinds.namespaces import NAMESPACE_FINALIZER
from reconcile.cluster.types import Obj, Propagation
from reconcile.objects.jsondata import as_dict, normalized_copy, string_list
from reconcile.objects.meta import is_deleting, metadata, owner_references

ORPHAN = "orphan"
FOREGROUND = "foregroundDeletion"


def finalizers_of(obj: Obj) -> list[str]:
    return string_list(metadata(obj).get("finalizers"))


def spec_finalizers(namespace: Obj) -> list[str]:
    spec = namespace.get("spec")
    return string_list(spec.get("finalizers")) if isinstance(spec, dict) else []


def _set_finalizers(obj: Obj, finalizers: list[str]) -> None:
    if finalizers:
        obj["metadata"]["finalizers"] = finalizers
    else:
        obj["metadata"].pop("finalizers", None)


def _uid(obj: Obj) -> str:
    return str(metadata(obj).get("uid") or "")


def _namespace(obj: Obj) -> str:
    return str(metadata(obj).get("namespace") or "")


class Lifecycle:
    def __init__(
        self, store: ObjectStore, registry: ResourceRegistry, now: Callable[[], str]
    ) -> None:
        self._store = store
        self._registry = registry
        self._now = now
        self._queue: deque[str] = deque()
        self._queued: set[str] = set()

    # --- the work queue ------------------------------------------------------------------------

    def enqueue(self, uid: str) -> None:
        if uid and uid not in self._queued:
            self._queued.add(uid)
            self._queue.append(uid)

    def settle(self) -> None:
        """Run the controllers until nothing is left to do."""
        while self._queue:
            uid = self._queue.popleft()
            self._queued.discard(uid)
            found = self._store.by_uid(uid)
            if found is None:
                continue
            group_resource, obj = found
            if is_deleting(obj):
                self._finalize(group_resource, obj)
            elif owner_references(obj):
                self._collect(group_resource, obj)

    def after_write(self, group_resource: str, old: Obj | None, new: Obj) -> None:
        """Queue what a write concerns: the object itself when it is being deleted or has owners
        (they may be gone), and owners it stopped (or started) depending on."""
        uid = _uid(new)
        new_refs = owner_references(new)
        if is_deleting(new) or new_refs:
            self.enqueue(uid)
        old_refs = owner_references(old) if old is not None else []
        if old_refs != new_refs:
            for ref in old_refs + new_refs:
                self.enqueue(str(ref.get("uid") or ""))

    # --- writes the controllers make -----------------------------------------------------------

    def write(self, group_resource: str, obj: Obj) -> Obj:
        """Store a new version of an object (not a client request: not counted)."""
        obj["metadata"]["resourceVersion"] = self._store.next_resource_version()
        old = self._store.put(group_resource, obj)
        self.after_write(group_resource, old, obj)
        return obj

    def delete(self, group_resource: str, obj: Obj, propagation: Propagation | None) -> None:
        """Start deleting an object: gone at once, or marked with a deletionTimestamp while
        finalizers (including the garbage collector's) remain."""
        if is_deleting(obj):
            return
        finalizers = finalizers_of(obj)
        if propagation is not None:
            finalizers = [f for f in finalizers if f not in (ORPHAN, FOREGROUND)]
            if propagation is Propagation.ORPHAN:
                finalizers.append(ORPHAN)
            elif propagation is Propagation.FOREGROUND:
                finalizers.append(FOREGROUND)
        new: Obj = normalized_copy(obj)
        meta = new["metadata"]
        now = self._now()
        if group_resource == NAMESPACES:
            if not finalizers and not spec_finalizers(obj):
                self.remove(group_resource, obj)
                return
            status = as_dict(new.get("status"))
            new["status"] = {**status, "phase": "Terminating"}
        elif group_resource == CRDS:
            if crd.CLEANUP_FINALIZER not in finalizers:
                finalizers.append(crd.CLEANUP_FINALIZER)
            status = as_dict(new.get("status"))
            conditions = [
                c
                for c in status.get("conditions") or []
                if isinstance(c, dict) and c.get("type") != "Terminating"
            ]
            new["status"] = {**status, "conditions": [*conditions, crd.terminating_condition(now)]}
        elif not finalizers:
            self.remove(group_resource, obj)
            return
        meta["deletionTimestamp"] = now
        if group_resource != NAMESPACES:
            meta["deletionGracePeriodSeconds"] = 0
        _set_finalizers(new, finalizers)
        self.write(group_resource, new)
        self.enqueue(_uid(new))

    def remove(self, group_resource: str, obj: Obj) -> None:
        """The object is gone for good: queue whoever that concerns."""
        meta = metadata(obj)
        namespace = _namespace(obj)
        name = str(meta.get("name") or "")
        if self._store.remove(group_resource, namespace, name) is None:
            return
        uid = _uid(obj)
        for _, dependent in self._store.dependents(uid):
            self.enqueue(_uid(dependent))
        for ref in owner_references(obj):
            self.enqueue(str(ref.get("uid") or ""))
        if namespace:
            ns = self._store.get(NAMESPACES, "", namespace)
            if ns is not None and is_deleting(ns):
                self.enqueue(_uid(ns))
        if self._registry.is_custom(group_resource):
            definition = self._store.get(CRDS, "", group_resource)
            if definition is not None and is_deleting(definition):
                self.enqueue(_uid(definition))
        if group_resource == CRDS:
            self._registry.unregister_custom(name)
            for _, leftover in self._store.items(name):  # only if a client cut the finalizer
                self._store.remove(name, _namespace(leftover), str(metadata(leftover)["name"]))

    # --- the controllers -----------------------------------------------------------------------

    def _finalize(self, group_resource: str, obj: Obj) -> None:
        uid = _uid(obj)
        finalizers = finalizers_of(obj)
        if ORPHAN in finalizers:
            for dep_resource, dependent in self._store.dependents(uid):
                self.write(dep_resource, _without_owners(dependent, {uid}))
            finalizers = [f for f in finalizers if f != ORPHAN]
            obj = self._write_finalizers(group_resource, obj, finalizers)
        if FOREGROUND in finalizers:
            dependents = self._store.dependents(uid)
            for _, dependent in dependents:
                self.enqueue(_uid(dependent))
            if not any(_blocks(dependent, uid) for _, dependent in dependents):
                finalizers = [f for f in finalizers if f != FOREGROUND]
                obj = self._write_finalizers(group_resource, obj, finalizers)
        if group_resource == NAMESPACES and NAMESPACE_FINALIZER in spec_finalizers(obj):
            obj = self._empty_namespace(obj)
        if group_resource == CRDS and crd.CLEANUP_FINALIZER in finalizers:
            instances = str(metadata(obj).get("name") or "")
            for _, instance in self._store.items(instances):
                self.delete(instances, instance, None)
            if self._store.count(instances) == 0:
                finalizers = [f for f in finalizers if f != crd.CLEANUP_FINALIZER]
                obj = self._write_finalizers(group_resource, obj, finalizers)
        if not finalizers_of(obj) and not (group_resource == NAMESPACES and spec_finalizers(obj)):
            self.remove(group_resource, obj)

    def _empty_namespace(self, namespace: Obj) -> Obj:
        name = str(metadata(namespace).get("name") or "")
        for group_resource, obj in self._store.in_namespace(name):
            self.delete(group_resource, obj, Propagation.BACKGROUND)
        if self._store.count_in_namespace(name):
            return namespace
        new: Obj = normalized_copy(namespace)
        remaining = [f for f in spec_finalizers(namespace) if f != NAMESPACE_FINALIZER]
        new["spec"]["finalizers"] = remaining
        if not remaining:
            del new["spec"]["finalizers"]
        return self.write(NAMESPACES, new)

    def _write_finalizers(self, group_resource: str, obj: Obj, finalizers: list[str]) -> Obj:
        if finalizers == finalizers_of(obj):
            return obj
        new: Obj = normalized_copy(obj)
        _set_finalizers(new, finalizers)
        return self.write(group_resource, new)

    def _collect(self, group_resource: str, obj: Obj) -> None:
        """The garbage collector's `attemptToDelete` for a live object with owners."""
        solid, dangling, waiting = self._classify(obj)
        if not dangling and not waiting:
            return
        if solid:
            self.write(group_resource, _without_owners(obj, dangling | waiting))
            return
        finalizers = finalizers_of(obj)
        if waiting and self._store.has_dependents(_uid(obj)):
            policy = Propagation.FOREGROUND
        elif ORPHAN in finalizers:
            policy = Propagation.ORPHAN
        elif FOREGROUND in finalizers:
            policy = Propagation.FOREGROUND
        else:
            policy = Propagation.BACKGROUND
        self.delete(group_resource, obj, policy)

    def _classify(self, obj: Obj) -> tuple[set[str], set[str], set[str]]:
        """Owner uids split into solid (there), dangling (absent, or out of the dependent's
        namespace) and waiting (being deleted in the foreground)."""
        solid: set[str] = set()
        dangling: set[str] = set()
        waiting: set[str] = set()
        namespace = _namespace(obj)
        for ref in owner_references(obj):
            owner_uid = str(ref.get("uid") or "")
            found = self._store.by_uid(owner_uid)
            owner = found[1] if found is not None else None
            if owner is None or _namespace(owner) not in ("", namespace):
                dangling.add(owner_uid)
            elif is_deleting(owner) and FOREGROUND in finalizers_of(owner):
                waiting.add(owner_uid)
            else:
                solid.add(owner_uid)
        return solid, dangling, waiting


def _blocks(dependent: Obj, owner_uid: str) -> bool:
    return any(
        ref.get("uid") == owner_uid and ref.get("blockOwnerDeletion") is True
        for ref in owner_references(dependent)
    )


def _without_owners(obj: Obj, owner_uids: set[str]) -> Obj:
    new: Obj = normalized_copy(obj)
    refs: list[Any] = [r for r in owner_references(new) if r.get("uid") not in owner_uids]
    if refs:
        new["metadata"]["ownerReferences"] = refs
    else:
        new["metadata"].pop("ownerReferences", None)
    return new

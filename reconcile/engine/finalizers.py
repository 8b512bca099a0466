"""A controller's finalizer on its parents: the one home of its rules, for every kind (as
Metacontroller's `finalizer.Manager` is).

A controller with a finalize hook puts its finalizer on every parent it syncs, before anything
else, so that it gets a chance to clean up; one without takes its finalizer off. A parent that
is being deleted, or no longer matches the controller's selector, while it still carries the
finalizer is finalized (the finalize hook instead of the sync hook) until the hook answers
`finalized: true`, and the finalizer comes off then. Children are managed only while the
parent lives or is ours to finalize (`manages_children`).
"""

from __future__ import annotations

from enum import StrEnum

from reconcile.engine.actions import Action, ActionKind
from reconcile.objects.jsondata import json_copy
from reconcile.objects.meta import Obj, is_deleting, metadata
from reconcile.objects.resource import ResourceInfo
from reconcile.records import dataclass

# The garbage collector's own finalizers: while one is on a parent, the collector deletes (or
# orphans) its children, and a controller managing them would fight it.
GC_FINALIZERS = frozenset({"foregroundDeletion", "orphan"})


class Mode(StrEnum):
    """What a pass does with one parent."""

    SYNC = "sync"  # call the sync hook
    FINALIZE = "finalize"  # call the finalize hook
    REMOVE_FINALIZER = "remove-finalizer"  # only take our finalizer off
    SKIP = "skip"  # nothing to do (being deleted, or no longer selected, without our finalizer)


@dataclass(frozen=True)
class Finalizer:
    """A controller's finalizer: its name ("" for a kind without one), whether it is wanted (the
    controller has a finalize hook), and whether a parent being deleted without it is still
    synced (a DecoratorController's target is: Metacontroller calls its sync hook then too)."""

    name: str
    enabled: bool
    sync_deleting: bool = False

    def held_by(self, obj: Obj) -> bool:
        return bool(self.name) and self.name in (metadata(obj).get("finalizers") or [])

    def mode(self, parent: Obj, selected: bool) -> Mode:
        """What this pass does with a parent the controller's selector does or does not select."""
        ours, deleting = self.held_by(parent), is_deleting(parent)
        if self.enabled and ours and (deleting or not selected):
            return Mode.FINALIZE
        if not selected or (deleting and not self.sync_deleting):
            return Mode.REMOVE_FINALIZER if ours else Mode.SKIP
        return Mode.SYNC

    def manages_children(self, parent: Obj) -> bool:
        """Whether the controller changes the parent's children (attachments, outputs) now
        (Metacontroller's `ShouldFinalize`): while the parent lives, or while it is being
        deleted with this finalizer still on it, a finalize hook, and no garbage-collector
        finalizer. A parent whose finalizer was removed (another finalizer holds it) is left
        alone: its children are never created again."""
        if not is_deleting(parent):
            return True
        finalizers = metadata(parent).get("finalizers") or []
        if any(f in GC_FINALIZERS for f in finalizers):
            return False
        return self.enabled and self.name in finalizers

    def wanted(self, parent: Obj, mode: Mode) -> bool | None:
        """Before the hook's writes: True to add the finalizer, False to take it off, None to
        leave the parent's finalizers as they are (Metacontroller's `SyncObject`)."""
        ours = self.held_by(parent)
        if mode is Mode.REMOVE_FINALIZER or (mode is Mode.SYNC and not self.enabled):
            return False if ours else None
        if mode is Mode.SYNC and not ours and not is_deleting(parent):
            return True  # a parent being deleted never gets it (we may have taken it off)
        return None

    def applied(self, obj: Obj, add: bool) -> Obj:
        """A copy of `obj` with the finalizer added (last) or taken off."""
        after = json_copy(obj)
        current = [f for f in metadata(after).get("finalizers") or [] if f != self.name]
        after["metadata"]["finalizers"] = [*current, self.name] if add else current
        if not after["metadata"]["finalizers"]:
            del after["metadata"]["finalizers"]
        return after

    def sync(self, resource: ResourceInfo, parent: Obj, mode: Mode) -> list[Action]:
        """The write that puts the finalizer on or takes it off, before anything else."""
        add = self.wanted(parent, mode)
        if add is None:
            return []
        if add:
            kind, why = ActionKind.ADD_FINALIZER, "the controller has a finalize hook"
        else:
            kind, why = ActionKind.REMOVE_FINALIZER, "no finalize hook applies to this parent"
        return [Action(kind, resource, parent, self.applied(parent, add), why)]

    def release(
        self, resource: ResourceInfo, parent: Obj, mode: Mode, finalized: bool, base: Obj | None
    ) -> list[Action]:
        """After the finalize hook answered `finalized: true`: the finalizer's removal, from
        `base` (the parent as the earlier writes leave it) or the parent."""
        if mode is not Mode.FINALIZE or not finalized:
            return []
        after = self.applied(base if base is not None else parent, add=False)
        why = "the finalize hook answered finalized: true"
        return [Action(ActionKind.REMOVE_FINALIZER, resource, parent, after, why)]


# A kind without a finalizer (a MapController): its parents are synced while they live.
NO_FINALIZER = Finalizer("", enabled=False)

"""The loop guard: what keeps a run from fighting the cluster, or itself.

It remembers, across the passes of one run, the writes the server accepted: each update's
change (which fields, from what, to what), each object the run created (by uid) and each one it
deleted (by resource, namespace and name, with its controller). An object is not converging,
and left alone for the rest of the run, when

- the server accepts an update and keeps the object as it was (same resourceVersion);
- a later pass needs the same change again: the same fields to the same values, from the same
  starting values (a value that moves on, `0` then `1`, is a new change);
- a later pass deletes an object the run created, or creates again, under the same controller,
  one the run deleted (a Recreate's delete is followed by its create: that is not a loop)."""

from __future__ import annotations

import logging
import threading

from reconcile.engine.actions import RECREATE_REASON, Action, ActionKind
from reconcile.engine.changes import FieldChange, field_changes, fingerprint
from reconcile.engine.status import OBSERVED_GENERATION
from reconcile.objects.meta import Obj, controller_ref, identity, metadata, uid_of
from reconcile.records import dataclass
from reconcile.results import Divergence, NotConverging

log = logging.getLogger(__name__)

GuardKey = tuple[str, str, str, str]  # group/resource, namespace, name, verb
ObjectKey = tuple[str, str, str]  # group/resource, namespace, name
_GUARDED = (ActionKind.UPDATE, ActionKind.STATUS)
_RECREATE_VERB = "recreate"


@dataclass(frozen=True)
class Guarded:
    """An action as the guard saw it before it was sent: `held` says why it is not sent."""

    key: GuardKey
    changes: tuple[FieldChange, ...] = ()
    fingerprint: str | None = None  # updates only
    held: str = ""


class LoopGuard:
    """One per run (see the module's docstring). Thread-safe: parents are synced at once."""

    def __init__(self) -> None:
        self.not_converging: dict[GuardKey, NotConverging] = {}
        self._lock = threading.Lock()
        self._updates: dict[GuardKey, tuple[int, str]] = {}
        self._created: dict[str, tuple[int, ObjectKey, str]] = {}  # uid -> pass, key, resource
        self._deleted: dict[ObjectKey, tuple[int, str]] = {}  # -> pass, controller uid
        self._recreating: dict[ObjectKey, GuardKey] = {}  # objects left alone, creates/deletes

    def before(self, action: Action, pass_number: int) -> Guarded:
        """Whether `action` is sent, and what the guard keeps of it until `after`."""
        key = guard_key(action)
        if action.kind in (ActionKind.CREATE, ActionKind.DELETE):
            with self._lock:
                left = self._recreating.get(object_key(action)) or self._recreated(
                    action, pass_number
                )
            return Guarded(key, held=_left_alone(self.not_converging[left]) if left else "")
        if action.kind not in _GUARDED:
            return Guarded(key)
        assert action.after is not None and action.before is not None
        changes = tuple(_changes(action, action.before))
        guarded = Guarded(key, changes, fingerprint(list(changes)))
        if key in self.not_converging:
            return Guarded(key, changes, guarded.fingerprint, _left_alone(self.not_converging[key]))
        earlier = self._updates.get(key)
        if (
            not changes
            or earlier is None
            or earlier[0] == pass_number
            or earlier[1] != guarded.fingerprint
        ):
            return guarded
        stuck = self._diverged(key, action, Divergence.REVERTED, list(changes), pass_number)
        return Guarded(key, changes, guarded.fingerprint, _left_alone(stuck))

    def after(
        self, guarded: Guarded, action: Action, returned: Obj | None, pass_number: int
    ) -> bool:
        """Remember a write the server accepted; True when it was an update the server kept
        the object as it was (not a change)."""
        if action.kind is ActionKind.CREATE and returned is not None:
            with self._lock:
                resource = action.resource.group_resource
                self._created[uid_of(returned)] = (pass_number, object_key(action), resource)
        elif action.kind is ActionKind.DELETE and action.reason != RECREATE_REASON:
            with self._lock:
                self._deleted[object_key(action)] = (pass_number, _controller(action.before))
        if guarded.fingerprint is None:
            return False
        # only a change the server accepted can be "needed again" later
        self._updates[guarded.key] = (pass_number, guarded.fingerprint)
        return self._ignored(guarded.key, action, returned, pass_number)

    def _recreated(self, action: Action, pass_number: int) -> GuardKey | None:
        """A create of what an earlier pass deleted, or a delete of what it created (the lock
        held): the object is left alone, and the key it is reported under returned."""
        key = object_key(action)
        if action.kind is ActionKind.CREATE:
            deleted = self._deleted.get(key)
            if deleted is None or deleted[0] == pass_number:
                return None
            if deleted[1] != _controller(action.after):
                return None  # another parent's now: a move, not a loop
            detail = f"pass {deleted[0]} deleted it and pass {pass_number} creates it again"
            keys = [key]
        else:
            created = self._created.get(action.uid) if action.uid else None
            if created is None or created[0] == pass_number:
                return None
            detail = f"pass {created[0]} created it"
            if created[1] != key:
                detail += f" as {created[2]}"
            detail += f" and pass {pass_number} deletes it ({action.reason})"
            if created[1] != key:
                detail += f" as {action.resource.group_resource}"
            keys = [key, created[1]]
        stuck_key: GuardKey = (*key, _RECREATE_VERB)
        stuck = NotConverging(
            identity(action.target), Divergence.RECREATED, (), pass_number, detail
        )
        self.not_converging.setdefault(stuck_key, stuck)
        for each in keys:
            self._recreating.setdefault(each, stuck_key)
        log.error("%s", stuck.describe())
        return stuck_key

    def _ignored(
        self, key: GuardKey, action: Action, returned: Obj | None, pass_number: int
    ) -> bool:
        """Whether the server kept the object as it was (same resourceVersion)."""
        if returned is None or action.before is None:
            return False
        before = str(metadata(action.before).get("resourceVersion") or "")
        if not before or str(metadata(returned).get("resourceVersion") or "") != before:
            return False
        changes = _changes(action, returned)
        # reconcile's own observedGeneration, dropped by the parent's schema: not the hook's
        changes = [c for c in changes if c.path != f"status.{OBSERVED_GENERATION}"]
        if not changes:
            return False
        self._diverged(key, action, Divergence.IGNORED, changes, pass_number)
        return True

    def _diverged(
        self,
        key: GuardKey,
        action: Action,
        how: Divergence,
        changes: list[FieldChange],
        pass_number: int,
    ) -> NotConverging:
        stuck = NotConverging(identity(action.target), how, tuple(changes), pass_number)
        stuck = self.not_converging.setdefault(key, stuck)
        log.error("%s", stuck.describe())
        return stuck


def _changes(action: Action, kept: Obj) -> list[FieldChange]:
    """What the update changes against `kept`: the status for a status write; the rest, and
    the status too when the resource has no status subresource (it is written with them)."""
    assert action.after is not None
    status = action.kind is ActionKind.STATUS
    with_status = not status and not action.resource.has_status
    return field_changes(action.after, kept, status=status, with_status=with_status)


def _left_alone(stuck: NotConverging) -> str:
    return f"left alone: {stuck.object} does not converge (pass {stuck.pass_number})"


def _controller(obj: Obj | None) -> str:
    ref = controller_ref(obj) if obj is not None else None
    return str(ref.get("uid") or "") if ref is not None else ""


def object_key(action: Action) -> ObjectKey:
    return (action.resource.group_resource, action.namespace, action.name)


def guard_key(action: Action) -> GuardKey:
    return (*object_key(action), action.kind.verb)

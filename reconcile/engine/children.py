"""The children diff every controller kind shares: desired against observed objects of one owned
type, giving deletes, creates and updates by the type's update method, the waits a later pass
can finish, and the problems that stop the parent.

What differs between kinds is supplied by the caller: why a stale object is deleted, what stands
in the way of a create (an object of another controller, of another map key, being deleted), and
which observed objects are adopted orphans (only a CompositeController adopts). The order of the
result is the order of execution: ownership changes, deletes (Recreate's included), creates,
updates."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import field
from typing import Any, Generic, TypeVar

from reconcile.engine.actions import RECREATE_REASON, Action, ActionKind
from reconcile.engine.writes import UNCHANGED, ApplyStrategy
from reconcile.objects.meta import Obj, identity, is_deleting
from reconcile.objects.resource import ResourceInfo
from reconcile.records import dataclass
from reconcile.schemas.pruning import drops_any, pruned_object
from reconcile.specs.controller import OwnedRule, UpdateMethod

Rule_co = TypeVar("Rule_co", bound=OwnedRule, covariant=True)


@dataclass(frozen=True)
class OwnedType(Generic[Rule_co]):
    """A rule for objects a controller creates and owns (children, attachments, outputs),
    resolved through discovery."""

    rule: Rule_co
    resource: ResourceInfo
    # what the server keeps of these objects (`schemas.pruning`); None: everything
    schema: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def key(self) -> str:
        """`<Kind>.<apiVersion>`, as hook requests key these objects."""
        return self.resource.key


@dataclass(frozen=True)
class Blocked:
    """Why an object cannot be created on this pass: a wait (a later pass can), a problem (the
    parent is stopped), or neither (`quiet`: nothing to do and nothing to say)."""

    reason: str = ""
    wait: bool = False

    @property
    def quiet(self) -> bool:
        return not self.reason


QUIET = Blocked()


def wait(reason: str) -> Blocked:
    return Blocked(reason, wait=True)


def problem(reason: str) -> Blocked:
    return Blocked(reason, wait=False)


# What stands in the way of creating the desired object (an existing object the parent does not
# hold), or None when nothing does.
Occupant = Callable[[Obj], Blocked | None]


@dataclass(frozen=True)
class Dropped:
    """Fields of a desired object that its kind's schema has no place for: the server would
    drop them, so they are neither written nor compared."""

    resource: ResourceInfo
    paths: tuple[str, ...]


def kept_by_server(owned: OwnedType[OwnedRule], obj: Obj, into: list[Dropped]) -> Obj:
    """`obj` as the server keeps it under `owned`'s schema; what it drops goes to `into`."""
    if owned.schema is None or not drops_any(obj, owned.schema):
        return obj
    result, paths = pruned_object(obj, owned.schema)
    if not paths:
        return obj
    into.append(Dropped(owned.resource, tuple(paths)))
    return result


def _nothing(_: Obj) -> Blocked | None:
    return None


@dataclass
class ChildrenDiff:
    """Actions in execution order by phase, and what the parent waits for or is stopped by."""

    ownership: list[Action] = field(default_factory=list)
    deletes: list[Action] = field(default_factory=list)
    creates: list[Action] = field(default_factory=list)
    updates: list[Action] = field(default_factory=list)
    waits: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)

    @property
    def actions(self) -> list[Action]:
        return self.ownership + self.deletes + self.creates + self.updates


def diff_children(
    owned: OwnedType[OwnedRule],
    observed: Mapping[str, Obj],
    desired: Mapping[str, Obj],
    into: ChildrenDiff,
    *,
    strategy: ApplyStrategy,
    stale_reason: str,
    occupant: Occupant = _nothing,
    adopted: Mapping[str, Obj] | None = None,
    group: str = "",
) -> None:
    """Adds to `into` what makes the `observed` objects of one type the `desired` ones (both
    keyed alike, e.g. by namespace/name). `adopted` holds, by key, the orphans as they are
    before adoption (`observed` has them as adopted): an adopted object that needs no update is
    adopted by an ownership action."""
    adopted = adopted or {}
    resource, method = owned.resource, owned.rule.update_method
    for key, stale in observed.items():
        if key not in desired and not is_deleting(stale):
            shown = adopted.get(key, stale)
            into.deletes.append(
                Action(ActionKind.DELETE, resource, shown, None, stale_reason, group=group)
            )
    for key, wanted in desired.items():
        current = observed.get(key)
        # the steady case, told at once: nothing of it dropped by the server, nothing to update
        steady = (
            current is not None
            and not is_deleting(current)
            and strategy.kept_and_unchanged(current, wanted)
        )
        obj = wanted if steady else kept_by_server(owned, wanted, into.dropped)
        if current is None:
            blocked = occupant(obj)
            if blocked is None:
                into.creates.append(strategy.create(resource, obj, "desired, missing", group))
            elif not blocked.quiet:
                (into.waits if blocked.wait else into.problems).append(blocked.reason)
            continue
        if is_deleting(current):
            into.waits.append(f"{identity(current)} is being deleted before it is created again")
            continue
        before = adopted.get(key, current)
        reason = "adopted and differs from desired" if key in adopted else "differs from desired"
        if steady:
            update = UNCHANGED
        else:
            update = strategy.update(resource, current, obj, reason, before=before, group=group)
        if update.changed and method is UpdateMethod.IN_PLACE:
            into.updates += update.actions
        elif update.changed and method is UpdateMethod.RECREATE:
            into.deletes.append(
                Action(ActionKind.DELETE, resource, before, None, RECREATE_REASON, group=group)
            )
        else:  # unchanged, or a method that leaves the object to the user or to a rollout
            into.updates += update.upkeep
            if key in adopted:
                into.ownership.append(
                    Action(
                        ActionKind.ADOPT,
                        resource,
                        before,
                        current,
                        "an orphan matching the selector",
                        group=group,
                    )
                )

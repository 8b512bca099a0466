"""One parent's sync, as every controller kind describes it: pure pieces, no I/O.

`runner/controller_pass.py` drives each kind through the same steps, in this order:

1. resolve: the resources the controller names (`Named`), found by discovery (`Resolved`), and
   the kind's own checks of them (`ParentKind.bind`);
2. select: its parents in the pass's snapshot (`View`), each with its mode (`Selected`);
3. observe: what one parent's sync reads (its children, attachments, inputs, revisions);
4. hook requests (`HookRequest`): the customize hook's related objects first (`Customize`), then
   the kind's requests, all called on the pass's one pool and read by the kind's parsers;
5. respond: the answers as one response (`Response`: a rollout's revisions merged into one);
6. plan (`ParentPlan`): the actions, as data, that the pass executes (or only reports).

A kind is one subclass of `ParentKind` in its own package (`engine/composite`,
`engine/decorator`, `engine/map_controller`). The rules every kind shares for what it owns live
once: desired objects completed and checked (`engine/owned.py`), the children diff
(`engine/children.py`), finalizers (`engine/finalizers.py`) and the status write
(`engine/status.py`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from reconcile.engine.actions import Action
from reconcile.engine.children import Dropped, OwnedType
from reconcile.engine.finalizers import Mode
from reconcile.engine.rollout_summary import RolloutSummary
from reconcile.engine.writes import CLIENT_SIDE, ApplyStrategy
from reconcile.objects.meta import Obj
from reconcile.objects.resource import ResourceInfo
from reconcile.records import dataclass
from reconcile.specs.controller import OwnedRule
from reconcile.specs.hooks import HookSpec

C = TypeVar("C")
R = TypeVar("R", bound=OwnedRule)
T = TypeVar("T")
Seen = TypeVar("Seen")
Answer = TypeVar("Answer")
Answered = TypeVar("Answered", bound="Response")


class ControllerError(Exception):
    """The controller as a whole cannot run this pass (an unknown resource, a parent without
    the status subresource): its error is reported, and the other controllers go on."""


# -- resolve --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Named:
    """A resource a controller names, and where: `spec.childResources[0]`."""

    field: str
    api_version: str
    resource: str
    # objects the controller writes: the schema they are kept by is read, and no two such
    # resources of one controller may list the same objects
    owned: bool = False
    # a parent: its status is written through the status subresource, which it must have
    parent: bool = False
    # what an unknown resource means, said instead of the field (a CRD the feature needs)
    needed_for: str = ""


@dataclass(frozen=True)
class Resolved:
    """The named resources as discovery found them, by field; and for the owned ones, the
    schema their objects are kept by (None: everything is kept)."""

    found: Mapping[str, ResourceInfo]
    schemas: Mapping[str, Mapping[str, Any] | None] = field(default_factory=dict)

    def owned(self, named: Named, rule: R) -> OwnedType[R]:
        return OwnedType(rule, self.found[named.field], self.schemas.get(named.field))


def within_parent_scope(where: str, field: str, parent: ResourceInfo, owned: ResourceInfo) -> None:
    """A namespaced parent can own only namespaced objects (owner references cannot cross)."""
    if parent.namespaced and not owned.namespaced:
        raise ControllerError(
            f"{where}: {field}: {owned.group_resource} is cluster-scoped "
            f"and the parent {parent.group_resource} is namespaced"
        )


# -- select and observe ---------------------------------------------------------------------


class View(Protocol):
    """The pass's objects, each resource listed once and indexed (`runner/snapshot.py`)."""

    def objects(self, resource: ResourceInfo) -> list[Obj]: ...

    def in_namespace(self, resource: ResourceInfo, namespace: str | None) -> list[Obj]: ...

    def controlled_by(self, resource: ResourceInfo, owner_uid: str) -> list[Obj]: ...

    def claim_candidates(
        self, resource: ResourceInfo, owner_uid: str, namespace: str | None
    ) -> list[Obj]: ...

    def find(self, resource: ResourceInfo, namespace: str, name: str) -> Obj | None: ...


@dataclass(frozen=True)
class Selected:
    """A parent as its kind selected it: its resource, what the pass does with it
    (`finalizers.Mode`), and why it is not synced after all (reported on it, without an
    Event: nothing was tried), if it is not."""

    parent: Obj
    resource: ResourceInfo
    mode: Mode
    refused: str = ""


# Finds an existing object by (owned type key, namespace, name) in the pass's snapshot: for names
# a hook wants that the parent does not hold.
Lookup = Callable[[str, str, str], Obj | None]


def lookup_in(view: View, owned: Sequence[OwnedType[Any]]) -> Lookup:
    resources = {t.key: t.resource for t in owned}

    def lookup(key: str, namespace: str, name: str) -> Obj | None:
        return view.find(resources[key], namespace, name)

    return lookup


@dataclass(frozen=True)
class Facts:
    """What the pass knows of a parent's resource: how objects are written, whether its status
    gets observedGeneration (False once the run saw its schema drop it), and the schema its
    status is kept by (None: all of it)."""

    strategy: ApplyStrategy = CLIENT_SIDE
    stamp_generation: bool = True
    status_schema: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Context(Generic[C, R]):
    """One parent and what its sync is planned with: its controller, its resource, the types
    of object the controller owns under it (children, attachments, outputs), and the facts."""

    controller: C
    parent: Obj
    parent_resource: ResourceInfo
    owned: tuple[OwnedType[R], ...]
    strategy: ApplyStrategy = CLIENT_SIDE
    stamp_generation: bool = True
    status_schema: Mapping[str, Any] | None = None

    @property
    def namespaced(self) -> bool:
        return self.parent_resource.namespaced

    def owned_type(self, key: str) -> OwnedType[R] | None:
        """The owned type of `<Kind>.<apiVersion>`, None when the controller has none."""
        return next((t for t in self.owned if t.key == key), None)


# -- hook requests and the response ---------------------------------------------------------


@dataclass(frozen=True)
class HookRequest(Generic[T]):
    """One hook call: the request, and how its answer is read (ResponseError when unusable).
    `key`: "" for a call of the parent's own, whose failure stops the parent; a MapController's
    map key otherwise, whose failure is that key's alone. `what` names the call in its error."""

    hook: HookSpec
    body: dict[str, Any]
    parse: Callable[[Any], T]
    key: str = ""
    what: str = ""


@dataclass(frozen=True)
class Customize:
    """The customize hook's call for one parent (`{controller, parent}`, as in Metacontroller):
    its `relatedResources` are read from the snapshot and sent to the sync hook."""

    hook: HookSpec
    body: dict[str, Any]
    parent: Obj
    namespaced: bool


def customize(
    hook: HookSpec | None, controller: dict[str, Any], parent: Obj, namespaced: bool
) -> Customize | None:
    if hook is None:
        return None
    return Customize(hook, {"controller": controller, "parent": parent}, parent, namespaced)


class Response(Protocol):
    """What a parent's answers come to, as far as the pass reads it: the status the hook wants
    (for the report's notes of fields the schema drops) and when to sync again."""

    @property
    def status(self) -> Mapping[str, Any] | None: ...

    @property
    def resync_after(self) -> float | None: ...


# -- the plan -------------------------------------------------------------------------------


@dataclass
class Plan:
    """The actions for one parent, or for one part of it (a MapController's map key), in
    execution order; what it waits for (work a later pass can do once the cluster moves on);
    fields of its desired objects the server would not keep; and the problems that keep any of
    it from being written. `key` and `group` name a map key and its input (for reports)."""

    actions: list[Action] = field(default_factory=list)
    waits: list[str] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    key: str = ""
    group: str = ""


@dataclass
class ParentPlan:
    """What one parent's sync decided. Its plans are executed each in order, side by side
    (one plan for most kinds, one per map key for a MapController); `together`: a plan's
    creates, deletes and updates of different objects may be sent at once. `then` plans from
    what was done (a MapController's status counts what the pass made); `status` is what that
    later plan writes, for the report's notes."""

    plans: list[Plan]
    together: bool = False
    rollout: RolloutSummary | None = None
    status: Mapping[str, Any] | None = None
    then: Callable[[list[Action]], ParentPlan] | None = None

    @property
    def waits(self) -> list[str]:
        return [w for p in self.plans for w in p.waits]


# -- the kind -------------------------------------------------------------------------------


class ControllerSpec(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def resync_period(self) -> float | None: ...

    @property
    def raw(self) -> dict[str, Any]: ...

    @property
    def source(self) -> str: ...


S = TypeVar("S", bound=ControllerSpec)


class ParentKind(ABC, Generic[S, Seen, Answer, Answered]):
    """A controller kind's pieces of one pass over one controller, each free of I/O. `Seen`
    is what a parent's sync observed, `Answer` a parsed hook answer, `Answered` the answers
    as one response."""

    kind: ClassVar[str]  # "CompositeController", ...
    # whether its status writes carry observedGeneration (a DecoratorController's do not)
    stamps_generation: ClassVar[bool] = True

    def __init__(self, controller: S) -> None:
        self.controller = controller
        self.name = controller.name
        self.resync_period = controller.resync_period
        # the controller as read from the cluster (None: from a file): its own errors are
        # recorded there as Events
        self.controller_object = controller.raw if controller.source == "cluster" else None

    @property
    def where(self) -> str:
        return f"{self.kind} {self.name}"

    @abstractmethod
    def named(self) -> list[Named]:
        """The resources the controller names, in the order they are resolved."""

    @abstractmethod
    def bind(self, resolved: Resolved) -> None:
        """Keep what was resolved; ControllerError when the resources cannot go together."""

    @abstractmethod
    def select(self, view: View) -> list[Selected]:
        """This pass's parents, but those it has nothing to do with (the pass keeps its
        shard's)."""

    def mode_name(self, mode: Mode) -> str:
        """How the parent's result names what its sync does: sync, finalize..."""
        return mode.value

    @abstractmethod
    def observe(self, selected: Selected, view: View, facts: Facts) -> Seen:
        """What the parent's sync reads (ParentError: it stops here)."""

    def related(self, seen: Seen) -> Customize | None:
        """The customize hook's call, when the kind has one and the parent needs it."""
        return None

    @abstractmethod
    def requests(
        self, seen: Seen, related: Mapping[str, Mapping[str, Obj]]
    ) -> list[HookRequest[Answer]]: ...

    @abstractmethod
    def respond(self, seen: Seen, answers: Sequence[Answer | None]) -> Answered:
        """The answers (None for a map key whose call failed) as one response."""

    @abstractmethod
    def plan(self, seen: Seen, response: Answered) -> ParentPlan: ...

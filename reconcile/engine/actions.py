"""The plan: typed actions the engine decides and the runner executes (or only reports)."""

from __future__ import annotations

from enum import StrEnum

from reconcile.objects.meta import Obj, identity, name_of, namespace_of, uid_of
from reconcile.objects.resource import ResourceInfo
from reconcile.records import dataclass


class ActionKind(StrEnum):
    ADD_FINALIZER = "add-finalizer"
    ADOPT = "adopt"
    RELEASE = "release"
    DELETE = "delete"
    CREATE = "create"
    UPDATE = "update"
    STATUS = "status"
    REMOVE_FINALIZER = "remove-finalizer"

    @property
    def verb(self) -> str:
        """The API request this action sends."""
        if self is ActionKind.CREATE:
            return "create"
        if self is ActionKind.DELETE:
            return "delete"
        if self is ActionKind.STATUS:
            return "update-status"
        return "update"


#: Why a child whose update method is Recreate is deleted: the same words for every kind.
RECREATE_REASON = "Recreate: differs from desired; created again on a later pass"


@dataclass(frozen=True)
class Action:
    """One mutating request: `before` is the observed object (None for a create), `after` the
    object to send (None for a delete). `reason` says why, for reports."""

    kind: ActionKind
    resource: ResourceInfo
    before: Obj | None
    after: Obj | None
    reason: str
    # What the action is for within its parent, for reports (a MapController's input).
    group: str = ""
    # Set for server-side apply: the configuration the request sends (`after` is then the
    # object as it is expected to be afterwards).
    apply_config: Obj | None = None

    @property
    def target(self) -> Obj:
        obj = self.after if self.after is not None else self.before
        assert obj is not None, "an action has an object"
        return obj

    @property
    def name(self) -> str:
        return name_of(self.target)

    @property
    def namespace(self) -> str:
        return namespace_of(self.target)

    @property
    def uid(self) -> str:
        return uid_of(self.before) if self.before is not None else ""

    def describe(self) -> str:
        return f"{self.kind.value} {identity(self.target)}: {self.reason}"

"""How children are written: the client-side three-way merge (`apply.py`, the default, as
Metacontroller does it) or server-side apply (`server_apply.py`). Planners ask the strategy
for the actions of a create or an update and stay the same for both."""

from __future__ import annotations

from dataclasses import field

from reconcile.engine import apply, server_apply
from reconcile.engine.actions import Action, ActionKind
from reconcile.objects.meta import Obj
from reconcile.objects.resource import ResourceInfo
from reconcile.records import dataclass

MIGRATION_REASON = "moved to server-side apply (fields last applied client-side)"


@dataclass(frozen=True)
class Update:
    """`changed`: the object differs from desired, and `actions` are what an in-place update
    sends. `upkeep` is sent whatever the update method (a move to server-side apply)."""

    changed: bool
    actions: list[Action] = field(default_factory=list)
    upkeep: list[Action] = field(default_factory=list)


#: An update that changes nothing and sends nothing.
UNCHANGED = Update(changed=False)


@dataclass(frozen=True)
class ApplyStrategy:
    server_side: bool = False
    field_manager: str = server_apply.FIELD_MANAGER
    force_conflicts: bool = False

    def create(self, resource: ResourceInfo, desired: Obj, reason: str, group: str = "") -> Action:
        if not self.server_side:
            body = apply.prepare_desired(desired)
            return Action(ActionKind.CREATE, resource, None, body, reason, group=group)
        config = server_apply.apply_config(desired)
        return Action(
            ActionKind.CREATE, resource, None, config, reason, group=group, apply_config=config
        )

    def update(
        self,
        resource: ResourceInfo,
        observed: Obj,
        desired: Obj,
        reason: str,
        *,
        before: Obj | None = None,
        group: str = "",
    ) -> Update:
        """The update of `observed` to desired; `before` is what the report shows as the
        object before it (an orphan as adopted), `observed` by default."""
        before = observed if before is None else before
        if not self.server_side:
            merged = apply.update_for(observed, desired)
            if merged is None:
                return Update(changed=False)
            action = Action(ActionKind.UPDATE, resource, before, merged, reason, group=group)
            return Update(changed=True, actions=[action])
        plan = server_apply.plan(observed, desired, self.field_manager)
        upkeep: list[Action] = []
        if plan.migrated is not None:
            upkeep.append(
                Action(
                    ActionKind.UPDATE,
                    resource,
                    before,
                    plan.migrated,
                    MIGRATION_REASON,
                    group=group,
                )
            )
            before = plan.migrated
        if plan.predicted is None:
            return Update(changed=False, upkeep=upkeep)
        action = Action(
            ActionKind.UPDATE,
            resource,
            before,
            plan.predicted,
            reason,
            group=group,
            apply_config=plan.config,
        )
        return Update(changed=True, actions=[*upkeep, action], upkeep=upkeep)

    def kept_and_unchanged(self, observed: Obj, desired: Obj) -> bool:
        """True only when an update of `observed` to desired would send nothing and the server
        keeps every field of desired (`apply.kept_and_unchanged`); False when unsure, and
        always under server-side apply, whose fields are compared by their managers."""
        return not self.server_side and apply.kept_and_unchanged(observed, desired)

    def up_to_date(self, observed: Obj, desired: Obj) -> bool:
        """Whether `observed` already is what desired asks for (no update would be sent)."""
        if not self.server_side:
            return apply.update_for(observed, desired) is None
        return server_apply.plan(observed, desired, self.field_manager).predicted is None


CLIENT_SIDE = ApplyStrategy()

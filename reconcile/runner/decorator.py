"""One pass of one DecoratorController: resolve its resources, then sync every target."""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from reconcile.engine.decorator import (
    AttachmentType,
    finalizing,
    is_attachment,
    parse_response,
    plan_target,
    sync_request,
)
from reconcile.engine.related import parse_customize_response
from reconcile.objects.meta import Obj, identity, uid_of
from reconcile.objects.resource import ResourceInfo
from reconcile.results import ParentResult
from reconcile.runner.controller_pass import ControllerKind, PassEnv
from reconcile.runner.hookcall import call_hook
from reconcile.runner.overlaps import refuse_shared_objects
from reconcile.runner.related import related_objects
from reconcile.runner.resolving import ControllerError
from reconcile.specs.decorator import DecoratorController
from reconcile.specs.hooks import HookSpec


@dataclass(frozen=True)
class TargetWork:
    resource: ResourceInfo
    target: Obj
    matches: bool  # whether the selectors match it (else it is only finalized)


class DecoratorKind(ControllerKind[TargetWork]):
    """A DecoratorController's part of a pass: its targets (its parents), each synced through
    its sync or finalize hook."""

    kind = "DecoratorController"

    def __init__(self, env: PassEnv, controller: DecoratorController) -> None:
        from_cluster = controller.raw if controller.source == "cluster" else None
        super().__init__(env, controller.name, controller.resync_period, from_cluster)
        self.controller = controller
        self.snapshot, self.executor = env.snapshot, env.executor

    def prepare(self, scope: ExitStack) -> list[TargetWork]:
        controller, cluster = self.controller, self.env.cluster
        rules = [
            (rule, cluster.discover(rule.api_version, rule.resource))
            for rule in controller.resources
        ]
        self.types = list(
            self.env.with_schemas(
                [
                    AttachmentType(rule, cluster.discover(rule.api_version, rule.resource))
                    for rule in controller.attachments
                ]
            )
        )
        attachments = [t.resource for t in self.types]
        refuse_shared_objects(self.where, "spec.attachments", attachments, self.snapshot)
        if any(not t.resource.namespaced for t in self.types) and any(
            r.namespaced for _, r in rules
        ):
            raise ControllerError(
                f"{self.where}: spec.attachments: a namespaced target cannot have "
                "cluster-scoped attachments"
            )
        # A target matches when any rule of its resource matches it; each is synced once.
        matched: dict[str, TargetWork] = {}
        for rule, resource in rules:
            for obj in self.snapshot.objects(resource):
                seen = matched.get(uid_of(obj))
                matches = rule.matches(obj) or (seen is not None and seen.matches)
                matched[uid_of(obj)] = TargetWork(resource, obj, matches)
        return [
            work
            for work in matched.values()
            if (work.matches or finalizing(controller, work.target, work.matches))
            and self.env.shard.owns(work.target)
        ]

    def parent(self, work: TargetWork) -> Obj:
        return work.target

    def _finalizing(self, work: TargetWork) -> bool:
        return finalizing(self.controller, work.target, work.matches)

    def begin(self, work: TargetWork) -> ParentResult:
        finalize = self._finalizing(work) and self.controller.hooks.finalize is not None
        return ParentResult(self.name, identity(work.target), "finalize" if finalize else "sync")

    def sync(self, work: TargetWork, result: ParentResult) -> None:
        controller, target, resource = self.controller, work.target, work.resource
        finalize = self._finalizing(work)
        hook = (controller.hooks.finalize if finalize else None) or controller.hooks.sync
        observed = {
            kind.key: [
                obj
                for obj in self.snapshot.controlled_by(kind.resource, uid_of(target))
                if is_attachment(controller, target, obj)
            ]
            for kind in self.types
        }
        related = self._related(controller, target, resource.namespaced, result)
        request = sync_request(
            controller,
            target,
            resource.namespaced,
            observed,
            related,
            finalizing=finalize,
            uniform=hook.uniform_keys,
        )
        response = parse_response(self._call(hook, request, result), hook.name, strict=hook.strict)
        result.resync_after = response.resync_after
        plan = plan_target(
            controller,
            resource,
            target,
            self.types,
            observed,
            response,
            finalizing=finalize,
            strategy=self.executor.strategy,
            status_schema=self.env.kind_schema(resource),
        )
        if response.status is not None:
            self.env.note_dropped_status(resource, self.name, response.status)
        self.env.note_dropped_fields(self.name, plan.dropped)
        result.waits += plan.waits
        self.executor.execute(plan.actions, result.actions)

    def _related(
        self, controller: DecoratorController, target: Obj, namespaced: bool, result: ParentResult
    ) -> dict[str, dict[str, Obj]]:
        """The customize hook's related objects (`{controller, parent}` as in Metacontroller)."""
        hook = controller.hooks.customize
        if hook is None:
            return {}
        request = {"controller": controller.raw, "parent": target}
        rules = parse_customize_response(self._call(hook, request, result), strict=hook.strict)
        return related_objects(
            self.env.cluster, self.snapshot, rules, target, namespaced, uniform=hook.uniform_keys
        )

    def _call(self, hook: HookSpec, request: dict[str, Any], result: ParentResult) -> Any:
        return call_hook(self.env.hooks, hook, request, result)

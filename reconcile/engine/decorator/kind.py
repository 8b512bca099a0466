"""A DecoratorController's pieces of a pass (`engine/flow.py`), in the order the pass takes
them: its resources (the targets' rules and the attachments); its targets (its parents), each
with its mode (`finalizers.py`); one target's attachments; its sync (or finalize) hook; and
the plan (`plan.plan_target`)."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

from reconcile.engine.decorator.plan import TargetContext, finalizer, plan_target
from reconcile.engine.decorator.response import (
    DecoratorResponse,
    is_attachment,
    parse_response,
    sync_request,
)
from reconcile.engine.finalizers import Mode
from reconcile.engine.flow import (
    Context,
    ControllerError,
    Customize,
    Facts,
    HookRequest,
    Named,
    ParentKind,
    ParentPlan,
    Plan,
    Resolved,
    Selected,
    View,
    customize,
)
from reconcile.objects.meta import Obj, uid_of
from reconcile.objects.resource import ResourceInfo
from reconcile.records import dataclass
from reconcile.specs.decorator import DecoratorController


@dataclass(frozen=True)
class Seen:
    ctx: TargetContext
    mode: Mode
    attachments: Mapping[str, list[Obj]]  # by attachment type key


class DecoratorKind(ParentKind[DecoratorController, Seen, DecoratorResponse, DecoratorResponse]):
    """A DecoratorController's targets, each synced through its sync or finalize hook."""

    kind = "DecoratorController"
    stamps_generation = False  # Metacontroller's decorator adds no observedGeneration

    def named(self) -> list[Named]:
        controller = self.controller
        return [
            Named(f"spec.resources[{i}]", rule.api_version, rule.resource)
            for i, rule in enumerate(controller.resources)
        ] + [
            Named(f"spec.attachments[{i}]", rule.api_version, rule.resource, owned=True)
            for i, rule in enumerate(controller.attachments)
        ]

    def bind(self, resolved: Resolved) -> None:
        named, rules = self.named(), self.controller.resources
        targets, attachments = named[: len(rules)], named[len(rules) :]
        self.rules = [
            (rule, resolved.found[n.field]) for n, rule in zip(targets, rules, strict=True)
        ]
        self.types = tuple(
            resolved.owned(n, rule)
            for n, rule in zip(attachments, self.controller.attachments, strict=True)
        )
        if any(not t.resource.namespaced for t in self.types) and any(
            resource.namespaced for _, resource in self.rules
        ):
            raise ControllerError(
                f"{self.where}: spec.attachments: a namespaced target cannot have "
                "cluster-scoped attachments"
            )

    def select(self, view: View) -> list[Selected]:
        """A target is selected when any rule of its resource selects it; each is synced once,
        and one no rule selects only while it carries the decorator's finalizer."""
        found: dict[str, tuple[ResourceInfo, Obj, bool]] = {}
        for rule, resource in self.rules:
            for obj in view.objects(resource):
                seen = found.get(uid_of(obj))
                matches = rule.matches(obj) or (seen is not None and seen[2])
                found[uid_of(obj)] = (resource, obj, matches)
        ours = finalizer(self.controller)
        targets = [Selected(obj, r, ours.mode(obj, matches)) for r, obj, matches in found.values()]
        return [t for t in targets if t.mode is not Mode.SKIP]

    def observe(self, selected: Selected, view: View, facts: Facts) -> Seen:
        target = selected.parent
        # the class itself: a call through the generic alias costs as much again
        ctx: TargetContext = Context(
            self.controller,
            target,
            selected.resource,
            self.types,
            facts.strategy,
            stamp_generation=False,
            status_schema=facts.status_schema,
        )
        attachments = {
            t.key: [
                obj
                for obj in view.controlled_by(t.resource, uid_of(target))
                if is_attachment(self.controller, target, obj)
            ]
            for t in self.types
        }
        return Seen(ctx, selected.mode, attachments)

    def related(self, seen: Seen) -> Customize | None:
        if seen.mode is Mode.REMOVE_FINALIZER:
            return None
        hook = self.controller.hooks.customize
        return customize(hook, self.controller.raw, seen.ctx.parent, seen.ctx.namespaced)

    def requests(
        self, seen: Seen, related: Mapping[str, Mapping[str, Obj]]
    ) -> list[HookRequest[DecoratorResponse]]:
        if seen.mode is Mode.REMOVE_FINALIZER:
            return []
        finalizing = seen.mode is Mode.FINALIZE
        hooks = self.controller.hooks
        hook = (hooks.finalize if finalizing else None) or hooks.sync
        body = sync_request(
            self.controller,
            seen.ctx.parent,
            seen.ctx.namespaced,
            seen.attachments,
            related,
            finalizing=finalizing,
            uniform=hook.uniform_keys,
        )
        parse = functools.partial(parse_response, hook=hook.name, strict=hook.strict)
        return [HookRequest(hook, body, parse)]

    def respond(self, seen: Seen, answers: Sequence[DecoratorResponse | None]) -> DecoratorResponse:
        return next((a for a in answers if a is not None), DecoratorResponse())

    def plan(self, seen: Seen, response: DecoratorResponse) -> ParentPlan:
        ctx = seen.ctx
        if seen.mode is Mode.REMOVE_FINALIZER:
            ours = finalizer(self.controller)
            return ParentPlan([Plan(ours.sync(ctx.parent_resource, ctx.parent, seen.mode))])
        return ParentPlan([plan_target(ctx, seen.attachments, response, seen.mode)])

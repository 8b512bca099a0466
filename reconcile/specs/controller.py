"""What every metacontroller.k8s.io controller spec shares: its name and where it came from, the
rule lists that may not repeat a resource, and the hooks."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Any, Protocol

from reconcile.records import dataclass
from reconcile.specs.fields import Fields
from reconcile.specs.hooks import HookSpec
from reconcile.specs.hooks_parse import optional_hook
from reconcile.specs.webhook_security import parse_endpoint_configs


class UpdateMethod(StrEnum):
    ON_DELETE = "OnDelete"
    RECREATE = "Recreate"
    IN_PLACE = "InPlace"
    ROLLING_RECREATE = "RollingRecreate"
    ROLLING_IN_PLACE = "RollingInPlace"

    @property
    def rolling(self) -> bool:
        return self in (UpdateMethod.ROLLING_RECREATE, UpdateMethod.ROLLING_IN_PLACE)


NON_ROLLING_METHODS = (UpdateMethod.ON_DELETE, UpdateMethod.RECREATE, UpdateMethod.IN_PLACE)


@dataclass(frozen=True)
class OwnedRule:
    """Objects of one resource that a controller creates and owns (a decorator's attachments,
    a map's outputs, a composite's children), and how they are updated."""

    api_version: str
    resource: str
    update_method: UpdateMethod = UpdateMethod.ON_DELETE


# Without a rollout (a DecoratorController's attachments), Metacontroller's manage_children
# updates RollingRecreate children as Recreate and RollingInPlace ones as InPlace.
ROLLING_AS_PLAIN = {
    UpdateMethod.ROLLING_RECREATE.value: UpdateMethod.RECREATE.value,
    UpdateMethod.ROLLING_IN_PLACE.value: UpdateMethod.IN_PLACE.value,
}


def owned_rule(fields: Fields, *, rolling_as_plain: bool = False) -> OwnedRule:
    """`{apiVersion, resource, updateStrategy: {method}}`; SpecError naming the field.
    `rolling_as_plain`: a Rolling* method is read as its plain form (ROLLING_AS_PLAIN)."""
    fields.check_keys({"apiVersion", "resource", "updateStrategy"})
    strategy = fields.child("updateStrategy")
    strategy.check_keys({"method"})
    text = strategy.string("method", UpdateMethod.ON_DELETE.value)
    if rolling_as_plain:
        text = ROLLING_AS_PLAIN.get(text, text)
    if text not in {m.value for m in NON_ROLLING_METHODS}:
        choices = ", ".join(m.value for m in NON_ROLLING_METHODS)
        raise strategy.error("method", f"{text!r} is not one of {choices}")
    return OwnedRule(
        api_version=fields.string("apiVersion"),
        resource=fields.string("resource"),
        update_method=UpdateMethod(text),
    )


SELECTOR_FIELDS = frozenset({"matchLabels", "matchExpressions"})
EXPRESSION_FIELDS = frozenset({"key", "operator", "values"})


def check_selector_keys(fields: Fields, key: str, known: frozenset[str] = SELECTOR_FIELDS) -> None:
    """The fields of the selector at `key` and of its `matchExpressions` items, checked as
    every other level is (`matchLabel` refused as a misspelling, not read as no selector);
    what is not an object is left to the selector's reader to name."""
    if not isinstance(fields.data.get(key), dict):
        return
    selector = fields.child(key)
    selector.check_keys(set(known))
    expressions = selector.data.get("matchExpressions")
    if not isinstance(expressions, list):
        return
    where = selector.at("matchExpressions")
    for i, item in enumerate(expressions):
        if isinstance(item, dict):
            Fields(fields.where, f"{where}[{i}]", item, fields.notes).check_keys(
                set(EXPRESSION_FIELDS)
            )


class _Rule(Protocol):
    @property
    def api_version(self) -> str: ...

    @property
    def resource(self) -> str: ...


def controller_spec(obj: dict[str, Any], kind: str, source: str) -> tuple[str, str, Fields]:
    """(name, how errors name the controller, its `spec` fields); SpecError without a name."""
    name = str((obj.get("metadata") or {}).get("name") or "")
    where = f"{kind} {name or '(unnamed)'}"
    if source != "cluster":
        where += f" ({source})"
    root = Fields(where, "", obj)
    if not name:
        raise root.error("metadata.name", "is required")
    return name, where, root.child("spec")


def no_repeats(spec: Fields, field: str, rules: Sequence[_Rule]) -> None:
    """SpecError when a list names the same resource of the same apiVersion twice."""
    seen: dict[tuple[str, str], int] = {}
    for i, rule in enumerate(rules):
        key = (rule.api_version, rule.resource)
        if key in seen:
            raise spec.error(
                f"{field}[{i}]",
                f"{rule.resource} ({rule.api_version}) is already listed at {field}[{seen[key]}]",
            )
        seen[key] = i


# Hooks in Metacontroller's CompositeController schema that no release of it calls.
CHILD_UPDATE_HOOKS = {
    hook: "no Metacontroller release calls it, and reconcile does not either"
    for hook in ("preUpdateChild", "postUpdateChild")
}


def controller_hooks(
    spec: Fields, where: str, base_dir: str | None
) -> tuple[HookSpec, HookSpec | None, HookSpec | None]:
    """(sync, finalize, customize), each webhook with its host's `endpointConfigs` settings;
    SpecError without a sync hook."""
    hooks = spec.child("hooks")
    hooks.check_keys({"sync", "finalize", "customize"}, ignored=CHILD_UPDATE_HOOKS)
    configs = parse_endpoint_configs(spec)
    sync = optional_hook(hooks, "sync", where, base_dir, configs)
    if sync is None:
        raise hooks.error("sync", "is required")
    return (
        sync,
        optional_hook(hooks, "finalize", where, base_dir, configs),
        optional_hook(hooks, "customize", where, base_dir, configs),
    )

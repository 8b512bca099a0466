"""Every field of Metacontroller's CompositeController and DecoratorController CRDs (vendored
in tests/data/metacontroller) is accepted with its meaning (never as an unknown field), ignored
with a warning naming it where Metacontroller does nothing with it either, or refused naming
the field and saying it is not supported: none is dropped in silence. And a controller as
Metacontroller's CRDs store it (`version: v1` defaulted on every hook) is read."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconcile.specs.composite import parse_composite_controller
from reconcile.specs.decorator import parse_decorator_controller
from reconcile.specs.errors import SpecError
from reconcile.specs.fields import IGNORED
from reconcile.specs.hooks import HookVersion

CRDS = Path(__file__).resolve().parents[1] / "data/metacontroller/metacontroller-crds-v1.yaml"
WEBHOOK = {"url": "http://hook.example/sync"}
EXPRESSION = {"key": "app", "operator": "In", "values": ["a"]}
HOOKS = {name: {"webhook": dict(WEBHOOK)} for name in ("sync", "finalize", "customize")}

BASES: dict[str, dict[str, Any]] = {
    "CompositeController": {
        "parentResource": {
            "apiVersion": "example.com/v1",
            "resource": "widgets",
            "labelSelector": {"matchExpressions": [dict(EXPRESSION)]},
        },
        "childResources": [
            {
                "apiVersion": "v1",
                "resource": "configmaps",
                "updateStrategy": {"statusChecks": {"conditions": [{"type": "Ready"}]}},
            }
        ],
        "hooks": HOOKS,
    },
    "DecoratorController": {
        "resources": [
            {
                "apiVersion": "apps/v1",
                "resource": "deployments",
                "labelSelector": {"matchExpressions": [dict(EXPRESSION)]},
                "annotationSelector": {"matchExpressions": [dict(EXPRESSION)]},
            }
        ],
        "attachments": [{"apiVersion": "v1", "resource": "configmaps"}],
        "hooks": HOOKS,
    },
}
PARSERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "CompositeController": parse_composite_controller,
    "DecoratorController": parse_decorator_controller,
}
# Values a Metacontroller user would write, for fields whose type alone does not make one.
SAMPLES: dict[str, Any] = {
    "timeout": "5s",
    "url": "http://hook.example/sync",
    "path": "/sync",
    "port": 8080,
    "protocol": "http",
    "fieldPaths": ["spec.template"],
    "operator": "In",
    "values": ["a"],
    "key": "app",
    "matchLabels": {"app": "web"},
    "matchAnnotations": {"team": "a"},
    "resource": "secrets",
    "apiVersion": "v1",
    "cacheTimeoutSeconds": 60,
    "cacheCleanupSeconds": 300,
    "resyncPeriodSeconds": 30,
    "type": "Ready",
}


def _schema_paths(
    schema: dict[str, Any], path: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
    properties = schema.get("properties") or {}
    items = schema.get("items")
    if not properties and not (isinstance(items, dict) and items.get("properties")):
        yield path, schema
    for name, sub in properties.items():
        yield from _schema_paths(sub, (*path, name))
    if isinstance(items, dict) and items.get("properties"):
        yield from _schema_paths(items, (*path, "[]"))


def leaf_fields() -> list[tuple[str, tuple[str, ...], dict[str, Any]]]:
    found = []
    for crd in yaml.safe_load_all(CRDS.read_text()):
        if not crd or crd["spec"]["names"]["kind"] not in BASES:
            continue
        kind = crd["spec"]["names"]["kind"]
        spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        found += [(kind, path, schema) for path, schema in _schema_paths(spec, ())]
    return found


def sample(name: str, schema: dict[str, Any]) -> Any:
    if "enum" in schema:
        return schema["enum"][-1]
    if name in SAMPLES:
        return SAMPLES[name]
    return {"string": "x", "integer": 1, "boolean": True, "object": {}, "array": []}[
        schema.get("type", "object")
    ]


def with_field(base: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    spec = copy.deepcopy(base)
    node: Any = spec
    for i, step in enumerate(path[:-1]):
        nxt = path[i + 1]
        if step == "[]":
            continue
        if step not in node or node[step] is None:
            node[step] = [] if nxt == "[]" else {}
        if nxt == "[]":
            if not node[step]:
                node[step].append({})
            node = node[step][0]
        else:
            node = node[step]
    node[path[-1]] = value
    return spec


def dotted(path: tuple[str, ...]) -> str:
    return ".".join(path).replace(".[]", "[0]")


FIELDS = leaf_fields()
SECRET = {"name": "hook-credentials", "namespace": "hooks"}
BLOCKS: dict[str, Any] = {
    "caBundle": {
        "inline": {"inline": "-----BEGIN CERTIFICATE-----"},
        "secretRef": {"secretRef": {**SECRET, "key": "ca.crt"}},
        "configMapRef": {"configMapRef": {**SECRET, "key": "ca.crt"}},
    },
    "authorization": {"type": "Bearer", "secretRef": {**SECRET, "key": "token"}},
    "basicAuth": {"secretRef": SECRET, "usernameKey": "user", "passwordKey": "pass"},
    "clientTLS": {"secretRef": SECRET, "certKey": "tls.crt", "privateKeyKey": "tls.key"},
    "endpointConfigs": None,  # an entry holding the block the path goes on to
}


def complete_block(path: tuple[str, ...], at: int) -> Any:
    """The block at `path[at]` written whole, so that the field set is valid on its own."""
    name = path[at]
    if name == "endpointConfigs":
        entry: dict[str, Any] = {"host": "hook.example"}
        inner = at + 2  # endpointConfigs, [], <block>
        if inner < len(path) and path[inner] in BLOCKS:
            entry[path[inner]] = complete_block(path, inner)
        return [entry]
    if name == "caBundle":
        source = path[at + 1] if at + 1 < len(path) else "inline"
        return copy.deepcopy(BLOCKS["caBundle"][source])
    return copy.deepcopy(BLOCKS[name])


def test_the_vendored_crds_hold_the_fields_a_switching_user_meets() -> None:
    paths = {dotted(p) for _, p, _ in FIELDS}
    assert "hooks.sync.version" in paths
    assert "hooks.sync.webhook.caBundle.secretRef.key" in paths
    assert len(FIELDS) > 100


@pytest.mark.parametrize(
    ("kind", "path", "schema"), FIELDS, ids=[f"{k}.{dotted(p)}" for k, p, _ in FIELDS]
)
def test_every_metacontroller_field_is_accepted_or_refused_by_name(
    kind: str, path: tuple[str, ...], schema: dict[str, Any]
) -> None:
    block = next((n for n in range(len(path)) if path[n] in BLOCKS), None)
    if block is None:
        spec = with_field(BASES[kind], path, sample(path[-1], schema))
    else:  # a TLS or authentication setting: the whole block, as a user writes it
        spec = with_field(BASES[kind], path[: block + 1], complete_block(path, block))
    obj = {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": kind,
        "metadata": {"name": "fields"},
        "spec": spec,
    }
    named = [dotted(path[:n]) for n in range(len(path), 0, -1)]
    try:
        parsed = PARSERS[kind](obj)
    except SpecError as exc:
        message = str(exc)
        assert "not supported" in message, message
        assert any(f"spec.{name}:" in message for name in named), message
        return
    # read with its meaning: never as a field Metacontroller would not know
    for warning in parsed.warnings:
        assert IGNORED not in warning, warning
        assert any(f"spec.{name}: ignored: " in warning for name in named), warning


def stored_by_metacontroller(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    """The object as Metacontroller's CRD defaults store it: `version: v1` on every hook."""
    stored = copy.deepcopy(spec)
    for hook in stored["hooks"].values():
        hook.setdefault("version", "v1")
    return {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": kind,
        "metadata": {"name": "stored"},
        "spec": stored,
    }


@pytest.mark.parametrize("kind", sorted(BASES))
def test_a_controller_as_metacontrollers_crds_store_it_is_read(kind: str) -> None:
    spec = copy.deepcopy(BASES[kind])
    controller = PARSERS[kind](stored_by_metacontroller(kind, spec))
    for hook in (controller.hooks.sync, controller.hooks.finalize, controller.hooks.customize):
        assert hook.version is HookVersion.V1
        assert not hook.strict and not hook.uniform_keys


@pytest.mark.parametrize(
    ("hook", "version", "strict"),
    [
        ({}, HookVersion.V1, False),
        ({"version": "v1"}, HookVersion.V1, False),
        ({"version": "v2"}, HookVersion.V2, True),
        ({"version": "v2", "mode": "loose"}, HookVersion.V2, False),
        ({"version": "v1", "mode": "strict"}, HookVersion.V1, True),
    ],
)
def test_the_version_sets_the_keys_and_the_default_strictness(
    hook: dict[str, str], version: HookVersion, strict: bool
) -> None:
    spec = copy.deepcopy(BASES["CompositeController"])
    sync = spec["hooks"]["sync"]
    if "version" in hook:
        sync["version"] = hook["version"]
    if "mode" in hook:
        sync["webhook"]["responseUnMarshallMode"] = hook["mode"]
    parsed = parse_composite_controller(stored_by_metacontroller("CompositeController", spec))
    assert parsed.hooks.sync.version is version
    assert parsed.hooks.sync.strict is strict
    assert parsed.hooks.sync.uniform_keys is (version is HookVersion.V2)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("version", "v3", "spec.hooks.sync.version: must be v1 or v2, not 'v3'"),
        (
            "webhook.responseUnMarshallMode",
            "lenient",
            "spec.hooks.sync.webhook.responseUnMarshallMode: must be loose or strict",
        ),
    ],
)
def test_a_bad_version_or_mode_is_refused_by_name(field: str, value: str, message: str) -> None:
    spec = copy.deepcopy(BASES["CompositeController"])
    node = spec["hooks"]["sync"]
    *parents, last = field.split(".")
    for step in parents:
        node = node[step]
    node[last] = value
    with pytest.raises(SpecError, match=message.replace("(", r"\(")):
        parse_composite_controller(stored_by_metacontroller("CompositeController", spec))


@pytest.mark.parametrize(
    ("method", "means"), [("RollingInPlace", "InPlace"), ("RollingRecreate", "Recreate")]
)
def test_a_rolling_method_on_an_attachment_updates_as_metacontroller_does(
    method: str, means: str
) -> None:
    """No rollout for attachments: Metacontroller's manage_children updates them plainly."""
    spec = copy.deepcopy(BASES["DecoratorController"])
    spec["attachments"][0]["updateStrategy"] = {"method": method}
    parsed = parse_decorator_controller(stored_by_metacontroller("DecoratorController", spec))
    assert parsed.attachments[0].update_method.value == means


def test_a_selector_error_names_its_field_once() -> None:
    spec = copy.deepcopy(BASES["DecoratorController"])
    spec["resources"][0]["annotationSelector"]["matchExpressions"][0]["operator"] = "Near"
    with pytest.raises(SpecError) as raised:
        parse_decorator_controller(stored_by_metacontroller("DecoratorController", spec))
    assert raised.value.field == "spec.resources[0].annotationSelector.matchExpressions[0].operator"
    assert str(raised.value).count("annotationSelector") == 1

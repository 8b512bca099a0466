"""Fields a controller spec does not know, as Metacontroller's decoder treats them: ignored, but
named in a warning, never in silence; and a near miss of a field that is read (`childResource`
for `childResources`) refused as the misspelling it most likely is, naming the field meant. The
same rule at every level of all three kinds."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconcile.cluster.memory import MemoryCluster
from reconcile.runner.sources import load_controllers
from reconcile.specs.composite import parse_composite_controller
from reconcile.specs.decorator import parse_decorator_controller
from reconcile.specs.errors import SpecError
from reconcile.specs.fields import IGNORED, near_miss
from reconcile.specs.map_controller import parse_map_controller

WEBHOOK = {"url": "http://hook.example/sync"}
SPECS: dict[str, dict[str, Any]] = {
    "CompositeController": {
        "parentResource": {
            "apiVersion": "example.com/v1",
            "resource": "widgets",
            "labelSelector": {"matchExpressions": [{"key": "a", "operator": "Exists"}]},
        },
        "childResources": [
            {"apiVersion": "v1", "resource": "configmaps", "updateStrategy": {"method": "InPlace"}}
        ],
        "hooks": {"sync": {"webhook": dict(WEBHOOK)}},
    },
    "DecoratorController": {
        "resources": [
            {
                "apiVersion": "apps/v1",
                "resource": "deployments",
                "labelSelector": {"matchLabels": {"app": "web"}},
                "annotationSelector": {"matchAnnotations": {"team": "a"}},
            }
        ],
        "attachments": [{"apiVersion": "v1", "resource": "configmaps"}],
        "hooks": {"sync": {"webhook": dict(WEBHOOK)}},
    },
    "MapController": {
        "parentResource": {"apiVersion": "example.com/v1", "resource": "schedules"},
        "inputResources": [{"apiVersion": "v1", "resource": "persistentvolumeclaims"}],
        "outputResources": [{"apiVersion": "v1", "resource": "configmaps"}],
        "hooks": {"map": {"webhook": dict(WEBHOOK)}},
    },
}
PARSERS: dict[str, Callable[..., Any]] = {
    "CompositeController": parse_composite_controller,
    "DecoratorController": parse_decorator_controller,
    "MapController": parse_map_controller,
}


def controller(kind: str, path: str, value: Any, name: str = "fields") -> dict[str, Any]:
    """The kind's valid spec with `value` set at the dotted `path` (`[0]` steps into lists)."""
    spec = copy.deepcopy(SPECS[kind])
    node: Any = spec
    steps = path.replace("[", ".[").split(".")[1:]  # past `spec`
    for step in steps[:-1]:
        node = node[int(step[1:-1])] if step.startswith("[") else node.setdefault(step, {})
    node[steps[-1]] = value
    return {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": kind,
        "metadata": {"name": name},
        "spec": spec,
    }


# (kind, path): a field no kind knows, at each level the parsers read
FAR: list[tuple[str, str]] = [
    ("CompositeController", "spec.clientConfig"),
    ("CompositeController", "spec.parentResource.kind"),
    ("CompositeController", "spec.parentResource.labelSelector.nodeSelector"),
    ("CompositeController", "spec.parentResource.labelSelector.matchExpressions[0].weight"),
    ("CompositeController", "spec.parentResource.revisionHistory.limit"),
    ("CompositeController", "spec.childResources[0].kind"),
    ("CompositeController", "spec.childResources[0].updateStrategy.maxUnavailable"),
    ("CompositeController", "spec.hooks.prepare"),
    ("CompositeController", "spec.hooks.sync.retries"),
    ("CompositeController", "spec.hooks.sync.webhook.method"),
    ("DecoratorController", "spec.clientConfig"),
    ("DecoratorController", "spec.resources[0].kind"),
    ("DecoratorController", "spec.resources[0].annotationSelector.comment"),
    ("DecoratorController", "spec.attachments[0].updateStrategy.maxUnavailable"),
    ("DecoratorController", "spec.hooks.sync.webhook.method"),
    ("MapController", "spec.clientConfig"),
    ("MapController", "spec.inputResources[0].kind"),
    ("MapController", "spec.outputResources[0].kind"),
    ("MapController", "spec.hooks.map.webhook.method"),
]


@pytest.mark.parametrize(("kind", "path"), FAR, ids=[f"{k}:{p}" for k, p in FAR])
def test_a_field_no_kind_knows_is_ignored_with_a_warning_naming_it(kind: str, path: str) -> None:
    parsed = PARSERS[kind](controller(kind, path, {"any": "thing"}), source="c.yaml#1")
    assert parsed.warnings == (f"{kind} fields (c.yaml#1): {path}: {IGNORED}",)


# (kind, path, the field meant): near misses of a field the level reads
NEAR: list[tuple[str, str, str]] = [
    ("CompositeController", "spec.childResource", "spec.childResources"),
    ("CompositeController", "spec.Hooks", "spec.hooks"),
    ("CompositeController", "spec.generateSelectors", "spec.generateSelector"),
    (
        "CompositeController",
        "spec.parentResource.labelSelectors",
        "spec.parentResource.labelSelector",
    ),
    (
        "CompositeController",
        "spec.parentResource.labelSelector.matchLabel",
        "spec.parentResource.labelSelector.matchLabels",
    ),
    (
        "CompositeController",
        "spec.parentResource.labelSelector.matchExpressions[0].operater",
        "spec.parentResource.labelSelector.matchExpressions[0].operator",
    ),
    (
        "CompositeController",
        "spec.childResources[0].updateStrategy.statusCheck",
        "spec.childResources[0].updateStrategy.statusChecks",
    ),
    ("CompositeController", "spec.hooks.customise", "spec.hooks.customize"),
    ("CompositeController", "spec.hooks.sync.webhooks", "spec.hooks.sync.webhook"),
    (
        "CompositeController",
        "spec.hooks.sync.webhook.clientTls",
        "spec.hooks.sync.webhook.clientTLS",
    ),
    ("CompositeController", "spec.hooks.preUpdateChlid", "spec.hooks.preUpdateChild"),
    ("DecoratorController", "spec.resource", "spec.resources"),
    ("DecoratorController", "spec.attachment", "spec.attachments"),
    (
        "DecoratorController",
        "spec.resources[0].annotationSelector.matchAnnotation",
        "spec.resources[0].annotationSelector.matchAnnotations",
    ),
    ("DecoratorController", "spec.endpointConfig", "spec.endpointConfigs"),
    ("MapController", "spec.outputResource", "spec.outputResources"),
    ("MapController", "spec.hooks.tombStone", "spec.hooks.tombstone"),
    ("MapController", "spec.hooks.map.comand", "spec.hooks.map.command"),
]


@pytest.mark.parametrize(("kind", "path", "meant"), NEAR, ids=[f"{k}:{p}" for k, p, _ in NEAR])
def test_a_near_miss_is_refused_naming_the_field_meant(kind: str, path: str, meant: str) -> None:
    with pytest.raises(SpecError) as raised:
        PARSERS[kind](controller(kind, path, {}))
    assert raised.value.field == path
    assert raised.value.message == f"unknown field: did you mean {meant}?"


@pytest.mark.parametrize("hook", ["preUpdateChild", "postUpdateChild"])
def test_a_hook_metacontroller_never_calls_is_not_called_and_said_so(hook: str) -> None:
    obj = controller("CompositeController", f"spec.hooks.{hook}", {"webhook": dict(WEBHOOK)})
    parsed = parse_composite_controller(obj)
    assert parsed.warnings == (
        f"CompositeController fields: spec.hooks.{hook}: ignored: no Metacontroller release "
        "calls it, and reconcile does not either",
    )


def test_known_fields_warn_about_nothing_and_warnings_keep_their_order() -> None:
    for kind, parse in PARSERS.items():
        assert parse(controller(kind, "spec.resyncPeriodSeconds", 30)).warnings == ()
    obj = controller("CompositeController", "spec.clientConfig", {})
    obj["spec"]["hooks"]["sync"]["webhook"]["retries"] = 3
    obj["spec"]["childResources"][0]["kind"] = "ConfigMap"
    fields = [w.split(": ")[1] for w in parse_composite_controller(obj).warnings]
    assert fields == [
        "spec.clientConfig",
        "spec.childResources[0].kind",
        "spec.hooks.sync.webhook.retries",
    ]


def test_a_misspelling_is_refused_even_beside_the_field_it_misspells() -> None:
    obj = controller("CompositeController", "spec.childResource", [])
    with pytest.raises(SpecError, match=r"spec\.childResource: unknown field: did you mean"):
        parse_composite_controller(obj)


@pytest.mark.parametrize(
    ("key", "known", "meant"),
    [
        ("childResource", {"childResources", "hooks"}, "childResources"),
        ("HOOKS", {"childResources", "hooks"}, "hooks"),
        ("clientConfig", {"endpointConfigs", "parentResource"}, None),
        ("resyncPeriod", {"resyncPeriodSeconds"}, None),  # 0.77: not near enough
        ("replicas", {"resource", "resources"}, None),
        ("urls", {"url", "path"}, "url"),
        ("", {"url"}, None),
    ],
)
def test_near_miss(key: str, known: set[str], meant: str | None) -> None:
    assert near_miss(key, known) == meant


def test_the_warnings_of_the_controllers_that_run_are_the_runs(tmp_path: Path) -> None:
    """From a file: the controller is loaded (not fatal) and its ignored fields are warnings;
    a controller not selected by --controller says nothing."""
    runs = controller("CompositeController", "spec.clientConfig", {"service": {}}, name="runs")
    other = controller("CompositeController", "spec.clientConfig", {}, name="other")
    other["spec"]["parentResource"]["resource"] = "gadgets"
    path = tmp_path / "controllers.yaml"
    path.write_text(yaml.safe_dump_all([runs, other]))
    loaded = load_controllers(MemoryCluster(), [path], from_cluster=False, only=frozenset({"runs"}))
    assert loaded.fatal == [] and loaded.errors == []
    assert [c.name for c in loaded.composite] == ["runs"]
    assert loaded.warnings == [
        f"CompositeController runs ({path} (document 1)): spec.clientConfig: {IGNORED}"
    ]

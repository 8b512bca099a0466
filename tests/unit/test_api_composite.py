"""Parsing CompositeController specs and hook specs (reconcile.specs.composite, hooks_parse,
duration): typed values, and SpecErrors that name the controller and the field."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from reconcile.objects.selectors import LabelSelector, Requirement
from reconcile.specs.composite import (
    ChildRule,
    CompositeController,
    CompositeHooks,
    ConditionCheck,
    ParentRule,
    parse_composite_controller,
)
from reconcile.specs.controller import UpdateMethod
from reconcile.specs.duration import parse_duration
from reconcile.specs.errors import SpecError
from reconcile.specs.hooks import CommandSpec, EtagSettings, HookSpec, WebhookSpec

Mutation = Callable[[dict[str, Any]], None]


def minimal() -> dict[str, Any]:
    return {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "CompositeController",
        "metadata": {"name": "hello"},
        "spec": {
            "parentResource": {"apiVersion": "example.com/v1", "resource": "things"},
            "childResources": [{"apiVersion": "v1", "resource": "pods"}],
            "hooks": {"sync": {"webhook": {"url": "http://hooks.example/sync"}}},
        },
    }


def full() -> dict[str, Any]:
    return {
        "apiVersion": "metacontroller.k8s.io/v1alpha1",
        "kind": "CompositeController",
        "metadata": {"name": "catset"},
        "spec": {
            "parentResource": {
                "apiVersion": "ctl.enisoc.com/v1",
                "resource": "catsets",
                "labelSelector": {"matchLabels": {"managed": "yes"}},
                "revisionHistory": {"fieldPaths": ["spec.template", "spec.volumeClaims"]},
            },
            "childResources": [
                {
                    "apiVersion": "v1",
                    "resource": "pods",
                    "updateStrategy": {
                        "method": "RollingRecreate",
                        "statusChecks": {
                            "conditions": [
                                {"type": "Ready", "status": "True"},
                                {"type": "Healthy", "reason": "Probed"},
                            ]
                        },
                    },
                },
                {"apiVersion": "v1", "resource": "persistentvolumeclaims"},
                {
                    "apiVersion": "apps/v1",
                    "resource": "deployments",
                    "updateStrategy": {"method": "InPlace"},
                },
            ],
            "resyncPeriodSeconds": 30,
            "generateSelector": True,
            "hooks": {
                "sync": {
                    "webhook": {
                        "url": "https://catset.example/sync",
                        "timeout": "5s",
                        "etag": {
                            "enabled": True,
                            "cacheTimeoutSeconds": 30,
                            "cacheCleanupSeconds": 120,
                        },
                    }
                },
                "finalize": {
                    "command": {
                        "argv": ["python3", "finalize.py", "--verbose"],
                        "timeout": "1m30s",
                        "workingDir": "hooks",
                        "env": {"B": "2", "A": "1"},
                    }
                },
                "customize": {
                    "webhook": {
                        "service": {"name": "catset", "namespace": "metacontroller"},
                        "path": "/customize",
                    }
                },
            },
        },
    }


def test_parse_a_full_spec() -> None:
    obj = full()
    controller = parse_composite_controller(obj, source="ctl/catset.yaml", base_dir="/srv/ctl")
    assert controller == CompositeController(
        name="catset",
        parent=ParentRule(
            api_version="ctl.enisoc.com/v1",
            resource="catsets",
            label_selector=LabelSelector((Requirement("managed", "Equals", ("yes",)),)),
            revision_field_paths=("spec.template", "spec.volumeClaims"),
        ),
        children=(
            ChildRule(
                api_version="v1",
                resource="pods",
                update_method=UpdateMethod.ROLLING_RECREATE,
                status_checks=(
                    ConditionCheck(type="Ready", status="True", reason=None),
                    ConditionCheck(type="Healthy", status=None, reason="Probed"),
                ),
            ),
            ChildRule(
                api_version="v1",
                resource="persistentvolumeclaims",
                update_method=UpdateMethod.ON_DELETE,
                status_checks=(),
            ),
            ChildRule(
                api_version="apps/v1",
                resource="deployments",
                update_method=UpdateMethod.IN_PLACE,
            ),
        ),
        hooks=CompositeHooks(
            sync=HookSpec(
                name="sync",
                owner="CompositeController catset (ctl/catset.yaml)",
                webhook=WebhookSpec(
                    url="https://catset.example/sync",
                    timeout=5.0,
                    etag=EtagSettings(
                        enabled=True, cache_timeout_seconds=30.0, cache_cleanup_seconds=120.0
                    ),
                ),
            ),
            finalize=HookSpec(
                name="finalize",
                owner="CompositeController catset (ctl/catset.yaml)",
                command=CommandSpec(
                    argv=("python3", "finalize.py", "--verbose"),
                    timeout=90.0,
                    working_dir="/srv/ctl/hooks",
                    env=(("A", "1"), ("B", "2")),
                ),
            ),
            customize=HookSpec(
                name="customize",
                owner="CompositeController catset (ctl/catset.yaml)",
                webhook=WebhookSpec(
                    url="http://catset.metacontroller:80/customize",
                    timeout=10.0,
                    etag=EtagSettings(),
                ),
            ),
        ),
        raw=obj,
        resync_period=30.0,
        generate_selector=True,
        source="ctl/catset.yaml",
    )
    assert controller.raw is obj
    assert controller.finalizer == "metacontroller.io/compositecontroller-catset"
    assert controller.rolling is True
    assert controller.hooks.sync.target == "https://catset.example/sync"
    assert controller.hooks.finalize is not None
    assert controller.hooks.finalize.target == "python3 finalize.py --verbose"


def test_parse_a_minimal_spec_fills_defaults() -> None:
    obj = minimal()
    controller = parse_composite_controller(obj)
    assert controller == CompositeController(
        name="hello",
        parent=ParentRule(
            api_version="example.com/v1",
            resource="things",
            label_selector=LabelSelector(),
            revision_field_paths=("spec",),
        ),
        children=(ChildRule(api_version="v1", resource="pods"),),
        hooks=CompositeHooks(
            sync=HookSpec(
                name="sync",
                owner="CompositeController hello",
                webhook=WebhookSpec(url="http://hooks.example/sync", timeout=10.0),
            ),
            finalize=None,
            customize=None,
        ),
        raw=obj,
        resync_period=None,
        generate_selector=False,
        source="cluster",
    )
    assert controller.children[0].update_method is UpdateMethod.ON_DELETE
    assert controller.finalizer == "metacontroller.io/compositecontroller-hello"
    assert controller.rolling is False


def test_child_resources_may_be_absent() -> None:
    obj = minimal()
    del obj["spec"]["childResources"]
    assert parse_composite_controller(obj).children == ()


@pytest.mark.parametrize(
    ("method", "expected", "rolling"),
    [
        ("OnDelete", UpdateMethod.ON_DELETE, False),
        ("Recreate", UpdateMethod.RECREATE, False),
        ("InPlace", UpdateMethod.IN_PLACE, False),
        ("RollingRecreate", UpdateMethod.ROLLING_RECREATE, True),
        ("RollingInPlace", UpdateMethod.ROLLING_IN_PLACE, True),
    ],
)
def test_update_methods(method: str, expected: UpdateMethod, rolling: bool) -> None:
    obj = minimal()
    obj["spec"]["childResources"][0]["updateStrategy"] = {"method": method}
    controller = parse_composite_controller(obj)
    assert controller.children[0].update_method is expected
    assert controller.rolling is rolling


# --- errors -------------------------------------------------------------------------------


def _set(path: str, value: Any) -> Mutation:
    """A mutation setting a dotted path (list indexes as numbers) to value."""

    def mutate(obj: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = obj
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return mutate


def _delete(path: str) -> Mutation:
    def mutate(obj: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = obj
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        del node[last]

    return mutate


def _append_child(rule: dict[str, Any]) -> Mutation:
    def mutate(obj: dict[str, Any]) -> None:
        obj["spec"]["childResources"].append(rule)

    return mutate


SYNC_WEBHOOK = "spec.hooks.sync.webhook"

ERRORS: list[tuple[str, Mutation, str, str]] = [
    # (test id, mutation of minimal(), field, message)
    ("missing name", _delete("metadata.name"), "metadata.name", "is required"),
    ("empty name", _set("metadata.name", ""), "metadata.name", "is required"),
    (
        "missing parentResource",
        _delete("spec.parentResource"),
        "spec.parentResource",
        "is required",
    ),
    (
        "missing parent apiVersion",
        _delete("spec.parentResource.apiVersion"),
        "spec.parentResource.apiVersion",
        "is required",
    ),
    (
        "missing parent resource",
        _delete("spec.parentResource.resource"),
        "spec.parentResource.resource",
        "is required",
    ),
    (
        "bad method",
        _set("spec.childResources.0.updateStrategy", {"method": "Sometimes"}),
        "spec.childResources[0].updateStrategy.method",
        "'Sometimes' is not one of OnDelete, Recreate, InPlace, RollingRecreate, RollingInPlace",
    ),
    (
        "misspelt spec field",
        _set("spec.childResource", []),
        "spec.childResource",
        "unknown field: did you mean spec.childResources?",
    ),
    (
        "misspelt parentResource field",
        _set("spec.parentResource.resources", "things"),
        "spec.parentResource.resources",
        "unknown field: did you mean spec.parentResource.resource?",
    ),
    (
        "misspelt child field",
        _set("spec.childResources.0.updatestrategy", {}),
        "spec.childResources[0].updatestrategy",
        "unknown field: did you mean spec.childResources[0].updateStrategy?",
    ),
    (
        "misspelt hook",
        _set("spec.hooks.finalizer", {"webhook": {"url": "http://x/"}}),
        "spec.hooks.finalizer",
        "unknown field: did you mean spec.hooks.finalize?",
    ),
    (
        "misspelt webhook field",
        _set(f"{SYNC_WEBHOOK}.timeOut", "5s"),
        f"{SYNC_WEBHOOK}.timeOut",
        f"unknown field: did you mean {SYNC_WEBHOOK}.timeout?",
    ),
    (
        "duplicate child rule",
        _append_child({"apiVersion": "v1", "resource": "pods", "updateStrategy": {}}),
        "spec.childResources[1]",
        "pods (v1) is already listed at childResources[0]",
    ),
    (
        "childResources not a list",
        _set("spec.childResources", {"apiVersion": "v1"}),
        "spec.childResources",
        "must be a list, not an object",
    ),
    ("spec not an object", _set("spec", []), "spec", "must be an object, not a list"),
    ("missing sync hook", _delete("spec.hooks.sync"), "spec.hooks.sync", "is required"),
    ("missing hooks", _delete("spec.hooks"), "spec.hooks.sync", "is required"),
    (
        "hook with both",
        _set("spec.hooks.sync.command", {"argv": ["true"]}),
        SYNC_WEBHOOK,
        "exactly one of webhook and command must be set",
    ),
    (
        "hook with neither",
        _set("spec.hooks.sync", {}),
        SYNC_WEBHOOK,
        "exactly one of webhook and command must be set, and neither is (read from a cluster, "
        "a command hook is dropped by a CRD that does not declare it, as Metacontroller's own "
        "do not: install reconcile's CRDs, `kubectl apply -k manifests/crds`)",
    ),
    (
        "bad timeout",
        _set(f"{SYNC_WEBHOOK}.timeout", "10x"),
        f"{SYNC_WEBHOOK}.timeout",
        "invalid duration '10x' (expected e.g. 10s, 1m30s, 500ms)",
    ),
    (
        "zero timeout",
        _set(f"{SYNC_WEBHOOK}.timeout", "0s"),
        f"{SYNC_WEBHOOK}.timeout",
        "must be positive, not '0s'",
    ),
    (
        "negative timeout",
        _set(f"{SYNC_WEBHOOK}.timeout", "-5s"),
        f"{SYNC_WEBHOOK}.timeout",
        "must be positive, not '-5s'",
    ),
    (
        "numeric timeout",
        _set(f"{SYNC_WEBHOOK}.timeout", 10),
        f"{SYNC_WEBHOOK}.timeout",
        "must be a non-empty string, not 10",
    ),
    (
        "webhook without url or service",
        _set(SYNC_WEBHOOK, {"path": "/sync"}),
        f"{SYNC_WEBHOOK}.url",
        "a webhook needs either url or service (and usually path)",
    ),
    (
        "url without scheme",
        _set(f"{SYNC_WEBHOOK}.url", "hooks.example/sync"),
        f"{SYNC_WEBHOOK}.url",
        "must be an http:// or https:// URL, not 'hooks.example/sync'",
    ),
    (
        "url with a port out of range",
        _set(f"{SYNC_WEBHOOK}.url", "http://hooks.example:99999/sync"),
        f"{SYNC_WEBHOOK}.url",
        "cannot be called: its port is not between 1 and 65535",
    ),
    (
        "url with a port that is not a number, and a password not repeated",
        _set(f"{SYNC_WEBHOOK}.url", "http://user:s3cret@hooks.example:http/sync"),
        f"{SYNC_WEBHOOK}.url",
        "cannot be called: its port is not a number",
    ),
    (
        "url with a broken IPv6 literal",
        _set(f"{SYNC_WEBHOOK}.url", "http://[::1/sync"),
        f"{SYNC_WEBHOOK}.url",
        "cannot be called: its IPv6 address has no closing ]",
    ),
    (
        "url without a host",
        _set(f"{SYNC_WEBHOOK}.url", "http:///sync"),
        f"{SYNC_WEBHOOK}.url",
        "cannot be called: it names no host",
    ),
    (
        "url with a space",
        _set(f"{SYNC_WEBHOOK}.url", "http://hooks example/sync"),
        f"{SYNC_WEBHOOK}.url",
        "cannot be called: it has a space or a control character in it",
    ),
    (
        "service port out of range",
        _set(SYNC_WEBHOOK, {"service": {"name": "h", "namespace": "t", "port": 70000}}),
        f"{SYNC_WEBHOOK}.service.port",
        "must be at most 65535, not 70000",
    ),
    (
        "service name with a space",
        _set(SYNC_WEBHOOK, {"service": {"name": "h h", "namespace": "t"}}),
        f"{SYNC_WEBHOOK}.service",
        "makes a URL that cannot be called: it has a space or a control character in it",
    ),
    (
        "service without name",
        _set(SYNC_WEBHOOK, {"service": {"namespace": "tools"}, "path": "/sync"}),
        f"{SYNC_WEBHOOK}.service.name",
        "is required",
    ),
    (
        "service without namespace",
        _set(SYNC_WEBHOOK, {"service": {"name": "hooks"}, "path": "/sync"}),
        f"{SYNC_WEBHOOK}.service.namespace",
        "is required",
    ),
    (
        "service with a bad protocol",
        _set(
            SYNC_WEBHOOK,
            {"service": {"name": "h", "namespace": "t", "protocol": "ftp"}, "path": "/"},
        ),
        f"{SYNC_WEBHOOK}.service.protocol",
        "must be http or https, not 'ftp'",
    ),
    (
        "service with port 0",
        _set(SYNC_WEBHOOK, {"service": {"name": "h", "namespace": "t", "port": 0}, "path": "/"}),
        f"{SYNC_WEBHOOK}.service.port",
        "must be at least 1, not 0",
    ),
    (
        "command argv empty",
        _set("spec.hooks.sync", {"command": {"argv": []}}),
        "spec.hooks.sync.command.argv",
        "is required: the program and its arguments, e.g. [python3, sync.py]",
    ),
    (
        "command argv missing",
        _set("spec.hooks.sync", {"command": {"workingDir": "."}}),
        "spec.hooks.sync.command.argv",
        "is required: the program and its arguments, e.g. [python3, sync.py]",
    ),
    (
        "command argv with an empty program",
        _set("spec.hooks.sync", {"command": {"argv": ["", "x"]}}),
        "spec.hooks.sync.command.argv",
        "is required: the program and its arguments, e.g. [python3, sync.py]",
    ),
    (
        "command argv not strings",
        _set("spec.hooks.sync", {"command": {"argv": ["python3", 1]}}),
        "spec.hooks.sync.command.argv",
        "must be a list of strings",
    ),
    (
        "command bad timeout",
        _set("spec.hooks.sync", {"command": {"argv": ["x"], "timeout": "10x"}}),
        "spec.hooks.sync.command.timeout",
        "invalid duration '10x' (expected e.g. 10s, 1m30s, 500ms)",
    ),
    (
        "finalize hook error",
        _set("spec.hooks.finalize", {"command": {"argv": []}}),
        "spec.hooks.finalize.command.argv",
        "is required: the program and its arguments, e.g. [python3, sync.py]",
    ),
    (
        "customize hook error",
        _set("spec.hooks.customize", {"webhook": {"url": "ftp://x"}}),
        "spec.hooks.customize.webhook.url",
        "must be an http:// or https:// URL, not 'ftp://x'",
    ),
    (
        "negative resync period",
        _set("spec.resyncPeriodSeconds", -1),
        "spec.resyncPeriodSeconds",
        "must be at least 0, not -1",
    ),
    (
        "resync period as a string",
        _set("spec.resyncPeriodSeconds", "30"),
        "spec.resyncPeriodSeconds",
        "must be a number, not '30'",
    ),
    (
        "generateSelector not a boolean",
        _set("spec.generateSelector", "true"),
        "spec.generateSelector",
        "must be true or false, not 'true'",
    ),
    (
        "bad parent labelSelector",
        _set("spec.parentResource.labelSelector", {"matchExpressions": [{"key": "a"}]}),
        "spec.parentResource.labelSelector.matchExpressions[0].operator",
        "None is not one of In, NotIn, Exists, DoesNotExist",
    ),
    (
        "bad revisionHistory field path",
        _set("spec.parentResource.revisionHistory", {"fieldPaths": ["spec..template"]}),
        "spec.parentResource.revisionHistory.fieldPaths[0]",
        "'spec..template' is not a dotted field path",
    ),
    (
        "status check without type",
        _set(
            "spec.childResources.0.updateStrategy",
            {"method": "RollingInPlace", "statusChecks": {"conditions": [{"status": "True"}]}},
        ),
        "spec.childResources[0].updateStrategy.statusChecks.conditions[0].type",
        "is required",
    ),
]


@pytest.mark.parametrize(
    ("mutation", "field", "message"),
    [pytest.param(m, f, msg, id=i) for i, m, f, msg in ERRORS],
)
def test_spec_errors_name_the_controller_and_the_field(
    mutation: Mutation, field: str, message: str
) -> None:
    obj = minimal()
    mutation(obj)
    with pytest.raises(SpecError) as info:
        parse_composite_controller(obj)
    error = info.value
    named = bool(obj.get("metadata", {}).get("name"))
    where = "CompositeController hello" if named else "CompositeController (unnamed)"
    assert (error.where, error.field, error.message) == (where, field, message)
    assert str(error) == f"{where}: {field}: {message}"


def test_spec_errors_name_the_source_file() -> None:
    obj = minimal()
    obj["spec"]["hooks"]["sync"]["webhook"]["timeout"] = "10x"
    with pytest.raises(SpecError) as info:
        parse_composite_controller(obj, source="controllers/hello.yaml")
    assert info.value.where == "CompositeController hello (controllers/hello.yaml)"
    assert info.value.field == "spec.hooks.sync.webhook.timeout"


def test_parent_ignore_status_changes_is_accepted() -> None:
    obj = minimal()
    obj["spec"]["parentResource"]["ignoreStatusChanges"] = True
    controller = parse_composite_controller(obj)
    assert controller.parent.resource == "things"


# --- webhook URLs and command hooks -------------------------------------------------------


@pytest.mark.parametrize(
    ("webhook", "url"),
    [
        ({"service": {"name": "hooks", "namespace": "tools"}, "path": "/sync"}, None),
        ({"service": {"name": "hooks", "namespace": "tools"}, "path": "sync"}, None),
        (
            {
                "service": {
                    "name": "hooks",
                    "namespace": "tools",
                    "port": 8443,
                    "protocol": "https",
                },
                "path": "/v2/sync",
            },
            "https://hooks.tools:8443/v2/sync",
        ),
        (
            {"service": {"name": "hooks", "namespace": "tools", "port": 8080}, "path": "/sync"},
            "http://hooks.tools:8080/sync",
        ),
        # `url` overrides service and path.
        (
            {
                "url": "http://direct.example/hook",
                "service": {"name": "hooks", "namespace": "tools"},
                "path": "/sync",
            },
            "http://direct.example/hook",
        ),
    ],
)
def test_webhook_urls(webhook: dict[str, Any], url: str | None) -> None:
    obj = minimal()
    obj["spec"]["hooks"]["sync"] = {"webhook": webhook}
    sync = parse_composite_controller(obj).hooks.sync
    assert sync.command is None
    assert sync.webhook is not None
    assert sync.webhook.url == (url or "http://hooks.tools:80/sync")


@pytest.mark.parametrize(
    ("timeout", "seconds"),
    [(None, 10.0), ("10s", 10.0), ("1m30s", 90.0), ("250ms", 0.25), ("1.5h", 5400.0)],
)
def test_webhook_timeouts(timeout: str | None, seconds: float) -> None:
    obj = minimal()
    if timeout is not None:
        obj["spec"]["hooks"]["sync"]["webhook"]["timeout"] = timeout
    webhook = parse_composite_controller(obj).hooks.sync.webhook
    assert webhook is not None
    assert webhook.timeout == pytest.approx(seconds, rel=1e-12)


@pytest.mark.parametrize(
    ("base_dir", "working_dir", "expected"),
    [
        ("/srv/ctl", "hooks", "/srv/ctl/hooks"),
        ("/srv/ctl", None, "/srv/ctl"),
        ("/srv/ctl", ".", "/srv/ctl"),
        ("/srv/ctl", "../shared/hooks", "/srv/shared/hooks"),
        ("/srv/ctl", "/opt/hooks", "/opt/hooks"),
        ("/srv/ctl/", "./hooks/", "/srv/ctl/hooks"),
        (None, "hooks", "hooks"),
        (None, None, None),
    ],
)
def test_command_working_dir_is_resolved_against_the_base_dir(
    base_dir: str | None, working_dir: str | None, expected: str | None
) -> None:
    obj = minimal()
    command: dict[str, Any] = {"argv": ["python3", "sync.py"]}
    if working_dir is not None:
        command["workingDir"] = working_dir
    obj["spec"]["hooks"]["sync"] = {"command": command}
    sync = parse_composite_controller(obj, source="x.yaml", base_dir=base_dir).hooks.sync
    assert sync.webhook is None
    assert sync.command == CommandSpec(
        argv=("python3", "sync.py"), timeout=10.0, working_dir=expected, env=()
    )


def test_parsing_does_not_change_the_object() -> None:
    obj = full()
    before = copy.deepcopy(obj)
    parse_composite_controller(obj, base_dir="/srv")
    assert obj == before


# --- Go durations -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("10s", 10.0),
        ("1m30s", 90.0),
        ("250ms", 0.25),
        ("1.5h", 5400.0),
        ("0", 0.0),
        ("-0", 0.0),
        ("+0", 0.0),
        ("0s", 0.0),
        ("1h2m3s", 3723.0),
        ("2s500ms", 2.5),
        ("500us", 0.0005),
        ("500µs", 0.0005),
        ("500μs", 0.0005),
        ("1500ns", 0.0000015),
        (".5s", 0.5),
        ("1.s", 1.0),
        ("-1.5s", -1.5),
        ("+5s", 5.0),
        ("1m1m", 120.0),
    ],
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "10",
        "10x",
        "s",
        "1.5",
        "-",
        "+",
        "1m30",
        "ms",
        "h1",
        "1 s",
        "0x",
        "1d",
        "1.5.5s",
        "--1s",
    ],
)
def test_parse_duration_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="invalid duration"):
        parse_duration(text)

"""What the server keeps of a built-in kind's object, from the release's own schemas: fields a
kind's Go type lacks are dropped, so they are neither written nor compared (a difference only
on paper would be written on every run); a built-in kind's own status fields stay as the server
and its controllers keep them."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconcile.engine.children import ChildrenDiff, Dropped, OwnedType, diff_children
from reconcile.engine.status import pruned_status, status_to_write
from reconcile.engine.writes import CLIENT_SIDE
from reconcile.objects.resource import ResourceInfo
from reconcile.schemas.builtin import kind_schemas, schema_release
from reconcile.schemas.pruning import ResolvedSchema, drops_any, pruned_object, with_object_meta
from reconcile.specs.controller import OwnedRule, UpdateMethod


def builtin_schema(release: str, api_version: str, kind: str) -> ResolvedSchema:
    schemas = kind_schemas(release)
    root = schemas.root(api_version, kind)
    assert root is not None, (release, api_version, kind)
    return ResolvedSchema(root, schemas.resolve)


def cronjob(api_version: str) -> dict[str, Any]:
    """A published operator's CronJob: `_ttlSecondsAfterFinished` is no field of any version."""
    return {
        "apiVersion": api_version,
        "kind": "CronJob",
        "metadata": {"name": "backup", "namespace": "ops", "labels": {"app": "backup"}},
        "spec": {
            "schedule": "0 3 * * *",
            "jobTemplate": {
                "spec": {
                    "_ttlSecondsAfterFinished": 100,
                    "template": {
                        "spec": {
                            "restartPolicy": "OnFailure",
                            "containers": [
                                {
                                    "name": "backup",
                                    "image": "busybox",
                                    "resources": {"limits": {"cpu": "1000m"}},
                                    "ports": [{"containerPort": 80, "hostPortName": "x"}],
                                }
                            ],
                        }
                    },
                }
            },
        },
    }


@pytest.mark.parametrize(
    ("release", "api_version"), [("1.20", "batch/v1beta1"), ("1.37", "batch/v1")]
)
def test_a_field_the_kind_does_not_have_is_dropped_and_named(
    release: str, api_version: str
) -> None:
    kept, dropped = pruned_object(
        cronjob(api_version), builtin_schema(release, api_version, "CronJob")
    )
    assert dropped == [
        "spec.jobTemplate.spec._ttlSecondsAfterFinished",
        "spec.jobTemplate.spec.template.spec.containers[*].ports[*].hostPortName",
    ]
    job = kept["spec"]["jobTemplate"]["spec"]
    assert "_ttlSecondsAfterFinished" not in job
    container = job["template"]["spec"]["containers"][0]
    # what the kind has is kept as written: quantities, maps, metadata
    assert container["resources"] == {"limits": {"cpu": "1000m"}}
    assert container["ports"] == [{"containerPort": 80}]
    assert kept["metadata"] == cronjob(api_version)["metadata"]


def test_int_or_string_and_open_maps_are_kept() -> None:
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "annotations": {"anything": "goes"}},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": "http"}]},
    }
    kept, dropped = pruned_object(service, builtin_schema("1.37", "v1", "Service"))
    assert (kept, dropped) == (service, [])


def test_releases_between_and_after_the_bundled_ones_read_with_the_nearest() -> None:
    assert schema_release("1.20") == "1.20"
    assert schema_release("1.22") == "1.25"  # newer: at worst kept where the server drops
    assert schema_release("1.31") == "1.31"
    assert schema_release("1.45") == "1.37"
    assert schema_release("") == "1.37"


def namespace(status: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "team-a"},
        "status": status,
    }


def test_a_namespace_keeps_its_phase_and_drops_what_it_has_no_place_for() -> None:
    schema = builtin_schema("1.37", "v1", "Namespace")
    parent = namespace({"phase": "Active"})
    hook_status = {"kubeflow-pipelines-ready": "True"}
    assert status_to_write(hook_status, parent, stamp=False, schema=schema) is None
    assert status_to_write({}, parent, stamp=False, schema=schema) is None


def test_a_deployment_parent_keeps_its_controller_s_status() -> None:
    schema = builtin_schema("1.37", "apps/v1", "Deployment")
    status: dict[str, Any] = {"replicas": 2, "readyReplicas": 2, "observedGeneration": 2}
    parent = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "generation": 3},
        "status": status,
    }
    written = status_to_write({"ready": True}, parent, stamp=True, schema=schema)
    assert written == {"replicas": 2, "readyReplicas": 2, "observedGeneration": 3}
    status["observedGeneration"] = 3
    assert status_to_write({"ready": True}, parent, stamp=True, schema=schema) is None


def test_a_custom_resource_s_status_is_replaced_as_metacontroller_replaces_it() -> None:
    parent = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "generation": 1},
        "status": {"old": 1, "observedGeneration": 1},
    }
    assert status_to_write({"new": 2}, parent) == {"new": 2, "observedGeneration": 1}


def _diff_one(
    owned: OwnedType[OwnedRule], key: str, stored: dict[str, Any], wanted: dict[str, Any]
) -> ChildrenDiff:
    """The children diff (client-side apply) of one child, stored and wanted under `key`."""
    diff = ChildrenDiff()
    diff_children(
        owned, {key: stored}, {key: wanted}, diff, strategy=CLIENT_SIDE, stale_reason="gone"
    )
    return diff


def test_the_children_diff_compares_what_the_server_keeps() -> None:
    api_version = "batch/v1"
    schema = builtin_schema("1.37", api_version, "CronJob")
    resource = ResourceInfo("batch", "v1", "cronjobs", "CronJob", namespaced=True)
    owned = OwnedType(OwnedRule(api_version, "cronjobs", UpdateMethod.IN_PLACE), resource, schema)
    wanted = cronjob(api_version)
    kept, _ = pruned_object(wanted, schema)
    stored = CLIENT_SIDE.create(resource, kept, "desired, missing", "").after  # as created
    assert stored is not None
    diff = _diff_one(owned, "ops/backup", stored, wanted)
    assert diff.actions == []
    assert diff.dropped == [
        Dropped(
            resource,
            (
                "spec.jobTemplate.spec._ttlSecondsAfterFinished",
                "spec.jobTemplate.spec.template.spec.containers[*].ports[*].hostPortName",
            ),
        )
    ]


def test_metadata_is_kept_as_object_meta_keeps_it() -> None:
    """A near miss in metadata (`finalizer`, `label`, `ownerReference`) is dropped by the
    server's ObjectMeta: named, and not written (nor shown as written)."""
    child = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "finalizer": ["x/y"], "label": {"a": "b"}, "labels": {"a": "b"}},
        "data": {"k": "v"},
    }
    kept, dropped = pruned_object(child, builtin_schema("1.37", "v1", "ConfigMap"))
    assert kept["metadata"] == {"name": "c", "labels": {"a": "b"}}
    assert dropped == ["metadata.finalizer", "metadata.label"]


def test_a_custom_resource_s_metadata_is_object_meta_whatever_its_schema_says() -> None:
    schemas = kind_schemas("1.37")
    meta = schemas.defs["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]
    crd_schema = {"type": "object", "properties": {"metadata": {"type": "object"}}}
    schema = with_object_meta(crd_schema, ResolvedSchema(meta, schemas.resolve))
    obj = {"apiVersion": "x.io/v1", "kind": "W", "metadata": {"name": "w", "ownerReference": []}}
    kept, dropped = pruned_object(obj, schema)
    assert kept["metadata"] == {"name": "w"} and dropped == ["metadata.ownerReference"]


_FIELDS = [
    "spec",
    "template",
    "containers",
    "ports",
    "name",
    "image",
    "labels",
    "metadata",
    "selector",
    "replicas",
    "env",
    "value",
    "x-unknown",
    "_typo",
    "annotations",
    "data",
    "status",
    "conditions",
    "type",
]
_JSON_TREES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_FIELDS), inner, max_size=4)
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from([("apps/v1", "Deployment"), ("v1", "ConfigMap"), ("batch/v1", "CronJob")]),
    body=st.dictionaries(st.sampled_from(_FIELDS), _JSON_TREES, max_size=4),
)
def test_the_check_for_drops_agrees_with_the_pruning(
    kind: tuple[str, str], body: dict[str, Any]
) -> None:
    """`drops_any` (the walk that builds nothing, asked first of every desired object) says
    a field is dropped exactly when `pruned_object` drops one."""
    api_version, name = kind
    schema = builtin_schema("1.37", api_version, name)
    obj = {"apiVersion": api_version, "kind": name, **body}
    assert drops_any(obj, schema) == bool(pruned_object(obj, schema)[1])
    status = body.get("status")
    if isinstance(status, dict):  # a status to write is asked the same first
        assert pruned_status(status, schema)[0] == pruned_object(obj, schema)[0].get("status", {})
    assert drops_any(cronjob("batch/v1"), builtin_schema("1.37", "batch/v1", "CronJob"))


def _as_stored(resource: ResourceInfo, kept: dict[str, Any], recorded: dict[str, Any]) -> Any:
    """`kept` as the server stores it, its last-applied annotation recording `recorded` (a
    writer that prunes nothing records more than the server kept)."""
    stored = CLIENT_SIDE.create(resource, kept, "desired, missing", "").after
    note = CLIENT_SIDE.create(resource, recorded, "desired, missing", "").after
    assert stored is not None and note is not None
    stored["metadata"]["annotations"] = note["metadata"]["annotations"]
    return stored


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from([("apps/v1", "Deployment"), ("v1", "ConfigMap"), ("batch/v1", "CronJob")]),
    body=st.dictionaries(st.sampled_from(_FIELDS), _JSON_TREES, max_size=4),
    recorded_by_us=st.booleans(),
)
def test_the_steady_shortcut_is_taken_only_when_nothing_is_dropped_or_changed(
    kind: tuple[str, str], body: dict[str, Any], recorded_by_us: bool
) -> None:
    """`kept_and_unchanged`, which spares a steady child the pruning and the merge, is true
    only when the pruning drops nothing and the merge changes nothing; whoever recorded the
    last-applied annotation (us, of what the server kept, or a writer that prunes nothing)."""
    api_version, name = kind
    schema = builtin_schema("1.37", api_version, name)
    wanted = {"apiVersion": api_version, "kind": name, **body, "metadata": {"name": "x"}}
    if isinstance(body.get("metadata"), dict):
        wanted["metadata"] = {**body["metadata"], "name": "x"}
    resource = ResourceInfo("", "v1", "things", name, namespaced=True)
    kept, dropped = pruned_object(wanted, schema)
    stored = _as_stored(resource, kept, kept if recorded_by_us else wanted)
    if CLIENT_SIDE.kept_and_unchanged(stored, wanted):
        assert dropped == [] and not drops_any(wanted, schema)
        assert CLIENT_SIDE.up_to_date(stored, kept)


_CONFIGMAPS = ResourceInfo("", "v1", "configmaps", "ConfigMap", namespaced=True)


def _configmap_diff(stored: dict[str, Any], wanted: dict[str, Any]) -> ChildrenDiff:
    """The children diff of one ConfigMap, `ops/settings`, under the 1.37 schema."""
    schema = builtin_schema("1.37", "v1", "ConfigMap")
    owned = OwnedType(OwnedRule("v1", "configmaps", UpdateMethod.IN_PLACE), _CONFIGMAPS, schema)
    return _diff_one(owned, "ops/settings", stored, wanted)


@pytest.mark.parametrize("unknown", [None, {}, []])
def test_a_field_the_server_drops_is_named_though_an_annotation_records_it(unknown: Any) -> None:
    """Metacontroller records the hook's object as it was asked for, a field the server
    drops included: the object is unchanged by meaning, and the drop is still named (the
    steady shortcut is not taken: the field is not in the stored object)."""
    wanted = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "ops"},
        "data": {"a": "1"},
        "dataa": unknown,
    }
    kept, _ = pruned_object(wanted, builtin_schema("1.37", "v1", "ConfigMap"))
    stored = _as_stored(_CONFIGMAPS, kept, wanted)
    assert not CLIENT_SIDE.kept_and_unchanged(stored, wanted)
    assert _configmap_diff(stored, wanted).dropped == [Dropped(_CONFIGMAPS, ("dataa",))]


def test_a_steady_child_is_unchanged_and_nothing_of_it_dropped() -> None:
    """The steady case the shortcut is for: what we last applied, stored as it was."""
    wanted = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "ops", "labels": {"app": "a"}},
        "data": {"a": "1"},
    }
    stored = _as_stored(_CONFIGMAPS, wanted, wanted)
    assert CLIENT_SIDE.kept_and_unchanged(stored, wanted)
    diff = _configmap_diff(stored, wanted)
    assert diff.actions == [] and diff.dropped == []
    # a value changed since: not steady, and updated
    changed = {**wanted, "data": {"a": "2"}}
    assert not CLIENT_SIDE.kept_and_unchanged(stored, changed)
    assert [a.kind.value for a in _configmap_diff(stored, changed).actions] == ["update"]

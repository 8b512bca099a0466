"""What of a hook's status a parent's CRD schema keeps (`engine.status.pruned_status`), with
plain dicts: the API server's pruning of a structural schema's unknown fields."""

from __future__ import annotations

from typing import Any

import pytest

from reconcile.engine.status import pruned_status, status_to_write

STATUS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "active": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
        "conditions": {
            "type": "array",
            "items": {"type": "object", "properties": {"type": {"type": "string"}}},
        },
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        "byName": {
            "type": "object",
            "additionalProperties": {"type": "object", "properties": {"a": {"type": "string"}}},
        },
        "size": {"x-kubernetes-int-or-string": True},
        "embedded": {
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "properties": {"spec": {"type": "object"}},
        },
    },
}
SCHEMA = {"type": "object", "properties": {"status": STATUS}}


@pytest.mark.parametrize(
    ("wanted", "kept", "dropped"),
    [
        ({"active": {"replicas": 1}}, {"active": {"replicas": 1}}, []),
        (
            {"active": {"replicas": 1, "terminatingReplicas": 0}},
            {"active": {"replicas": 1}},
            ["status.active.terminatingReplicas"],
        ),
        ({"unknown": 1}, {}, ["status.unknown"]),
        (
            {"conditions": [{"type": "A", "x": 1}, {"type": "B", "x": 2}]},
            {"conditions": [{"type": "A"}, {"type": "B"}]},
            ["status.conditions[*].x"],
        ),
        ({"free": {"anything": {"at": "all"}}}, {"free": {"anything": {"at": "all"}}}, []),
        (
            {"byName": {"k": {"a": "1", "b": 2}}},
            {"byName": {"k": {"a": "1"}}},
            ["status.byName.k.b"],
        ),
        ({"size": "50%"}, {"size": "50%"}, []),
        (
            {"embedded": {"apiVersion": "v1", "kind": "X", "metadata": {"name": "n"}, "z": 1}},
            {"embedded": {"apiVersion": "v1", "kind": "X", "metadata": {"name": "n"}}},
            ["status.embedded.z"],
        ),
    ],
    ids=[
        "listed",
        "unknown-nested",
        "unknown-top",
        "list-items",
        "preserved",
        "additional",
        "int-or-string",
        "embedded",
    ],
)
def test_the_schema_prunes_what_it_has_no_place_for(
    wanted: dict[str, Any], kept: dict[str, Any], dropped: list[str]
) -> None:
    assert pruned_status(wanted, SCHEMA) == (kept, dropped)


def test_no_schema_or_a_preserving_one_keeps_everything() -> None:
    wanted = {"a": {"b": [1, {"c": 2}]}}
    assert pruned_status(wanted, None) == (wanted, [])
    preserving = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    assert pruned_status(wanted, preserving) == (wanted, [])


def test_a_schema_without_status_drops_all_of_it() -> None:
    schema = {"type": "object", "properties": {"spec": {"type": "object"}}}
    assert pruned_status({"a": 1}, schema) == ({}, ["status"])
    assert pruned_status({}, schema) == ({}, [])


def test_a_status_equal_once_pruned_needs_no_write() -> None:
    status = {"active": {"replicas": 1}, "observedGeneration": 2}
    parent: dict[str, Any] = {"metadata": {"generation": 2}, "status": status}
    wanted = {"active": {"replicas": 1, "terminatingReplicas": 0}}
    assert status_to_write(wanted, parent, schema=SCHEMA) is None
    assert status_to_write(wanted, parent) == {**wanted, "observedGeneration": 2}

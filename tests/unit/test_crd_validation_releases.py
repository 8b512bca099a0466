"""Custom resources against their CRD's schema in the words of each release `--local` plays.

The first table is ported from apiextensions-apiserver's TestValidateCustomResource
(pkg/apiserver/validation/validation_test.go) as its copies of 1.24 (`Too many`,
`Too long: may not be longer than 2`), 1.32 (`may not be more than 2 bytes`) and master, 1.37
(the Kubernetes name formats, numeric ranges) have it; each case gives the exact errors of 1.20,
of releases in between and of 1.37. The other tables follow the sources release by release
(apimachinery's field errors, kube-openapi's validator, apiextensions-apiserver's translation
and embedded-resource checks). The 1.20 answers of all were checked against the test control
plane's API server.
"""

from __future__ import annotations

from typing import Any

import pytest

from reconcile.cluster.errors import Invalid
from reconcile.cluster.memory import (
    MemoryCluster,
    embedded_resource_errors,
    list_type_errors,
    schema_errors,
)
from reconcile.cluster.types import Obj

Schema = dict[str, Any]
Case = tuple[str, Schema, Any, dict[int, set[str]]]


def errors_of(schema: Schema, obj: Any, minor: int) -> set[str]:
    return {str(e) for e in schema_errors(schema, obj, minor)}


def root(**properties: Schema) -> Schema:
    return {"type": "object", "properties": properties}


ANY_OF_INT_OR_STRING = {
    "nullable": True,
    "x-kubernetes-int-or-string": True,
    "anyOf": [{"type": "integer"}, {"type": "string"}],
}
ANY_OF_ERRORS = {
    '<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)',
    'field: Invalid value: "number": field in body must be of type integer,string: "number"',
    'field: Invalid value: "number": field in body must be of type integer: "number"',
}
CHECKED_INTEGER = (
    '<nil>: Invalid value: "": Checked value must be of type integer (default format) in field'
)
NUMERIC_FORMATS = root(
    intThirtyTwo={"type": "integer", "format": "int32"},
    intSixtyFour={"type": "integer", "format": "int64"},
    floatThreeTwo={"type": "number", "format": "float"},
    floatSixFour={"type": "number", "format": "double"},
)
MAX_INT64 = 2**63 - 1
MAX_FLOAT32 = 3.4028234663852886e38

UPSTREAM: list[Case] = [
    (
        "maxProperties",
        root(fieldX={"type": "object", "maxProperties": 2}),
        {"fieldX": {"a": True, "b": True, "c": True}},
        {
            20: {"fieldX: Invalid value: 2: fieldX in body should have at most 2 properties"},
            25: {"fieldX: Too many: 3: must have at most 2 items"},
            28: {"fieldX: Too many: 3: must have at most 2 items"},
            37: {"fieldX: Too many: 3: must have at most 2 items"},
        },
    ),
    (
        "maxItems",
        root(fieldX={"type": "array", "maxItems": 2}),
        {"fieldX": ["a", "b", "c"]},
        {
            20: {"fieldX: Invalid value: 3: fieldX in body should have at most 2 items"},
            25: {"fieldX: Too many: 3: must have at most 2 items"},
            28: {"fieldX: Too many: 3: must have at most 2 items"},
            37: {"fieldX: Too many: 3: must have at most 2 items"},
        },
    ),
    (
        "maxLength",
        root(fieldX={"type": "string", "maxLength": 2}),
        {"fieldX": "abc"},
        {
            20: {'fieldX: Invalid value: "abc": fieldX in body should be at most 2 chars long'},
            25: {"fieldX: Too long: may not be longer than 2"},
            28: {"fieldX: Too long: may not be longer than 2"},
            31: {"fieldX: Too long: may not be longer than 2"},
            32: {"fieldX: Too long: may not be more than 2 bytes"},
            37: {"fieldX: Too long: may not be more than 2 bytes"},
        },
    ),
    (
        "required field",
        {
            "type": "object",
            "required": ["field"],
            "properties": {
                "field": {"type": "object", "required": ["nested"], "properties": {"nested": {}}}
            },
        },
        {"test": "a"},
        {minor: {"field: Required value"} for minor in (20, 28, 37)},
    ),
    (
        "enum",
        root(
            field={
                "type": "object",
                "required": ["nestedint", "nestedstring"],
                "properties": {
                    "nestedint": {"type": "integer", "enum": [1, 2]},
                    "nestedstring": {"type": "string", "enum": ["a", "b"]},
                },
            }
        ),
        {"field": {"nestedint": "x", "nestedstring": True}},
        {
            minor: {
                'field.nestedint: Invalid value: "string": field.nestedint in body must be of type'
                ' integer: "string"',
                'field.nestedint: Unsupported value: "x": supported values: "1", "2"',
                'field.nestedstring: Invalid value: "boolean": field.nestedstring in body must be'
                ' of type string: "boolean"',
                'field.nestedstring: Unsupported value: true: supported values: "a", "b"',
            }
            for minor in (20, 28, 37)
        },
    ),
    (
        "nullable, x-kubernetes-int-or-string and user-provided anyOf",
        root(field=ANY_OF_INT_OR_STRING),
        {"field": 1.2},
        {
            20: ANY_OF_ERRORS,
            28: ANY_OF_ERRORS,
            35: ANY_OF_ERRORS,
            37: {*ANY_OF_ERRORS, CHECKED_INTEGER},
        },
    ),
    (
        "nullable, x-kubernetes-int-or-string and user-provided allOf",
        root(
            field={
                "nullable": True,
                "x-kubernetes-int-or-string": True,
                "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}],
            }
        ),
        {"field": 1.2},
        {
            20: {
                *ANY_OF_ERRORS,
                '<nil>: Invalid value: "": "field" must validate all the schemas (allOf). None'
                " validated",
            },
            37: {
                *ANY_OF_ERRORS,
                CHECKED_INTEGER,
                '<nil>: Invalid value: "": "field" must validate all the schemas (allOf). None'
                " validated",
            },
        },
    ),
    (
        "k8sShortName",
        root(fieldX={"type": "string", "format": "k8s-short-name"}),
        {"fieldX": "a-"},
        {
            20: set(),
            34: set(),  # the format is read at the compatibility version, 1.33
            35: {
                'fieldX: Invalid value: "a-": fieldX in body must be of type k8s-short-name: "a-"'
            },
            37: {
                'fieldX: Invalid value: "a-": fieldX in body must be of type k8s-short-name: "a-"'
            },
        },
    ),
    (
        "k8sLongName",
        root(fieldX={"type": "string", "format": "k8s-long-name"}),
        {"fieldX": "a.-"},
        {
            28: set(),
            37: {
                'fieldX: Invalid value: "a.-": fieldX in body must be of type k8s-long-name: "a.-"'
            },
        },
    ),
    (
        "numeric formats valid",
        NUMERIC_FORMATS,
        {
            "intThirtyTwo": 2**31 - 1,
            "intSixtyFour": MAX_INT64,
            "floatThreeTwo": MAX_FLOAT32,
            "floatSixFour": 1.7976931348623157e308,
        },
        {20: set(), 28: set(), 37: set()},
    ),
    (
        "numeric formats invalid: int32 overflow",
        NUMERIC_FORMATS,
        {"intThirtyTwo": 2**31},
        {
            20: set(),
            28: set(),
            35: set(),
            36: {
                '<nil>: Invalid value: "": Checked value must be of type integer with format int32'
                " in intThirtyTwo"
            },
            37: {
                '<nil>: Invalid value: "": Checked value must be of type integer with format int32'
                " in intThirtyTwo"
            },
        },
    ),
    (
        "numeric formats invalid: int64 overflow as a float",
        NUMERIC_FORMATS,
        {"intSixtyFour": float(MAX_INT64) * 1.1},
        {
            20: {
                'intSixtyFour: Invalid value: "number": intSixtyFour in body must be of type'
                ' integer: "number"'
            },
            28: {
                'intSixtyFour: Invalid value: "number": intSixtyFour in body must be of type'
                ' integer: "number"'
            },
            37: {
                'intSixtyFour: Invalid value: "float64": intSixtyFour in body must be of type'
                ' int64: "float64"',
                '<nil>: Invalid value: "": Checked value must be of type integer with format int64'
                " in intSixtyFour",
            },
        },
    ),
    (
        "numeric formats invalid: float overflow",
        NUMERIC_FORMATS,
        {"floatThreeTwo": -MAX_FLOAT32 * 1.1},
        {
            28: set(),
            37: {
                '<nil>: Invalid value: "": Checked value must be of type number with format float'
                " in floatThreeTwo"
            },
        },
    ),
]


def _flatten(cases: list[Case]) -> list[tuple[str, Schema, Any, int, set[str]]]:
    return [
        (name, schema, obj, minor, expected)
        for name, schema, obj, by_release in cases
        for minor, expected in by_release.items()
    ]


@pytest.mark.parametrize(
    ("schema", "obj", "minor", "expected"),
    [case[1:] for case in _flatten(UPSTREAM)],
    ids=[f"{case[0]} @1.{case[3]}" for case in _flatten(UPSTREAM)],
)
def test_upstream_cases_by_release(
    schema: Schema, obj: Any, minor: int, expected: set[str]
) -> None:
    assert errors_of(schema, obj, minor) == expected


SPEC = "spec.x"
WORDING: list[Case] = [
    (
        "maxLength of one: `1 byte` from 1.34",
        {"type": "string", "maxLength": 1},
        "ab",
        {
            33: {"spec.x: Too long: may not be more than 1 bytes"},
            34: {"spec.x: Too long: may not be more than 1 byte"},
        },
    ),
    (
        "maxItems of one: `1 item` from 1.34",
        {"type": "array", "maxItems": 1},
        [1, 2],
        {
            33: {"spec.x: Too many: 2: must have at most 1 items"},
            37: {"spec.x: Too many: 2: must have at most 1 item"},
        },
    ),
    (
        "minProperties shows the limit, then the size",
        {"type": "object", "minProperties": 3},
        {"a": 1},
        {
            20: {"spec.x: Invalid value: 3: spec.x in body should have at least 3 properties"},
            28: {"spec.x: Invalid value: 1: spec.x in body should have at least 3 properties"},
        },
    ),
    (
        "maxProperties hides the object's other errors until 1.28",
        {"type": "object", "maxProperties": 1, "required": ["c"]},
        {"a": 1, "b": 2},
        {
            25: {"spec.x: Too many: 2: must have at most 1 items"},
            28: {"spec.x: Too many: 2: must have at most 1 items", "spec.x.c: Required value"},
        },
    ),
    (
        "minItems stays an invalid value",
        {"type": "array", "minItems": 2},
        [1],
        {
            20: {"spec.x: Invalid value: 1: spec.x in body should have at least 2 items"},
            37: {"spec.x: Invalid value: 1: spec.x in body should have at least 2 items"},
        },
    ),
    (
        "a null outside the enum: quoted until 1.34",
        {"type": "string", "nullable": True, "enum": ["a", "b"]},
        None,
        {
            20: {'spec.x: Unsupported value: "null": supported values: "a", "b"'},
            33: {'spec.x: Unsupported value: "null": supported values: "a", "b"'},
            34: {'spec.x: Unsupported value: null: supported values: "a", "b"'},
        },
    ),
    (
        "an object outside the enum: Go's %#v, then JSON",
        {"type": "object", "enum": [{"a": 1}]},
        {"a": 2, "b": [1, "x"]},
        {
            28: {
                'spec.x: Unsupported value: map[string]interface {}{"a":2, "b":[]interface {}{1,'
                ' "x"}}: supported values: "{\\"a\\":1}"'
            },
            37: {'spec.x: Unsupported value: {"a":2,"b":[1,"x"]}: supported values: "{\\"a\\":1}"'},
        },
    ),
    (
        "numbers in the enum are listed as JSON",
        {"type": "number", "enum": [1.0, 2.5]},
        3,
        {
            minor: {'spec.x: Unsupported value: 3: supported values: "1", "2.5"'}
            for minor in (20, 37)
        },
    ),
    (
        "a multipleOf of 0 must be positive from 1.27",
        {"type": "number", "multipleOf": 0},
        1.5,
        {
            25: {"spec.x: Invalid value: 1.5: spec.x in body should be a multiple of 0"},
            27: {
                "spec.x: Invalid value: 0: factor MultipleOf declared for spec.x must be"
                " positive: 0"
            },
        },
    ),
    (
        "a quotient just below a whole number counts as whole in 1.37",
        {"type": "number", "multipleOf": 0.01},
        0.29,  # 100 * 0.29 is 28.999999999999996
        {
            20: {"spec.x: Invalid value: 0.29: spec.x in body should be a multiple of 0.01"},
            36: {"spec.x: Invalid value: 0.29: spec.x in body should be a multiple of 0.01"},
            37: set(),
        },
    ),
    (
        "a quotient just above a whole number counts as whole everywhere",
        {"type": "number", "multipleOf": 0.1},
        0.3,  # 10 * 0.3 is 3.0000000000000004
        {20: set(), 37: set()},
    ),
    (
        "an integer's fractional bound is out of range from 1.36",
        {"type": "integer", "maximum": 1.5},
        1,
        {
            35: set(),
            36: {
                '<nil>: Invalid value: "": Maximum boundary value must be of type integer (default'
                " format) in spec.x"
            },
        },
    ),
    (
        "an integer's fractional bound, then compared as floats",
        {"type": "integer", "maximum": 1.5},
        2,
        {
            20: {"spec.x: Invalid value: 2: spec.x in body should be less than or equal to 1"},
            37: {
                '<nil>: Invalid value: "": Maximum boundary value must be of type integer (default'
                " format) in spec.x",
                "spec.x: Invalid value: 2: spec.x in body should be less than or equal to 1.5",
            },
        },
    ),
    (
        "a string format on an integer: kept until 1.36",
        {"type": "integer", "format": "date"},
        1.5,
        {
            20: {
                'spec.x: Invalid value: "float64": spec.x in body must be of type date: "float64"'
            },
            35: {
                'spec.x: Invalid value: "float64": spec.x in body must be of type date: "float64"'
            },
            36: {
                'spec.x: Invalid value: "number": spec.x in body must be of type integer: "number"',
                '<nil>: Invalid value: "": Checked value must be of type integer (default format)'
                " in spec.x",
            },
        },
    ),
    (
        "an empty string is null to 1.20's type check (the build tested against)",
        {"type": "string"},
        "",
        {
            20: {'spec.x: Invalid value: "null": spec.x in body must be of type string: "null"'},
            25: set(),
        },
    ),
    (
        "an IPv4 address with leading zeros: refused by 1.20's Go, read sloppily from 1.23",
        {"type": "string", "format": "ipv4"},
        "192.168.1.01",
        {
            20: {
                'spec.x: Invalid value: "192.168.1.01": spec.x in body must be of type ipv4:'
                ' "192.168.1.01"'
            },
            25: set(),
            37: set(),
        },
    ),
    (
        "isbn is checked (on every release)",
        {"type": "string", "format": "isbn"},
        "836217463",
        {
            minor: {
                'spec.x: Invalid value: "836217463": spec.x in body must be of type isbn:'
                ' "836217463"'
            }
            for minor in (20, 28, 37)
        },
    ),
    (
        "a date-time needs its zone",
        {"type": "string", "format": "date-time"},
        "2024-01-02T03:04:05",
        {
            minor: {
                'spec.x: Invalid value: "2024-01-02T03:04:05": spec.x in body must be of type'
                ' date-time: "2024-01-02T03:04:05"'
            }
            for minor in (20, 37)
        },
    ),
    (
        "strings are quoted as Go quotes them",
        {"type": "string", "pattern": "^[a-z]+$"},
        "é\t",
        {
            minor: {"spec.x: Invalid value: \"é\\t\": spec.x in body should match '^[a-z]+$'"}
            for minor in (20, 37)
        },
    ),
]


@pytest.mark.parametrize(
    ("schema", "value", "minor", "expected"),
    [case[1:] for case in _flatten(WORDING)],
    ids=[f"{case[0]} @1.{case[3]}" for case in _flatten(WORDING)],
)
def test_wording_by_release(schema: Schema, value: Any, minor: int, expected: set[str]) -> None:
    spec = {"type": "object", "properties": {"x": schema}}
    assert errors_of(root(spec=spec), {"spec": {"x": value}}, minor) == expected


@pytest.mark.parametrize(
    ("minor", "reasons"),
    [
        (20, ["FieldValueInvalid", "FieldValueInvalid", "FieldValueInvalid"]),
        (25, ["FieldValueTypeInvalid", "FieldValueTooLong", "FieldValueTooMany"]),
        (37, ["FieldValueTypeInvalid", "FieldValueTooLong", "FieldValueTooMany"]),
    ],
)
def test_typed_errors_carry_their_reason_from_1_24(minor: int, reasons: list[str]) -> None:
    schema = root(
        a={"type": "integer"},
        b={"type": "string", "maxLength": 1},
        c={"type": "array", "maxItems": 1},
    )
    errors = schema_errors(schema, {"a": "x", "b": "xy", "c": [1, 2]}, minor)
    assert [e.reason for e in errors] == reasons


def test_list_map_duplicates_print_their_key_by_release() -> None:
    schema = root(
        x={
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["a", "b"],
            "items": {"type": "object"},
        }
    )
    obj = {"x": [{"a": "1", "b": 2}, {"a": "1", "b": 2}]}
    assert [str(e) for e in list_type_errors(schema, obj, minor=20)] == [
        'x[1]: Duplicate value: map[string]interface {}{"a":"1", "b":2}'
    ]
    assert [str(e) for e in list_type_errors(schema, obj, minor=37)] == [
        'x[1]: Duplicate value: {"a":"1","b":2}'
    ]


EMBEDDED = root(
    spec={
        "type": "object",
        "properties": {
            "template": {
                "type": "object",
                "x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True,
            },
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "x-kubernetes-preserve-unknown-fields": True,
                },
            },
        },
    }
)
EMBEDDED_CASES: list[Case] = [
    (
        "apiVersion and kind are required",
        EMBEDDED,
        {"spec": {"template": {"metadata": {"name": "a"}}}},
        {
            20: {
                "spec.template.apiVersion: Required value: must not be empty",
                "spec.template.kind: Required value: must not be empty",
            },
            33: {
                "spec.template.apiVersion: Required value: must not be empty",
                "spec.template.kind: Required value: must not be empty",
            },
            34: {"spec.template.apiVersion: Required value", "spec.template.kind: Required value"},
        },
    ),
    (
        "apiVersion with two slashes, kind not a DNS label",
        EMBEDDED,
        {"spec": {"template": {"apiVersion": "a/b/c", "kind": "Config_Map"}}},
        {
            minor: {
                'spec.template.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string:'
                " a/b/c",
                'spec.template.kind: Invalid value: "Config_Map": may have mixed case, but should'
                " otherwise match: a DNS-1035 label must consist of lower case alphanumeric"
                " characters or '-', start with an alphabetic character, and end with an"
                " alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for"
                " validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
            }
            for minor in (20, 37)
        },
    ),
    (
        "metadata of an embedded item: name, namespace, labels",
        EMBEDDED,
        {
            "spec": {
                "items": [
                    {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "metadata": {"name": "a/b", "namespace": "Bad", "labels": {"k": "-v"}},
                    }
                ]
            }
        },
        {
            minor: {
                "spec.items[0].metadata.name: Invalid value: \"a/b\": may not contain '/'",
                'spec.items[0].metadata.namespace: Invalid value: "Bad": a lowercase RFC 1123'
                " label must consist of lower case alphanumeric characters or '-', and must start"
                " and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex"
                " used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                'spec.items[0].metadata.labels: Invalid value: "-v": a valid label must be an'
                " empty string or consist of alphanumeric characters, '-', '_' or '.', and must"
                " start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value', "
                " or '12345', regex used for validation is"
                " '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            }
            for minor in (20, 37)
        },
    ),
    (
        "finalizers are named by the list; orphan and foregroundDeletion exclude each other",
        EMBEDDED,
        {
            "spec": {
                "template": {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"finalizers": ["a b", "orphan", "foregroundDeletion"]},
                }
            }
        },
        {
            20: {
                'spec.template.metadata.finalizers: Invalid value: "a b": name part must consist'
                " of alphanumeric characters, '-', '_' or '.', and must start and end with an"
                " alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used"
                " for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                'spec.template.metadata.finalizers: Invalid value: []string{"a b", "orphan",'
                ' "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both'
                " set",
            },
            37: {
                'spec.template.metadata.finalizers: Invalid value: "a b": name part must consist'
                " of alphanumeric characters, '-', '_' or '.', and must start and end with an"
                " alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used"
                " for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                'spec.template.metadata.finalizers: Invalid value: ["a b","orphan",'
                '"foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set',
            },
        },
    ),
    (
        "a nameless embedded object passes; generateName may be `..`",
        EMBEDDED,
        {
            "spec": {
                "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": ".."}}
            }
        },
        {20: set(), 37: set()},
    ),
]


@pytest.mark.parametrize(
    ("schema", "obj", "minor", "expected"),
    [case[1:] for case in _flatten(EMBEDDED_CASES)],
    ids=[f"{case[0]} @1.{case[3]}" for case in _flatten(EMBEDDED_CASES)],
)
def test_embedded_resources(schema: Schema, obj: Any, minor: int, expected: set[str]) -> None:
    assert {str(e) for e in embedded_resource_errors(schema, obj, minor)} == expected
    assert errors_of(schema, obj, minor) == expected  # after the schema's own errors


def crd(schema: Schema) -> Obj:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                }
            ],
        },
    }


@pytest.mark.parametrize(
    ("version", "message", "reason"),
    [
        (
            "1.20",
            'Invalid value: "abcdef": spec.name in body should be at most 5 chars long',
            "FieldValueInvalid",
        ),
        ("1.28", "Too long: may not be longer than 5", "FieldValueTooLong"),
        ("1.37", "Too long: may not be more than 5 bytes", "FieldValueTooLong"),
    ],
)
def test_a_write_is_refused_in_the_words_of_the_release(
    version: str, message: str, reason: str
) -> None:
    cluster = MemoryCluster(kubernetes_version=version)
    spec = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 5}}}
    cluster.create(
        cluster.discover("apiextensions.k8s.io/v1", "customresourcedefinitions"),
        crd({"type": "object", "properties": {"spec": spec}}),
    )
    widgets = cluster.discover("example.com/v1", "widgets")
    body = {"metadata": {"name": "w", "namespace": "default"}, "spec": {"name": "abcdef"}}
    with pytest.raises(Invalid) as caught:
        cluster.create(widgets, body)
    assert (
        str(caught.value)
        == f'Invalid (422): Widget.example.com "w" is invalid: spec.name: {message}'
    )
    assert caught.value.details["causes"] == [
        {"reason": reason, "message": message, "field": "spec.name"}
    ]

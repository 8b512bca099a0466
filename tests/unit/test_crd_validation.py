"""Custom resources against their CRD's schema, with the API server's verdicts and words.

The first table is ported from apiextensions-apiserver's own tests
(pkg/apiserver/validation/validation_test.go, TestValidateCustomResource, release 1.20); the
second covers each keyword the server enforces, with the messages of kube-openapi's validator;
the third, the string formats' verdicts, from kube-openapi's (pkg/validation/strfmt). How later
releases word the same errors: test_crd_validation_releases.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from reconcile.cluster.errors import Invalid
from reconcile.cluster.memory import (
    MemoryCluster,
    format_check,
    go_float,
    go_json,
    go_quote,
    go_sharp,
    kept_format,
    list_type_errors,
    schema_errors,
)
from reconcile.cluster.types import Obj

Schema = dict[str, Any]
RELEASE_1_20 = 20


def errors_of(schema: Schema, obj: Any, minor: int = RELEASE_1_20) -> set[str]:
    found = schema_errors(schema, obj, minor) + list_type_errors(schema, obj)
    return {str(e) for e in found}


def field(sub: Schema) -> Schema:
    return {"properties": {"field": sub}}


ANY_VALUES: list[Any] = [None, "foo", 42, True, 1.2, [], {}]
INT_OR_STRING: list[Any] = [42, "foo"]
NOT_INT_OR_STRING: list[tuple[Any, str]] = [
    (None, "null"),
    (True, "boolean"),
    (1.2, "number"),
    ({}, "object"),
    ([], "array"),
]
NOT_OBJECT: list[tuple[Any, str]] = [
    ("foo", "string"),
    (42, "integer"),
    (True, "boolean"),
    (1.2, "number"),
    ([], "array"),
]
UPSTREAM: list[tuple[str, Schema, Any, set[str]]] = [
    *[
        (
            f"!nullable rejects {kind}",
            field({"type": "object"}),
            {"field": value},
            {f'field: Invalid value: "{kind}": field in body must be of type object: "{kind}"'},
        )
        for value, kind in [*NOT_OBJECT, (None, "null")]
    ],
    ("!nullable accepts {}", field({"type": "object"}), {"field": {}}, set()),
    *[
        (
            f"nullable rejects {kind}",
            field({"type": "object", "nullable": True}),
            {"field": value},
            {f'field: Invalid value: "{kind}": field in body must be of type object: "{kind}"'},
        )
        for value, kind in NOT_OBJECT
    ],
    ("nullable accepts null", field({"type": "object", "nullable": True}), {"field": None}, set()),
    *[
        (f"nullable, no type accepts {value!r}", field({"nullable": True}), {"field": value}, set())
        for value in ANY_VALUES
    ],
    *[
        (
            f"int-or-string accepts {value!r}",
            field({"x-kubernetes-int-or-string": True}),
            {"field": value},
            set(),
        )
        for value in INT_OR_STRING
    ],
    *[
        (
            f"int-or-string rejects {kind}",
            field({"x-kubernetes-int-or-string": True}),
            {"field": value},
            {
                f'field: Invalid value: "{kind}": field in body must be of type integer,string: '
                f'"{kind}"'
            },
        )
        for value, kind in NOT_INT_OR_STRING
    ],
    (
        "nullable int-or-string accepts null",
        field({"x-kubernetes-int-or-string": True, "nullable": True}),
        {"field": None},
        set(),
    ),
    *[
        (
            f"nullable int-or-string with anyOf rejects {kind}",
            field(
                {
                    "x-kubernetes-int-or-string": True,
                    "nullable": True,
                    "anyOf": [{"type": "integer"}, {"type": "string"}],
                }
            ),
            {"field": value},
            {
                '<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)',
                f'field: Invalid value: "{kind}": field in body must be of type integer,string: '
                f'"{kind}"',
                f'field: Invalid value: "{kind}": field in body must be of type integer: "{kind}"',
            },
        )
        for value, kind in [(True, "boolean"), (1.2, "number"), ({}, "object"), ([], "array")]
    ],
]


@pytest.mark.parametrize(
    ("schema", "obj", "expected"),
    [case[1:] for case in UPSTREAM],
    ids=[case[0] for case in UPSTREAM],
)
def test_upstream_cases(schema: Schema, obj: Any, expected: set[str]) -> None:
    assert errors_of(schema, obj) == expected


SPEC = "spec.x"
KEYWORDS: list[tuple[str, Schema, Any, set[str]]] = [
    (
        "type integer",
        {"type": "integer"},
        "3",
        {'spec.x: Invalid value: "string": spec.x in body must be of type integer: "string"'},
    ),
    ("integral float is an integer", {"type": "integer"}, 3.0, set()),
    ("integer is a number", {"type": "number"}, 3, set()),
    (
        "enum",
        {"type": "string", "enum": ["a", "b"]},
        "c",
        {'spec.x: Unsupported value: "c": supported values: "a", "b"'},
    ),
    (
        "enum of numbers",
        {"type": "integer", "enum": [1, 2]},
        3,
        {'spec.x: Unsupported value: 3: supported values: "1", "2"'},
    ),
    (
        "pattern",
        {"type": "string", "pattern": "^[a-z]+$"},
        "A1",
        {"spec.x: Invalid value: \"A1\": spec.x in body should match '^[a-z]+$'"},
    ),
    (
        "maxLength",
        {"type": "string", "maxLength": 2},
        "abc",
        {'spec.x: Invalid value: "abc": spec.x in body should be at most 2 chars long'},
    ),
    (
        "minLength",
        {"type": "string", "minLength": 2},
        "a",
        {'spec.x: Invalid value: "a": spec.x in body should be at least 2 chars long'},
    ),
    (
        "maximum",
        {"type": "integer", "maximum": 5},
        9,
        {"spec.x: Invalid value: 9: spec.x in body should be less than or equal to 5"},
    ),
    (
        "exclusiveMaximum",
        {"type": "integer", "maximum": 5, "exclusiveMaximum": True},
        5,
        {"spec.x: Invalid value: 5: spec.x in body should be less than 5"},
    ),
    (
        "minimum",
        {"type": "integer", "minimum": 1},
        0,
        {"spec.x: Invalid value: 0: spec.x in body should be greater than or equal to 1"},
    ),
    (
        "exclusiveMinimum",
        {"type": "number", "minimum": 1.5, "exclusiveMinimum": True},
        1.5,
        {"spec.x: Invalid value: 1.5: spec.x in body should be greater than 1.5"},
    ),
    (
        "multipleOf",
        {"type": "integer", "multipleOf": 2},
        3,
        {"spec.x: Invalid value: 3: spec.x in body should be a multiple of 2"},
    ),
    (
        "multipleOf of a float",
        {"type": "number", "multipleOf": 0.5},
        0.75,
        {"spec.x: Invalid value: 0.75: spec.x in body should be a multiple of 0.5"},
    ),
    ("multipleOf holds", {"type": "number", "multipleOf": 0.5}, 1.5, set()),
    (
        "maxItems",
        {"type": "array", "maxItems": 1, "items": {"type": "integer"}},
        [1, 2],
        {"spec.x: Invalid value: 2: spec.x in body should have at most 1 items"},
    ),
    (
        "minItems",
        {"type": "array", "minItems": 2, "items": {"type": "integer"}},
        [1],
        {"spec.x: Invalid value: 1: spec.x in body should have at least 2 items"},
    ),
    (
        "items, 1.20 paths",  # the array's path alone, as the 1.20 API server says it
        {"type": "array", "items": {"type": "integer"}},
        [1, "a"],
        {'spec.x: Invalid value: "string": spec.x in body must be of type integer: "string"'},
    ),
    (
        "uniqueItems",
        {"type": "array", "uniqueItems": True},
        [1, 1],
        {'spec.x: Invalid value: "": spec.x in body shouldn\'t contain duplicates'},
    ),
    (
        "maxProperties",
        {"type": "object", "maxProperties": 1},
        {"a": 1, "b": 2},
        {"spec.x: Invalid value: 1: spec.x in body should have at most 1 properties"},
    ),
    (
        "minProperties",
        {"type": "object", "minProperties": 2},
        {"a": 1},
        {"spec.x: Invalid value: 2: spec.x in body should have at least 2 properties"},
    ),
    ("required", {"type": "object", "required": ["a"]}, {}, {"spec.x.a: Required value"}),
    (
        "additionalProperties",
        {"type": "object", "additionalProperties": {"type": "string"}},
        {"a": 1},
        {'spec.x.a: Invalid value: "integer": spec.x.a in body must be of type string: "integer"'},
    ),
    (
        "oneOf, none valid",
        {"oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
        {},
        {
            '<nil>: Invalid value: "": "spec.x" must validate one and only one schema (oneOf).'
            " Found none valid",
            "spec.x.a: Required value",
        },
    ),
    (
        "oneOf, two valid",
        {"oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
        {"a": 1, "b": 2},
        {
            '<nil>: Invalid value: "": "spec.x" must validate one and only one schema (oneOf).'
            " Found 2 valid alternatives"
        },
    ),
    ("oneOf, one valid", {"oneOf": [{"required": ["a"]}, {"required": ["b"]}]}, {"a": 1}, set()),
    (
        "allOf",
        {"allOf": [{"minimum": 1}, {"maximum": 3}]},
        4,
        {
            '<nil>: Invalid value: "": "spec.x" must validate all the schemas (allOf)',
            "spec.x: Invalid value: 4: spec.x in body should be less than or equal to 3",
        },
    ),
    (
        "not",
        {"type": "string", "not": {"enum": ["x"]}},
        "x",
        {'<nil>: Invalid value: "": "spec.x" must not validate the schema (not)'},
    ),
    (
        "format date",
        {"type": "string", "format": "date"},
        "2024-13-01",
        {'spec.x: Invalid value: "2024-13-01": spec.x in body must be of type date: "2024-13-01"'},
    ),
    (
        "format date-time",
        {"type": "string", "format": "date-time"},
        "yesterday",
        {
            'spec.x: Invalid value: "yesterday": spec.x in body must be of type date-time:'
            ' "yesterday"'
        },
    ),
    (
        "format date-time holds",
        {"type": "string", "format": "date-time"},
        "2024-01-02T03:04:05Z",
        set(),
    ),
    (
        "format byte",
        {"type": "string", "format": "byte"},
        "not base64!",
        {
            'spec.x: Invalid value: "not base64!": spec.x in body must be of type byte: "not'
            ' base64!"'
        },
    ),
    (
        "format uuid",
        {"type": "string", "format": "uuid"},
        "nope",
        {'spec.x: Invalid value: "nope": spec.x in body must be of type uuid: "nope"'},
    ),
    (
        "format ipv4",
        {"type": "string", "format": "ipv4"},
        "1.2.3",
        {'spec.x: Invalid value: "1.2.3": spec.x in body must be of type ipv4: "1.2.3"'},
    ),
    ("format int32 is dropped by the server", {"type": "integer", "format": "int32"}, 2**40, set()),
    ("unknown format is dropped", {"type": "string", "format": "k8s-anything"}, "x", set()),
    (
        "list-type set",
        {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        ["a", "b", "a"],
        {'spec.x[2]: Duplicate value: "a"'},
    ),
    (
        "list-type map",
        {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object"},
        },
        [{"name": "a", "v": 1}, {"name": "a", "v": 2}],
        {'spec.x[1]: Duplicate value: map[string]interface {}{"name":"a"}'},
    ),
]


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [case[1:] for case in KEYWORDS],
    ids=[case[0] for case in KEYWORDS],
)
def test_keywords(schema: Schema, value: Any, expected: set[str]) -> None:
    root = {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {"x": schema}}},
    }
    assert errors_of(root, {"spec": {"x": value}}) == expected


def test_array_items_are_bracketed_since_1_24() -> None:
    schema = {"properties": {"x": {"type": "array", "items": {"type": "integer"}}}}
    assert errors_of(schema, {"x": ["a"]}, minor=25) == {
        'x[0]: Invalid value: "string": x[0] in body must be of type integer: "string"'
    }


# kube-openapi's strfmt tests (default_test.go, date_test.go, time_test.go, duration_test.go)
FORMAT_SAMPLES: dict[str, tuple[list[str], list[str]]] = {
    "email": (
        [
            "blah@gmail.com",
            "test@d.verylongtoplevel",
            "email+tag@gmail.com",
            '" "@example.com',
            '"Abc\\@def"@example.com',
            '"Fred Bloggs"@example.com',
            '"Joe\\\\Blow"@example.com',
            '"Abc@def"@example.com',
            "customer/department=shipping@example.com",
            "!#$%&'*+-/=?^_`{}|~@example.com",
            "postmaster@\u2601\u2192\u2744.ws",
            "root@localhost",
            "Jane Doe <jane@example.com>",
        ],
        ["somebody@somewhere@com", "a..b@c", "plainaddress", "Jane <jane@example.com"],
    ),
    "hostname": (
        [
            "somewhere.com",
            "888.com",
            "1.2.3.4.com",
            "xn--bcher-kva.example.com",
            "\u2601\u2192\u2744.ws",
            "www.example.\u00f4l\u00e0",
            "ex$ample",
            "localhost",
            "x-y",
            "ex=ample.com",
            "<foo>",
            "www.\u8a79\u59c6\u65af.london",
        ],
        [
            "somewhere.com!",
            "user@email.domain",
            "1.1.1.1",
            "a" * 256,
            "x.y." + "a" * 64,
            "www.example-.org",
            "-www.example.org",
            "www.ex ample.org",
            "_www.example.org",
            "www.\u8a79\u59c6\u65af.x",
            "a.b.c.d",
            "x.",
            "my-host-name",  # one `-` in a name without a dot
        ],
    ),
    "ipv4": (["127.0.0.1", "192.168.1.01"], ["198.168.254.2.2", "256.1.1.1", "::1"]),
    "ipv6": (["::1", "2001:db8::1", "::ffff:1.2.3.4"], ["127.0.0.1", "fe80::1%eth0", "1::2::3"]),
    "cidr": (
        ["192.0.2.1/24", "192.0.02.1/24", "2001:db8:a0b:12f0::1/32"],
        ["198.168.254.2", "2001:db8:a0b:12f0::1", "1.2.3.4/33"],
    ),
    "mac": (
        ["01:02:03:04:05:06", "01-02-03-04-05-06", "0102.0304.0506"],
        ["01:02:03:04:05", "01:02:03:04:05:06:07", "01:02-03:04:05:06"],
    ),
    "isbn": (["0321751043", "978-0321751041"], ["836217463"]),
    "isbn10": (["0321751043"], ["836217463"]),
    "isbn13": (["978-0321751041"], ["978-0321751042"]),
    "creditcard": (["4111-1111-1111-1111", "4012-8888-8888-1881"], ["9999-9999-9999-999"]),
    "ssn": (["111-11-1111", "999 99 9999"], ["999 99 999", "123456789"]),
    "hexcolor": (["#FFFFFF", "#000"], ["#fffffffz"]),
    "rgbcolor": (["rgb(255,255,255)", "rgb( 0 , 0 , 0 )"], ["rgb(300,0,0)"]),
    "byte": (["ZWxpemFiZXRocG9zZXk="], ["ZWxpemFiZXRocG9zZXk", ""]),
    "password": (["super secret stuff here"], []),
    "date": (
        ["2017-12-22", "2000-02-29", "2400-02-29"],
        [
            "2017-1-1",
            "17-13-22",
            "2017-02-29",
            "1900-02-29",
            "2017-12-32",
            "20171-12-32",
            "YYYY-MM-DD",
            "2017-12-22T01:02:03Z",
            "2024-W01-1",
        ],
    ),
    "date-time": (
        ["2014-12-15T08:00:00.000Z", "2011-08-18T19:03:37.000+01:00", "0001-01-01T00:00:00.000Z"],
        [
            "zor",
            "zorgTx",
            "1972-12-31Tx",
            "1972-12-31T24:40:00.000Z",
            "1972-12-31T23:63:00.000Z",
            "1972-12-31T23:59:60.000Z",
            "2014-12-15T08:00:00",
        ],
    ),
    "duration": (
        [
            "1ns",
            "1\u00b5s",
            "1hr",
            "1wk",
            "1  milliseconds",
            "45 weekz",
            "12 minutes",
            "1h30m",
            "0",
        ],
        ["45 weeekks", "12 phours", "", "1"],
    ),
    "uri": (
        ["http://somewhere.com", "/path", "mailto:a@b", "*"],
        ["somewhere.com", "http://a/%zz"],
    ),
    "uuid": (["123e4567-e89b-12d3-a456-426614174000"], ["not-a-uuid"]),
    "bsonobjectid": (["507f1f77bcf86cd799439011"], ["507f1f77bcf86cd79943901"]),
    "k8s-short-name": (["a", "a-b"], ["a-", "A"]),
    "k8s-long-name": (["a.b-c"], ["a.-"]),
}


@pytest.mark.parametrize(
    ("format_name", "text", "valid"),
    [
        (name, text, valid)
        for name, (good, bad) in FORMAT_SAMPLES.items()
        for valid, samples in ((True, good), (False, bad))
        for text in samples
    ],
)
def test_string_formats_as_kube_openapi_checks_them(
    format_name: str, text: str, valid: bool
) -> None:
    check = format_check(format_name, 37)
    assert check is not None
    assert check(text) is valid


@pytest.mark.parametrize(
    ("schema", "minor", "kept"),
    [
        ({"type": "string", "format": "date-time"}, 20, "date-time"),
        ({"type": "string", "format": "creditcard"}, 20, "creditcard"),
        ({"type": "string", "format": "k8s-short-name"}, 34, ""),
        ({"type": "string", "format": "k8s-short-name"}, 35, "k8s-short-name"),
        ({"type": "integer", "format": "int32"}, 35, ""),
        ({"type": "integer", "format": "int32"}, 36, "int32"),
        ({"type": "number", "format": "double"}, 37, "double"),
        ({"type": "integer", "format": "date"}, 35, "date"),
        ({"type": "integer", "format": "date"}, 36, ""),
        ({"type": "array", "format": "uri"}, 36, ""),
        ({"x-kubernetes-int-or-string": True, "format": "uri"}, 37, "uri"),
        ({"type": "string", "format": "Date"}, 37, ""),
    ],
)
def test_the_formats_each_release_keeps(schema: Schema, minor: int, kept: str) -> None:
    assert kept_format(schema, minor) == kept


def test_values_print_as_go_prints_them() -> None:
    assert go_quote('a"\\\té\x01\u00a0') == '"a\\"\\\\\\té\\x01\\u00a0"'
    assert (
        go_json({"b": [1, 2.0, None], "a": "<&>"}) == '{"a":"\\u003c\\u0026\\u003e","b":[1,2,null]}'
    )
    assert go_json(1e21) == "1e+21"
    assert go_json(1e-7) == "1e-7"
    assert go_sharp({"a": [1, "x"], "b": None}) == (
        'map[string]interface {}{"a":[]interface {}{1, "x"}, "b":interface {}(nil)}'
    )


@pytest.mark.parametrize(
    ("value", "printed"),
    [
        (5.0, "5"),
        (0.5, "0.5"),
        (1e6, "1e+06"),
        (123456.0, "123456"),
        (1e-5, "1e-05"),
        (-2.25, "-2.25"),
    ],
)
def test_floats_print_as_go_prints_them(value: float, printed: str) -> None:
    assert go_float(value) == printed


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


def test_a_write_that_breaks_the_schema_is_invalid_with_field_causes() -> None:
    cluster = MemoryCluster(kubernetes_version="1.20")
    spec = {"type": "object", "properties": {"replicas": {"type": "integer", "maximum": 5}}}
    cluster.create(
        cluster.discover("apiextensions.k8s.io/v1", "customresourcedefinitions"),
        crd({"type": "object", "properties": {"spec": spec}}),
    )
    widgets = cluster.discover("example.com/v1", "widgets")
    body = {"metadata": {"name": "w", "namespace": "default"}, "spec": {"replicas": 9}}
    with pytest.raises(Invalid) as caught:
        cluster.create(widgets, body)
    assert str(caught.value) == (
        'Invalid (422): Widget.example.com "w" is invalid: spec.replicas: Invalid value: 9:'
        " spec.replicas in "
        "body should be less than or equal to 5"
    )
    assert caught.value.details["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: 9: spec.replicas in body should be less than or equal to 5",
            "field": "spec.replicas",
        }
    ]

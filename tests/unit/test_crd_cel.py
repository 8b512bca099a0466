"""CEL validation rules (`x-kubernetes-validations`) on custom resources, with the API server's
verdicts and words.

Ported from apiextensions-apiserver's schema/cel/validation_test.go (TestValidationExpressions,
TestValidationExpressionsAtSchemaLevels, TestMessageExpression, TestReasonAndFldPath,
TestRatcheting, TestOptionalOldSelf) and the libraries' tests in k8s.io/apiserver/pkg/cel/library
(lists, regex, urls, quantity, ip, cidr, format), plus the release gates of each feature.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from reconcile.cluster.errors import Invalid
from reconcile.cluster.memory import MemoryCluster, apply_schema

Schema = dict[str, Any]
LATEST = 37
INT64_MAX = 2**63 - 1


def errors_of(schema: Schema, obj: Any, old: Any = None, minor: int = LATEST) -> list[str]:
    return [str(e) for e in apply_schema(schema, copy.deepcopy(obj), minor, old=old)]


def vals(*types: Schema, rule: str, **extra: Any) -> Schema:
    """An object with properties val1..valN, and `rule` on it (the Go tests' `objs`/`schemas`)."""
    props = {f"val{i + 1}": t for i, t in enumerate(types)}
    return {
        "type": "object",
        "properties": props,
        "x-kubernetes-validations": [{"rule": rule, **extra}],
    }


def objs(*values: Any) -> dict[str, Any]:
    return {f"val{i + 1}": value for i, value in enumerate(values)}


INTEGER: Schema = {"type": "integer"}
NUMBER: Schema = {"type": "number"}
STRING: Schema = {"type": "string"}
BOOLEAN: Schema = {"type": "boolean"}
BYTES: Schema = {"type": "string", "format": "byte"}
DURATION: Schema = {"type": "string", "format": "duration"}
DATE: Schema = {"type": "string", "format": "date"}
DATE_TIME: Schema = {"type": "string", "format": "date-time"}
INT_OR_STRING: Schema = {"x-kubernetes-int-or-string": True}
STRINGS: Schema = {"type": "array", "items": STRING}
INTEGERS: Schema = {"type": "array", "items": INTEGER}


def failed(rule: str, path: str = "<nil>", value: str = "") -> str:
    return f"{path}: Invalid value: {value + ': ' if value else ''}failed rule: {rule}"


# (types, values, rules that hold) — each rule is one case of the table
VALID: list[tuple[str, tuple[Schema, ...], tuple[Any, ...], list[str]]] = [
    (
        "integers",
        (INTEGER, INTEGER, {"type": "integer", "format": "int32"}),
        (INT64_MAX, INT64_MAX, 2**31 - 1),
        [
            "self.val1 == self.val2",
            f"self.val1 == {INT64_MAX}",
            "type(self.val1) == int",
            f"self.val3 + 1 == {2**31 - 1} + 1",
            "type(self.val3) == int",
        ],
    ),
    (
        "numbers",
        (NUMBER, NUMBER, NUMBER),
        (1.5, 1.5, 1),
        [
            "self.val1 == self.val2",
            "type(self.val1) == double",
            "type(self.val3) == double",
            "self.val3 == 1.0",
        ],
    ),
    (
        "numeric comparisons",
        (INTEGER, INTEGER, INTEGER, NUMBER, NUMBER),
        (5, 10, 15, 10.0, 10),
        [
            "double(self.val1) < self.val4",
            "double(self.val2) == self.val4",
            "self.val1 < int(self.val4)",
            "self.val3 > int(self.val5)",
            "self.val1 < self.val4",
            "self.val3 >= self.val4",
            "self.val1 < self.val5",
            "5 < 10.0",
            "self.val1 < 10.0",
        ],
    ),
    (
        "unicode strings",
        (STRING, STRING),
        ("Rook takes 👑", "Rook takes 👑"),
        [
            "self.val1 == self.val2",
            "self.val1 == 'Rook takes 👑'",
            "self.val1.startsWith('Rook')",
            "!self.val1.startsWith('knight')",
            "self.val1.contains('takes')",
            "self.val1.endsWith('👑')",
            "self.val1.matches('^[^0-9]*$')",
            "!self.val1.matches('^[0-9]*$')",
            "type(self.val1) == string",
            "size(self.val1) == 12",
            "self.val1.charAt(3) == 'k'",
            "self.val1.indexOf('o') == 1",
            "self.val1.indexOf('o', 2) == 2",
            "self.val1.replace(' ', 'x') == 'Rookxtakesx👑'",
            "self.val1.replace(' ', 'x', 1) == 'Rookxtakes 👑'",
            "self.val1.split(' ') == ['Rook', 'takes', '👑']",
            "self.val1.split(' ', 2) == ['Rook', 'takes 👑']",
            "self.val1.substring(5) == 'takes 👑'",
            "self.val1.substring(0, 4) == 'Rook'",
            "self.val1.substring(4, 10).trim() == 'takes'",
            "self.val1.upperAscii() == 'ROOK TAKES 👑'",
            "self.val1.lowerAscii() == 'rook takes 👑'",
            "'%d %s %f %s %s'.format([1, 'abc', 1.0, duration('1m'), "
            "timestamp('2000-01-01T00:00:00.000Z')]) == '1 abc 1.000000 60s 2000-01-01T00:00:00Z'",
            "'%e'.format([3.14]) == '3.140000×10⁰⁰'",  # noqa: RUF001
            "'%o %o %o'.format([7, 8, 9]) == '7 10 11'",
            "'%b %b %b'.format([7, 8, 9]) == '111 1000 1001'",
        ],
    ),
    ("escaped strings", (STRING,), ("l1\nl2",), ["self.val1 == 'l1\\nl2'"]),
    (
        "bytes",
        (BYTES, BYTES),
        ("QUI=", "QUI="),
        [
            "self.val1 == self.val2",
            "self.val1 == b'AB'",
            "self.val1 == bytes('AB')",
            "self.val1 == b'\\x41\\x42'",
            "type(self.val1) == bytes",
            "size(self.val1) == 2",
        ],
    ),
    (
        "booleans",
        (BOOLEAN, BOOLEAN, BOOLEAN),
        (True, True, False),
        [
            "self.val1 == self.val2",
            "self.val1 != self.val3",
            "type(self.val1) == bool",
        ],
    ),
    (
        "duration format",
        (DURATION, DURATION),
        ("1h2m3s4ms", "1h2m3s4ms"),
        [
            "self.val1 == self.val2",
            "self.val1 == duration('1h2m') + duration('3s4ms')",
            "self.val1.getHours() == 1",
            "self.val1.getMinutes() == 62",
            "self.val1.getSeconds() == 3723",
            "self.val1.getMilliseconds() == 3723004",
        ],
    ),
    (
        "date format",
        (DATE, DATE),
        ("1997-07-16", "1997-07-16"),
        [
            "self.val1 == timestamp('1997-07-16T00:00:00.000Z')",
            "self.val1.getDate() == 16",
            "self.val1.getMonth() == 06",
            "self.val1.getFullYear() == 1997",
        ],
    ),
    (
        "date-time format",
        (DATE_TIME,),
        ("2011-08-18T19:03:37.010000000+01:00",),
        [
            "self.val1 == timestamp('2011-08-18T19:03:37.010+01:00')",
            "self.val1 == timestamp('2011-08-18T00:00:00.000+01:00') + duration('19h3m37s10ms')",
            "self.val1.getDate('01:00') == 18",
            "self.val1.getMonth('01:00') == 7",
            "self.val1.getHours('01:00') == 19",
            "self.val1.getHours('UTC') == 18",
        ],
    ),
    (
        "conversions",
        (INTEGER, NUMBER, NUMBER, STRING),
        (10, 10.0, 10.49, "10"),
        [
            "int(self.val2) == self.val1",
            "int(self.val3) == self.val1",
            "int(self.val4) == self.val1",
            "double(self.val1) == self.val2",
            "string(self.val1) == self.val4",
        ],
    ),
    (
        "lists",
        (INTEGERS, STRINGS),
        ([1, 2, 3], ["a", "b", "c"]),
        [
            "self.val1.all(x, x > 0)",
            "self.val1.exists(x, x == 2)",
            "self.val1.exists_one(x, x == 2)",
            "self.val1.map(x, x * 2) == [2, 4, 6]",
            "self.val1.filter(x, x > 1) == [2, 3]",
            "size(self.val1) == 3",
            "2 in self.val1",
            "self.val1[0] == 1",
            "self.val2.join() == 'abc'",
            "self.val2.join('-') == 'a-b-c'",
        ],
    ),
    (
        "int-or-string",
        (INT_OR_STRING, INT_OR_STRING),
        (5, "5%"),
        [
            "self.val1 == 5",
            "type(self.val1) == int",
            "type(self.val2) == string",
            "self.val2 == '5%'",
            "self.val1 != 'x'",
        ],
    ),
    # k8s.io/apiserver/pkg/cel/library: lists_test.go
    (
        "library lists",
        (INTEGERS, INTEGERS),
        ([1, 2, 3], []),
        [
            "self.val1.isSorted()",
            "![3, 1].isSorted()",
            "['a', 'b'].isSorted()",
            "self.val1.sum() == 6",
            "self.val2.sum() == 0",
            "[1.5, 2.5].sum() == 4.0",
            "self.val1.min() == 1",
            "self.val1.max() == 3",
            "[1, 2, 1].indexOf(1) == 0",
            "[1, 2, 1].lastIndexOf(1) == 2",
            "[1, 2].indexOf(5) == -1",
            "[duration('1s'), duration('2s')].sum() == duration('3s')",
        ],
    ),
    # regex_test.go
    (
        "library regex",
        (STRING,),
        ("abc 123 def 456",),
        [
            "self.val1.find('[0-9]+') == '123'",
            "self.val1.find('xyz') == ''",
            "self.val1.findAll('[0-9]+') == ['123', '456']",
            "self.val1.findAll('[0-9]+', 1) == ['123']",
            "self.val1.findAll('xyz') == []",
        ],
    ),
    # urls_test.go
    (
        "library urls",
        (STRING,),
        ("https://user:pass@example.com:80/path?query=val#fragment",),
        [
            "isURL(self.val1)",
            "!isURL('../relative-path')",
            "!isURL('https://a:b:c/')",
            "url(self.val1).getScheme() == 'https'",
            "url(self.val1).getHost() == 'example.com:80'",
            "url(self.val1).getHostname() == 'example.com'",
            "url(self.val1).getPort() == '80'",
            "url(self.val1).getEscapedPath() == '/path'",
            "url(self.val1).getQuery() == {'query': ['val']}",
            "url('/absolute-path').getEscapedPath() == '/absolute-path'",
            "url('https://[::1]:80/path').getHostname() == '::1'",
        ],
    ),
    # quantity_test.go
    (
        "library quantity",
        (STRING,),
        ("1Mi",),
        [
            "quantity(self.val1) == quantity('1048576')",
            "isQuantity(self.val1)",
            "!isQuantity('1__')",
            "quantity('50k').isGreaterThan(quantity('50'))",
            "quantity('50m').isLessThan(quantity('50'))",
            "quantity('50M').compareTo(quantity('50M')) == 0",
            "quantity('200M').compareTo(quantity('0.2G')) == 0",
            "quantity('50k').add(quantity('20')) == quantity('50.02k')",
            "quantity('50k').sub(20) == quantity('49980')",
            "quantity('50k').asInteger() == 50000",
            "quantity('50m').isInteger() == false",
            "quantity('5e-2').asApproximateFloat() == 0.05",
            "quantity('-5').sign() == -1",
        ],
    ),
    # ip_test.go, cidr_test.go
    (
        "library ip and cidr",
        (STRING, STRING),
        ("192.168.0.1", "192.168.0.0/24"),
        [
            "isIP(self.val1)",
            "!isIP('192.168.0.1/24')",
            "!isIP('::ffff:192.168.0.1')",
            "ip(self.val1).family() == 4",
            "ip('2001:db8::68').family() == 6",
            "ip.isCanonical('2001:db8::68')",
            "!ip.isCanonical('2001:DB8::68')",
            "ip('127.0.0.1').isLoopback()",
            "ip('0.0.0.0').isUnspecified()",
            "ip('169.254.1.1').isLinkLocalUnicast()",
            "ip('224.0.0.1').isLinkLocalMulticast()",
            "ip(self.val1).isGlobalUnicast()",
            "ip('192.168.0.1') == ip('192.168.0.1')",
            "string(ip('2001:db8::68')) == '2001:db8::68'",
            "cidr(self.val2).containsIP(self.val1)",
            "cidr(self.val2).containsIP(ip('192.168.0.9'))",
            "!cidr(self.val2).containsIP('192.168.1.1')",
            "cidr(self.val2).containsCIDR('192.168.0.0/25')",
            "!cidr(self.val2).containsCIDR(cidr('192.168.0.0/16'))",
            "cidr('192.168.0.1/24').ip() == ip('192.168.0.1')",
            "cidr('192.168.0.1/24').masked() == cidr('192.168.0.0/24')",
            "cidr(self.val2).prefixLength() == 24",
            "isCIDR(self.val2)",
            "!isCIDR('192.168.0.0')",
        ],
    ),
    # format_test.go
    (
        "library format",
        (STRING, STRING),
        ("my-name", "My_Name"),
        [
            "!format.dns1123Label().validate(self.val1).hasValue()",
            "format.dns1123Label().validate(self.val2).hasValue()",
            "format.named('dns1123Subdomain').value().validate('a.b').orValue([]) == []",
            "!format.named('unknown').hasValue()",
            "!format.labelValue().validate(self.val2).hasValue()",
            "format.uuid().validate('x').hasValue()",
        ],
    ),
    (
        "optional",
        (STRING,),
        ("x",),
        [
            "optional.of(self.val1).hasValue()",
            "!optional.none().hasValue()",
            "optional.none().orValue('y') == 'y'",
            "optional.of(1).value() == 1",
            "optional.ofNonZeroValue('').orValue('z') == 'z'",
            "sets.contains([1, 2, 3], [3, 1])",
            "sets.equivalent([1, 2], [2, 1, 1])",
            "sets.intersects([1], [1, 2])",
            "strings.quote('a\"b') == '\"a\\\\\"b\"'",
        ],
    ),
]

CASES: list[tuple[str, Schema, Any, Any, int, list[str]]] = [
    (f"{group}: {rule}", vals(*types, rule=rule), objs(*values), None, LATEST, [])
    for group, types, values, rules in VALID
    for rule in rules
]

# (name, schema, object, old object, release, the server's errors)
CASES += [
    (
        "integer overflow",
        vals(INTEGER, rule="self.val1 + 1 == 0"),
        objs(INT64_MAX),
        None,
        LATEST,
        ['<nil>: Invalid value: "object": integer overflow evaluating rule: self.val1 + 1 == 0'],
    ),
    (
        "division by zero",
        vals(INTEGER, rule="1 / 0 == 1 / 0"),
        objs(1),
        None,
        LATEST,
        ['<nil>: Invalid value: "object": division by zero evaluating rule: 1 / 0 == 1 / 0'],
    ),
    (
        "no such key",
        vals(INTEGER, INTEGER, rule="self.val2 == 1"),
        objs(1),
        None,
        LATEST,
        ['<nil>: Invalid value: "object": no such key: val2 evaluating rule: self.val2 == 1'],
    ),
    (
        "index out of bounds",
        vals(INTEGERS, rule="self.val1[5] == 1"),
        objs([1]),
        None,
        LATEST,
        [
            '<nil>: Invalid value: "object": index out of bounds: 5 evaluating rule: '
            "self.val1[5] == 1"
        ],
    ),
    (
        "has() on absent field",
        vals(INTEGER, INTEGER, rule="!has(self.val2)"),
        objs(1),
        None,
        LATEST,
        [],
    ),
    (
        "int-or-string overload",
        vals(INT_OR_STRING, rule="self.val1 + 1 == 2"),
        objs("a"),
        None,
        LATEST,
        [
            "<nil>: Invalid value: \"object\": 'no such overload': call arguments did not match "
            "a supported operator, function or macro signature for rule: self.val1 + 1 == 2"
        ],
    ),
    (
        "empty list min",
        vals(INTEGERS, rule="self.val1.min() == 0"),
        objs([]),
        None,
        LATEST,
        [
            '<nil>: Invalid value: "object": min called on empty list evaluating rule: '
            "self.val1.min() == 0"
        ],
    ),
    (
        "charAt out of range",
        vals(STRING, rule="self.val1.charAt(10) == 'a'"),
        objs("abc"),
        None,
        LATEST,
        [
            '<nil>: Invalid value: "object": index out of range: 10 evaluating rule: '
            "self.val1.charAt(10) == 'a'"
        ],
    ),
    (
        "invalid url",
        vals(STRING, rule="url(self.val1).getScheme() == 'https'"),
        objs("x y"),
        None,
        LATEST,
        [
            '<nil>: Invalid value: "object": URL parse error during conversion from '
            'string: parse "x y": invalid character in URL evaluating rule: '
            "url(self.val1).getScheme() == 'https'"
        ],
    ),
    (
        "invalid quantity",
        vals(STRING, rule="quantity(self.val1).sign() == 1"),
        objs("1__"),
        None,
        LATEST,
        [
            '<nil>: Invalid value: "object": quantities must match the regular expression '
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' evaluating rule: "
            "quantity(self.val1).sign() == 1"
        ],
    ),
    (
        "ipv4-mapped ipv6 refused",
        vals(STRING, rule="ip(self.val1).family() == 6"),
        objs("::ffff:1.2.3.4"),
        None,
        LATEST,
        [
            '<nil>: Invalid value: "object": IPv4-mapped IPv6 address is not allowed '
            "evaluating rule: "
            "ip(self.val1).family() == 6"
        ],
    ),
    ("error absorbed by ||", vals(INTEGER, rule="1 / 0 == 1 || true"), objs(1), None, LATEST, []),
    (
        "false rule, no message",
        vals(INTEGER, rule="self.val1 > 5"),
        objs(1),
        None,
        LATEST,
        [failed("self.val1 > 5")],
    ),
    (
        "false rule, message",
        vals(INTEGER, rule="self.val1 > 5", message="val1 must be > 5"),
        objs(1),
        None,
        LATEST,
        ["<nil>: Invalid value: val1 must be > 5"],
    ),
]

# Rules at each level of the schema (TestValidationExpressionsAtSchemaLevels, the brief's example)
MIN_MAX: Schema = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {"min": INTEGER, "max": INTEGER},
            "x-kubernetes-validations": [
                {"rule": "self.min <= self.max", "message": "min must be <= max"}
            ],
        }
    },
}
LEVELS: Schema = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "x-kubernetes-validations": [{"rule": "self.size() < 5"}],
                },
                "names": {
                    "type": "array",
                    "items": {
                        "type": "string",
                        "x-kubernetes-validations": [{"rule": "self != 'x'"}],
                    },
                    "x-kubernetes-validations": [{"rule": "size(self) < 3"}],
                },
                "labels": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "string",
                        "x-kubernetes-validations": [{"rule": "self.startsWith('v')"}],
                    },
                    "x-kubernetes-validations": [{"rule": "'app' in self"}],
                },
                "nullable": {
                    "type": "string",
                    "nullable": True,
                    "x-kubernetes-validations": [{"rule": "self == 'never'"}],
                },
                "embedded": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "x-kubernetes-preserve-unknown-fields": True,
                    "x-kubernetes-validations": [
                        {"rule": "self.kind == 'Pod'"},
                        {"rule": "self.metadata.name == 'p'"},
                    ],
                },
                "escaped-name": {"type": "string"},
                "namespace": {"type": "string"},
            },
            "x-kubernetes-validations": [
                {"rule": "!has(self.escaped__dash__name) || self.escaped__dash__name == 'ok'"},
                {"rule": "!has(self.__namespace__) || self.__namespace__ == 'ns'"},
            ],
        }
    },
    "x-kubernetes-validations": [
        {"rule": "self.metadata.name.startsWith('a')"},
        {"rule": "self.kind == 'Thing' && self.apiVersion == 'x/v1'"},
    ],
}
THING = {"apiVersion": "x/v1", "kind": "Thing", "metadata": {"name": "a1", "namespace": "d"}}


def thing(spec: dict[str, Any], name: str = "a1") -> dict[str, Any]:
    return {**THING, "metadata": {"name": name}, "spec": spec}


CASES += [
    (
        "brief: message",
        MIN_MAX,
        {"spec": {"min": 3, "max": 1}},
        None,
        34,
        ['spec: Invalid value: "object": min must be <= max'],
    ),
    (
        "brief: message, 1.35 omits an object's value",
        MIN_MAX,
        {"spec": {"min": 3, "max": 1}},
        None,
        35,
        ["spec: Invalid value: min must be <= max"],
    ),
    ("brief: holds", MIN_MAX, {"spec": {"min": 1, "max": 3}}, None, LATEST, []),
    ("1.20 knows no rules", MIN_MAX, {"spec": {"min": 3, "max": 1}}, None, 20, []),
    (
        "1.25: rules are beta and on",
        MIN_MAX,
        {"spec": {"min": 3, "max": 1}},
        None,
        25,
        ['spec: Invalid value: "object": min must be <= max'],
    ),
    (
        "levels: all hold",
        LEVELS,
        thing(
            {
                "name": "ab",
                "names": ["a"],
                "labels": {"app": "v1"},
                "nullable": None,
                "embedded": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}},
                "escaped-name": "ok",
                "namespace": "ns",
            }
        ),
        None,
        LATEST,
        [],
    ),
    (
        "levels: property, items, map values, embedded, escaped names",
        LEVELS,
        thing(
            {
                "name": "abcdef",
                "names": ["x", "y", "z"],
                "labels": {"tier": "w"},
                "embedded": {"apiVersion": "v1", "kind": "Job", "metadata": {"name": "q"}},
                "escaped-name": "no",
                "namespace": "other",
            },
            name="b",
        ),
        None,
        LATEST,
        [
            "<nil>: Invalid value: failed rule: self.metadata.name.startsWith('a')",
            "spec: Invalid value: failed rule: !has(self.escaped__dash__name) || "
            "self.escaped__dash__name == 'ok'",
            "spec: Invalid value: failed rule: !has(self.__namespace__) || "
            "self.__namespace__ == 'ns'",
            'spec.name: Invalid value: "abcdef": failed rule: self.size() < 5',
            "spec.names: Invalid value: failed rule: size(self) < 3",
            "spec.names[0]: Invalid value: \"x\": failed rule: self != 'x'",
            "spec.labels: Invalid value: failed rule: 'app' in self",
            "spec.labels[tier]: Invalid value: \"w\": failed rule: self.startsWith('v')",
            "spec.embedded: Invalid value: failed rule: self.kind == 'Pod'",
            "spec.embedded: Invalid value: failed rule: self.metadata.name == 'p'",
        ],
    ),
    (
        "levels: 1.34 shows the type",
        LEVELS,
        thing({"name": "abcdef"}),
        None,
        34,
        ['spec.name: Invalid value: "string": failed rule: self.size() < 5'],
    ),
    (
        "root metadata has only name and generateName",
        {
            "type": "object",
            "x-kubernetes-validations": [{"rule": "self.metadata.namespace == 'd'"}],
        },
        THING,
        None,
        LATEST,
        [
            '<nil>: Invalid value: "object": rule compile error: compilation failed: ERROR: '
            "<input>:1:14: undefined field 'namespace'\n | self.metadata.namespace == 'd'\n"
            " | .............^"
        ],
    ),
    (
        "schema errors block the rules (type)",
        MIN_MAX,
        {"spec": {"min": "a", "max": 1}},
        None,
        LATEST,
        [
            'spec.min: Invalid value: "string": spec.min in body must be of type integer: "string"',
            "<nil>: Invalid value: null: some validation rules were not checked because the "
            "object was invalid; correct the existing errors to complete validation",
        ],
    ),
    (
        "schema errors block the rules, 1.33 words null",
        MIN_MAX,
        {"spec": {"min": "a", "max": 1}},
        None,
        33,
        [
            'spec.min: Invalid value: "string": spec.min in body must be of type integer: "string"',
            '<nil>: Invalid value: "null": some validation rules were not checked because '
            "the object was invalid; correct the existing errors to complete validation",
        ],
    ),
    (
        "required blocks the rules",
        {**MIN_MAX, "properties": {"spec": {**MIN_MAX["properties"]["spec"], "required": ["min"]}}},
        {"spec": {"max": 1}},
        None,
        LATEST,
        [
            "spec.min: Required value",
            "<nil>: Invalid value: null: some validation rules were not checked because the object "
            "was invalid; correct the existing errors to complete validation",
        ],
    ),
    (
        "other schema errors do not block",
        {
            **MIN_MAX,
            "properties": {
                "spec": {
                    **MIN_MAX["properties"]["spec"],
                    "properties": {"min": {"type": "integer", "maximum": 1}, "max": INTEGER},
                }
            },
        },
        {"spec": {"min": 3, "max": 1}},
        None,
        LATEST,
        [
            "spec.min: Invalid value: 3: spec.min in body should be less than or equal to 1",
            "spec: Invalid value: min must be <= max",
        ],
    ),
]

# Transition rules, optionalOldSelf and ratcheting (TestValidationExpressions' transition
# cases, TestRatcheting, TestOptionalOldSelf)
IMMUTABLE: Schema = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "x": {
                    "type": "string",
                    "x-kubernetes-validations": [
                        {"rule": "self == oldSelf", "message": "x is immutable"}
                    ],
                },
                "y": {
                    "type": "string",
                    "x-kubernetes-validations": [
                        {
                            "rule": "!oldSelf.hasValue() || self == oldSelf.value()",
                            "optionalOldSelf": True,
                            "message": "y is immutable",
                        }
                    ],
                },
                "z": {
                    "type": "string",
                    "x-kubernetes-validations": [
                        {"rule": "oldSelf.hasValue() || self == 'first'", "optionalOldSelf": True}
                    ],
                },
                "w": {"type": "string", "x-kubernetes-validations": [{"rule": "self.size() < 3"}]},
                "items": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["k"],
                    "items": {
                        "type": "object",
                        "properties": {"k": STRING, "v": INTEGER},
                        "x-kubernetes-validations": [
                            {"rule": "self.v >= oldSelf.v", "message": "v may only grow"}
                        ],
                    },
                },
            },
        }
    },
}
CASES += [
    ("transition: create skips", IMMUTABLE, {"spec": {"x": "a"}}, None, LATEST, []),
    ("transition: unchanged", IMMUTABLE, {"spec": {"x": "a"}}, {"spec": {"x": "a"}}, LATEST, []),
    (
        "transition: changed",
        IMMUTABLE,
        {"spec": {"x": "b"}},
        {"spec": {"x": "a"}},
        LATEST,
        ['spec.x: Invalid value: "b": x is immutable'],
    ),
    (
        "transition: changed, 1.29 shows the type",
        IMMUTABLE,
        {"spec": {"x": "b"}},
        {"spec": {"x": "a"}},
        29,
        ['spec.x: Invalid value: "string": x is immutable'],
    ),
    (
        "transition: no old value at the path",
        IMMUTABLE,
        {"spec": {"x": "b"}},
        {"spec": {}},
        LATEST,
        [],
    ),
    (
        "optionalOldSelf: evaluated on create",
        IMMUTABLE,
        {"spec": {"z": "second"}},
        None,
        LATEST,
        ["spec.z: Invalid value: \"second\": failed rule: oldSelf.hasValue() || self == 'first'"],
    ),
    (
        "optionalOldSelf: holds on create",
        IMMUTABLE,
        {"spec": {"z": "first", "y": "a"}},
        None,
        LATEST,
        [],
    ),
    (
        "optionalOldSelf: changed",
        IMMUTABLE,
        {"spec": {"y": "b"}},
        {"spec": {"y": "a"}},
        LATEST,
        ['spec.y: Invalid value: "b": y is immutable'],
    ),
    (
        "optionalOldSelf: before 1.30 the field is dropped (create skips)",
        IMMUTABLE,
        {"spec": {"z": "second"}},
        None,
        29,
        [],
    ),
    (
        "map list items correlate by key",
        IMMUTABLE,
        {"spec": {"items": [{"k": "b", "v": 1}, {"k": "a", "v": 1}]}},
        {"spec": {"items": [{"k": "a", "v": 2}, {"k": "b", "v": 0}]}},
        LATEST,
        ["spec.items[1]: Invalid value: v may only grow"],
    ),
    (
        "ratcheting: an unchanged invalid value passes",
        IMMUTABLE,
        {"spec": {"w": "long"}},
        {"spec": {"w": "long"}},
        LATEST,
        [],
    ),
    (
        "ratcheting: a changed invalid value fails",
        IMMUTABLE,
        {"spec": {"w": "longer"}},
        {"spec": {"w": "long"}},
        LATEST,
        ['spec.w: Invalid value: "longer": failed rule: self.size() < 3'],
    ),
    (
        "ratcheting: not before 1.30",
        IMMUTABLE,
        {"spec": {"w": "long"}},
        {"spec": {"w": "long"}},
        29,
        ['spec.w: Invalid value: "string": failed rule: self.size() < 3'],
    ),
]


# messageExpression, reason and fieldPath (TestMessageExpression, TestReasonAndFldPath)
def spec_rule(**rule: Any) -> Schema:
    return {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "x-kubernetes-validations": [rule],
                "properties": {
                    "a": INTEGER,
                    "m": {"type": "object", "additionalProperties": STRING},
                    "s": STRING,
                },
            }
        },
    }


BAD = {"spec": {"a": 5, "m": {"k.1": "v"}, "s": "x"}}
CASES += [
    (
        "messageExpression",
        spec_rule(rule="self.a < 3", messageExpression="'a is ' + string(self.a)"),
        BAD,
        None,
        LATEST,
        ["spec: Invalid value: a is 5"],
    ),
    (
        "messageExpression: trimmed",
        spec_rule(rule="self.a < 3", messageExpression="' a too big  '"),
        BAD,
        None,
        LATEST,
        ["spec: Invalid value: a too big"],
    ),
    (
        "messageExpression: empty falls back to message",
        spec_rule(rule="self.a < 3", message="fallback", messageExpression="''"),
        BAD,
        None,
        LATEST,
        ["spec: Invalid value: fallback"],
    ),
    (
        "messageExpression: line breaks fall back",
        spec_rule(rule="self.a < 3", messageExpression="'a\\nb'"),
        BAD,
        None,
        LATEST,
        ["spec: Invalid value: failed rule: self.a < 3"],
    ),
    (
        "messageExpression: an error falls back",
        spec_rule(rule="self.a < 3", message="m", messageExpression="string(1 / 0)"),
        BAD,
        None,
        LATEST,
        ["spec: Invalid value: m"],
    ),
    (
        "messageExpression: not before 1.27",
        spec_rule(rule="self.a < 3", messageExpression="'x'"),
        BAD,
        None,
        26,
        ['spec: Invalid value: "object": failed rule: self.a < 3'],
    ),
    (
        "reason Forbidden",
        spec_rule(rule="self.a < 3", reason="FieldValueForbidden", message="no"),
        BAD,
        None,
        LATEST,
        ["spec: Forbidden: no"],
    ),
    (
        "reason Required",
        spec_rule(rule="self.a < 3", reason="FieldValueRequired", message="need"),
        BAD,
        None,
        LATEST,
        ["spec: Required value: need"],
    ),
    (
        "reason Duplicate",
        spec_rule(rule="self.a < 3", reason="FieldValueDuplicate"),
        BAD,
        None,
        34,
        ['spec: Duplicate value: "object"'],
    ),
    (
        "reason Invalid",
        spec_rule(rule="self.a < 3", reason="FieldValueInvalid", message="bad"),
        BAD,
        None,
        LATEST,
        ["spec: Invalid value: bad"],
    ),
    (
        "fieldPath",
        spec_rule(rule="self.a < 3", fieldPath=".a", message="bad"),
        BAD,
        None,
        LATEST,
        ["spec.a: Invalid value: bad"],
    ),
    (
        "fieldPath to a map key",
        spec_rule(rule="self.a < 3", fieldPath=".m['k.1']", message="bad"),
        BAD,
        None,
        LATEST,
        ["spec.m[k.1]: Invalid value: bad"],
    ),
    (
        "reason and fieldPath: not before 1.28",
        spec_rule(rule="self.a < 3", fieldPath=".a", reason="FieldValueForbidden", message="bad"),
        BAD,
        None,
        27,
        ['spec: Invalid value: "object": bad'],
    ),
]


# What each release's CEL environment declares (k8s.io/apiserver/pkg/cel/environment/base.go):
# a rule using a later library does not compile
def gate(rule: str, first: int) -> list[tuple[str, Schema, Any, Any, int, list[str]]]:
    schema = vals(STRING, rule=rule)
    obj = objs("10.0.0.1")
    return [
        (f"{rule} from 1.{first}", schema, obj, None, first, []),
        (f"{rule} not in 1.{first - 1}", schema, obj, None, first - 1, ["compile error"]),
    ]


for rule, first in [
    ("quantity('1').sign() == 1", 29),
    ("optional.of(1).hasValue()", 29),
    ("'%s'.format(['a']) == 'a'", 30),
    ("sets.contains([1], [1])", 30),
    ("isIP(self.val1)", 31),
    ("cidr('10.0.0.0/8').containsIP(self.val1)", 31),
    ("!format.dns1123Label().validate('a').hasValue()", 32),
]:
    CASES += gate(rule, first)

CASES += [
    (
        "lists, regex, urls and strings from 1.25",
        vals(
            STRING,
            rule="[1].isSorted() && 'a'.find('a') == 'a' && isURL('/x') && 'A'.lowerAscii() == 'a'",
        ),
        objs("x"),
        None,
        25,
        [],
    ),
    (
        "a regex literal is checked at compile time from 1.30",
        vals(STRING, rule="self.val1.matches(')')"),
        objs("x"),
        None,
        30,
        [
            '<nil>: Invalid value: "object": rule compile error: compilation failed: ERROR: '
            "<input>:1:19: invalid matches argument\n | self.val1.matches(')')\n"
            " | ..................^"
        ],
    ),
    (
        "a duration literal is checked at compile time",
        vals(STRING, rule="duration('1') > duration('0s')"),
        objs("x"),
        None,
        LATEST,
        ["compile error: compilation failed: ERROR: <input>:1:10: invalid duration argument"],
    ),
    (
        "undeclared reference",
        vals(STRING, rule="foo == 1"),
        objs("x"),
        None,
        LATEST,
        [
            "compile error: compilation failed: ERROR: <input>:1:1: undeclared reference to 'foo' "
            "(in container '')"
        ],
    ),
    (
        "undefined field",
        vals(STRING, rule="self.nope == 1"),
        objs("x"),
        None,
        LATEST,
        ["compile error: compilation failed: ERROR: <input>:1:5: undefined field 'nope'"],
    ),
]


@pytest.mark.parametrize(
    ("schema", "obj", "old", "minor", "expected"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_rule(schema: Schema, obj: Any, old: Any, minor: int, expected: list[str]) -> None:
    found = errors_of(schema, obj, old, minor)
    if any(e == "compile error" or e.startswith("compile error: ") for e in expected):
        assert len(found) == len(expected), found
        for text, error in zip(expected, found, strict=True):
            assert "rule compile error: " in error and text.removeprefix("compile error") in error
        return
    assert sorted(found) == sorted(expected)


def test_the_table_is_broad() -> None:
    assert len(CASES) >= 120


def create_crd(body: dict[str, Any], minor: int) -> None:
    """Create the CRD in a fresh server of release 1.`minor` (Invalid when it refuses it)."""
    cluster = MemoryCluster(kubernetes_version=f"1.{minor}")
    cluster.create(cluster.discover("apiextensions.k8s.io/v1", "customresourcedefinitions"), body)


def crd_with(rule: dict[str, Any], schema: Schema | None = None) -> dict[str, Any]:
    spec_schema = schema or {
        "type": "object",
        "properties": {"a": INTEGER},
        "x-kubernetes-validations": [rule],
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.x.example.com"},
        "spec": {
            "group": "x.example.com",
            "scope": "Namespaced",
            "names": {
                "plural": "things",
                "singular": "thing",
                "kind": "Thing",
                "listKind": "ThingList",
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "properties": {"spec": spec_schema}}
                    },
                }
            ],
        },
    }


RULE_PATH = "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0]"


@pytest.mark.parametrize(
    ("rule", "minor", "expected"),
    [
        ({"rule": "self.a > 0"}, LATEST, None),
        (
            {"rule": "self.b > 0"},
            LATEST,
            # as the 1.37 server prints it (its internal ValidationRule, which has no json tags)
            f'{RULE_PATH}.rule: Invalid value: {{"Rule":"self.b \\u003e 0","Message":"",'
            '"MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: '
            "compilation failed: ERROR: <input>:1:5: undefined field 'b'\n | self.b > 0\n | ....^",
        ),
        (
            {"rule": "self.b > 0"},
            33,
            f'{RULE_PATH}.rule: Invalid value: apiextensions.ValidationRule{{Rule:"self.b > 0", '
            'Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), '
            'FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:5: '
            "undefined field 'b'\n | self.b > 0\n | ....^",
        ),
        ({"rule": "self.b > 0"}, 20, None),
        ({"rule": " "}, LATEST, f"{RULE_PATH}.rule: Required value: rule is not specified"),
        (
            {"rule": "self.a > 0", "reason": "Nope"},
            LATEST,
            f'{RULE_PATH}.reason: Unsupported value: "Nope": supported values: '
            '"FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", '
            '"FieldValueRequired"',
        ),
        (
            {"rule": "self.a > 0", "fieldPath": ".b"},
            LATEST,
            f'{RULE_PATH}.fieldPath: Invalid value: ".b": must be a valid path',
        ),
        (
            {"rule": "self.a > 0", "optionalOldSelf": True},
            LATEST,
            f"{RULE_PATH}.optionalOldSelf: Invalid value: true: may not be set if oldSelf is not "
            "used in rule",
        ),
        (
            {"rule": "self.a > 0\n&& true"},
            LATEST,
            f"{RULE_PATH}.message: Required value: message must be specified if rule contains line "
            "breaks",
        ),
        (
            {"rule": "isIP('1.2.3.4')"},
            30,
            f"{RULE_PATH}.rule: Invalid value: "
            f"apiextensions.ValidationRule{{Rule:\"isIP('1.2.3.4')\", "
            'Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), '
            'FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: '
            "ERROR: <input>:1:1: undeclared reference to 'isIP' (in container '')\n"
            " | isIP('1.2.3.4')\n | ^",
        ),
    ],
)
def test_crd_rules_compile_on_creation(
    rule: dict[str, Any], minor: int, expected: str | None
) -> None:
    body = crd_with(rule)
    if expected is None:
        create_crd(body, minor)
        return
    with pytest.raises(Invalid) as raised:
        create_crd(body, minor)
    assert str(raised.value).endswith(
        'CustomResourceDefinition.apiextensions.k8s.io "things.x.example.com" is invalid: '
        + expected
    )


def test_old_self_under_a_set_list_is_refused() -> None:
    schema = {
        "type": "object",
        "properties": {
            "tags": {
                "type": "array",
                "x-kubernetes-list-type": "set",
                "items": {
                    "type": "string",
                    "x-kubernetes-validations": [{"rule": "self == oldSelf"}],
                },
            }
        },
    }
    with pytest.raises(Invalid) as raised:
        create_crd(crd_with({}, schema), LATEST)
    assert (
        "oldSelf cannot be used on the uncorrelatable portion of the schema within "
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[tags]"
    ) in str(raised.value)

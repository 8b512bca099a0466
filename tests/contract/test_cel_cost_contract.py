"""CPU-bound work a CRD can ask of the API server is bounded as kube-apiserver bounds it, on the
real server and the memory backend alike, in its words: a CEL rule whose estimated worst-case
cost (times the number of times its node can occur) is over 10,000,000 is refused with its
CRD, as are a CRD's rules together over 100,000,000; at runtime one evaluation stops at
1,000,000 and one object's rules at 10,000,000; and an OpenAPI `pattern` is Go's RE2, refused
when Go cannot compile it and matched in time linear in the text. The expected words are the
1.37 server's (the paths of a CRD's errors compared from `openAPIV3Schema` on: the server files
a single version's schema under spec.validation, --local under spec.versions[0].schema)."""

from __future__ import annotations

import re
import time
import uuid
from typing import Any

import pytest

from reconcile.cluster import Invalid
from reconcile.cluster.types import Obj, ResourceInfo
from tests.support.backends import Backend
from tests.support.controlplane import CURRENT_RELEASE, OLDEST_RELEASE
from tests.support.poll import eventually

HINT = (
    " (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, "
    "maps, and strings are declared)"
)
CONTRIBUTED = (
    "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire "
    "OpenAPIv3 schema"
)


def rule_over(factor: str) -> str:
    return f"Forbidden: estimated rule cost exceeds budget by factor of {factor}{HINT}"


def total_over(factor: str) -> str:
    return (
        "Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 "
        f"schema exceeds budget by factor of {factor}{HINT}"
    )


BEYOND = "more than 100x"
SPEC = ".properties[spec]"
RULE = f"{SPEC}.x-kubernetes-validations[0].rule"
INTS_300 = {"type": "array", "maxItems": 300, "items": {"type": "integer"}}
NESTED = "self.items.all(x, self.items.all(y, self.items.all(z, x + y + z > 0)))"
STRINGS = {"type": "array", "items": {"type": "string"}}
TWENTY_FOUR = "self.matches('^[a-z]+[0-9]*[a-z]+[0-9]*[a-z]+$')"

# (the spec's schema, the errors as (path after openAPIV3Schema, words)); none: accepted
COSTS: dict[str, tuple[dict[str, Any], list[tuple[str, str]]]] = {
    "three nested all() over 300 items (the issue's)": (
        {
            "type": "object",
            "properties": {"items": INTS_300},
            "x-kubernetes-validations": [{"rule": NESTED}],
        },
        [(RULE, rule_over("24.4x")), (RULE, CONTRIBUTED), ("", total_over("2.4x"))],
    ),
    "a pattern per item of an unbounded list of unbounded strings": (
        {
            "type": "object",
            "properties": {"names": STRINGS},
            "x-kubernetes-validations": [{"rule": "self.names.all(n, n.matches('^[a-z]+$'))"}],
        },
        [(RULE, rule_over(BEYOND)), (RULE, CONTRIBUTED), ("", total_over(BEYOND))],
    ),
    "every pair of an unbounded list": (
        {
            "type": "object",
            "properties": {"ids": {"type": "array", "items": {"type": "integer"}}},
            "x-kubernetes-validations": [
                {"rule": "self.ids.all(a, self.ids.exists_one(b, a == b))"}
            ],
        },
        [(RULE, rule_over(BEYOND)), (RULE, CONTRIBUTED), ("", total_over(BEYOND))],
    ),
    "a messageExpression": (
        {
            "type": "object",
            "properties": {"names": STRINGS},
            "x-kubernetes-validations": [
                {
                    "rule": "size(self.names) < 100",
                    "messageExpression": "self.names.map(n, n + n).join(', ') + ' are too many'",
                }
            ],
        },
        [
            (
                f"{SPEC}.x-kubernetes-validations[0].messageExpression",
                "Forbidden: estimated messageExpression cost exceeds budget by factor of more than "
                f"100x{HINT}",
            ),
            (f"{SPEC}.x-kubernetes-validations[0].messageExpression", CONTRIBUTED),
            ("", total_over("more than 100x")),
        ],
    ),
    "a rule on each value of an unbounded map": (
        {
            "type": "object",
            "properties": {
                "labels": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "string",
                        "x-kubernetes-validations": [{"rule": "self.contains('=')"}],
                    },
                }
            },
        },
        [
            (f"{SPEC}.properties[labels].additionalProperties.x-kubernetes-validations[0].rule", r)
            for r in (rule_over("more than 100x"), CONTRIBUTED)
        ]
        + [("", total_over("more than 100x"))],
    ),
    "rules each within the limit, together over the CRD's (the four dearest named)": (
        {
            "type": "object",
            "properties": {
                f"l{i:02d}": {
                    "type": "array",
                    "maxItems": 1000 + 50 * i,
                    "items": {
                        "type": "string",
                        "maxLength": 1000,
                        "x-kubernetes-validations": [{"rule": TWENTY_FOUR}],
                    },
                }
                for i in range(24)
            },
        },
        [
            (f"{SPEC}.properties[l{i}].items.x-kubernetes-validations[0].rule", CONTRIBUTED)
            for i in (23, 22, 21, 20)
        ]
        + [("", total_over("1.213002x"))],
    ),
    "three nested all() over 100 items: accepted": (
        {
            "type": "object",
            "properties": {"items": {**INTS_300, "maxItems": 100}},
            "x-kubernetes-validations": [{"rule": NESTED}],
        },
        [],
    ),
    "an unbounded list, each item once: accepted": (
        {
            "type": "object",
            "properties": {"ids": {"type": "array", "items": {"type": "integer"}}},
            "x-kubernetes-validations": [{"rule": "self.ids.all(x, x > 0)"}],
        },
        [],
    ),
    "a pattern per item with maxItems and maxLength: accepted": (
        {
            "type": "object",
            "properties": {
                "names": {
                    "type": "array",
                    "maxItems": 1000,
                    "items": {"type": "string", "maxLength": 63},
                }
            },
            "x-kubernetes-validations": [{"rule": "self.names.all(n, n.matches('^[a-z]+$'))"}],
        },
        [],
    ),
}


def crd(spec_schema: dict[str, Any]) -> tuple[str, Obj]:
    group = f"t{uuid.uuid4().hex[:8]}.example.com"
    return group, {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"things.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "things", "singular": "thing", "kind": "Thing"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": spec_schema},
                        }
                    },
                }
            ],
        },
    }


def refusals(message: str) -> list[tuple[str, str]]:
    """(path after openAPIV3Schema, words) of every error of a CRD's refusal."""
    found = re.findall(
        r"openAPIV3Schema(\S*): ((?:Forbidden|Invalid value|Required value): .*?)"
        r"(?=, spec\.|\]$|$)",
        message,
        re.DOTALL,
    )
    return [(path, words.strip()) for path, words in found]


@pytest.mark.parametrize("case", list(COSTS))
def test_a_crds_rules_are_held_to_the_estimated_cost_limits(backend: Backend, case: str) -> None:
    spec_schema, expected = COSTS[case]
    _, body = crd(spec_schema)
    crds = backend.admin.discover("apiextensions.k8s.io/v1", "customresourcedefinitions")
    if not expected:
        backend.admin.create(crds, body)
        backend.delete_quietly(crds, body["metadata"]["name"], None)
        return
    with pytest.raises(Invalid) as refused:
        backend.admin.create(crds, body)
    assert refusals(str(refused.value)) == expected


# --- patterns --------------------------------------------------------------------------------

INVALID_PATTERNS = {
    "(?=a)": "invalid or unsupported Perl syntax: `(?=`",
    "(a": "missing closing ): `(a`",
    "[a": "missing closing ]: `[a`",
    "a{1001}": "invalid repeat count: `{1001}`",
    "(a{500}){3}": "invalid repeat count: `{3}`",
    "a**": "invalid nested repetition operator: `**`",
    "*a": "missing argument to repetition operator: `*`",
    "(a)\\1": "invalid escape sequence: `\\1`",
    "\\C": "invalid escape sequence: `\\C`",
    "a\\": "trailing backslash at end of expression: ``",
    "(?<>a)": "invalid named capture: `(?<>`",  # 1.20's Go reads no (?<: its words below
    "[z-a]": "invalid character class range: `z-a`",
}


OLD_GO = {"(?<>a)": "invalid or unsupported Perl syntax: `(?<`"}


@pytest.mark.releases(CURRENT_RELEASE, OLDEST_RELEASE, why="both releases compile patterns")
@pytest.mark.parametrize("pattern", list(INVALID_PATTERNS))
def test_a_pattern_go_cannot_compile_refuses_its_crd(
    backend: Backend, kube_release: str, pattern: str
) -> None:
    _, body = crd({"type": "object", "properties": {"p": {"type": "string", "pattern": pattern}}})
    with pytest.raises(Invalid) as refused:
        backend.admin.create(
            backend.admin.discover("apiextensions.k8s.io/v1", "customresourcedefinitions"), body
        )
    words = "must be a valid regular expression, but isn't: error parsing regexp: "
    ((path, said),) = refusals(str(refused.value))
    assert path == f"{SPEC}.properties[p].pattern"
    expected = INVALID_PATTERNS[pattern]
    if kube_release == OLDEST_RELEASE:
        expected = OLD_GO.get(pattern, expected)
    assert said.endswith(f"{words}{expected}"), said


# (the pattern, the value, accepted): Go's RE2 semantics where Python's re differs or backtracks
MATCHES = [
    ("^(a+)+$", "a" * 30_000 + "!", False),  # backtracking regexps take exponential time here
    ("^(a|aa)+$", "a" * 30_000 + "b", False),
    ("^(\\w+\\s?)*$", "word " * 6_000 + "!", False),
    ("^(a+)+$", "a" * 30_000, True),
    ("a$", "a\n", False),  # Python's $ also matches before a last newline
    ("^\\s+$", "\u000b", False),  # RE2's \s leaves out the vertical tab
    ("(?i)k", "\u212a", True),  # the Kelvin sign folds to k
    ("^.$", "\U0001f600", True),  # one character, not one byte
]
_LIVE: dict[tuple[str, str], ResourceInfo] = {}


@pytest.fixture
def patterned(backend: Backend) -> ResourceInfo:
    """One CRD of every pattern above (once per live control plane)."""
    key = (backend.name, backend.plane.server if backend.plane else "")
    if backend.plane is not None and key in _LIVE:
        return _LIVE[key]
    properties = {f"p{i}": {"type": "string", "pattern": p} for i, (p, _, _) in enumerate(MATCHES)}
    group, body = crd({"type": "object", "properties": properties})
    backend.admin.create(backend.admin.discover("apiextensions.k8s.io/v1", "crds"), body)
    things = eventually(
        lambda: backend.cluster.discover(f"{group}/v1", "things"), what="things to be served"
    )
    _LIVE[key] = things
    return things


@pytest.mark.parametrize("index", range(len(MATCHES)), ids=[repr(m[:2])[:40] for m in MATCHES])
def test_a_pattern_is_matched_as_go_matches_it_in_linear_time(
    backend: Backend, namespace: str, patterned: ResourceInfo, index: int
) -> None:
    pattern, value, accepted = MATCHES[index]
    body = {
        "apiVersion": patterned.api_version,
        "kind": "Thing",
        "metadata": {"name": f"m{index}", "namespace": namespace},
        "spec": {f"p{index}": value},
    }
    started = time.monotonic()
    if accepted:
        backend.cluster.create(patterned, body)
    else:
        with pytest.raises(Invalid) as refused:
            backend.cluster.create(patterned, body)
        assert f"spec.p{index} in body should match '{pattern}'" in str(refused.value)
    assert time.monotonic() - started < 5


# --- the runtime limits ----------------------------------------------------------------------

REGEX = "^a*" + "(?:z?)" * 66 + "$"  # 400 characters: a regex costs a quarter of its length
MATCH_ALL = f"self.l.all(x, x.matches('{REGEX}'))"


def runtime_schema(rules: int) -> dict[str, Any]:
    listed = {"type": "array", "maxItems": 60, "items": {"type": "string", "maxLength": 2500}}
    return {
        "type": "object",
        "properties": {"l": listed},
        "x-kubernetes-validations": [
            {"rule": MATCH_ALL, "message": f"rule {i}"} for i in range(rules)
        ],
    }


@pytest.mark.parametrize(
    ("rules", "items", "expected"),
    [
        # one evaluation over its 1,000,000: 41 items of 25,104 each
        (
            1,
            41,
            "spec: Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': "
            "no further validation rules will be run due to call cost exceeds limit for rule: "
            "rule 0",
        ),
        # under it: 39 items
        (1, 39, None),
        # twelve rules of 953,955 each: the eleventh is over the object's 10,000,000
        (
            12,
            38,
            'spec: Invalid value: "object": validation failed due to running out of cost '
            "budget, no further validation rules will be run",
        ),
        # ten of them are within it
        (10, 38, None),
    ],
)
def test_evaluation_is_held_to_the_runtime_cost_limits(
    backend: Backend, namespace: str, rules: int, items: int, expected: str | None
) -> None:
    group, body = crd(runtime_schema(rules))
    crds = backend.admin.discover("apiextensions.k8s.io/v1", "customresourcedefinitions")
    backend.admin.create(crds, body)
    try:
        things = eventually(
            lambda: backend.cluster.discover(f"{group}/v1", "things"), what="things to be served"
        )
        thing = {
            "apiVersion": things.api_version,
            "kind": "Thing",
            "metadata": {"name": "x", "namespace": namespace},
            "spec": {"l": ["a" * 2500] * items},
        }
        if expected is None:
            backend.cluster.create(things, thing)
            return
        with pytest.raises(Invalid) as refused:
            backend.cluster.create(things, thing)
        assert str(refused.value).endswith(f'Thing.{group} "x" is invalid: {expected}')
    finally:
        backend.delete_quietly(crds, body["metadata"]["name"], None)


def test_a_rule_that_does_not_compile_is_shown_as_the_server_prints_it(backend: Backend) -> None:
    """The refused rule is the server's internal ValidationRule in encoding/json: Go's field
    names, every field, `<`, `>` and `&` escaped."""
    rule = {
        "rule": "self.nope > 0 && '<&>' != ''",
        "message": "m",
        "reason": "FieldValueForbidden",
        "fieldPath": ".n",
        "optionalOldSelf": False,
    }
    _, body = crd(
        {
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "x-kubernetes-validations": [rule],
        }
    )
    with pytest.raises(Invalid) as refused:
        backend.admin.create(
            backend.admin.discover("apiextensions.k8s.io/v1", "customresourcedefinitions"), body
        )
    (path, said), (other, also) = refusals(str(refused.value))
    assert (other, also) == (
        f"{SPEC}.x-kubernetes-validations[0].optionalOldSelf",
        "Invalid value: false: may not be set if oldSelf is not used in rule",
    )
    assert path == RULE
    assert said.startswith(
        'Invalid value: {"Rule":"self.nope \\u003e 0 \\u0026\\u0026 \'\\u003c\\u0026\\u003e\' '
        '!= \'\'","Message":"m","MessageExpression":"","Reason":"FieldValueForbidden",'
        '"FieldPath":".n","OptionalOldSelf":false}: compilation failed: '
    ), said

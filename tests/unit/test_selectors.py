from __future__ import annotations

import pytest

from reconcile.objects.selectors import (
    SelectorError,
    label_selector_from_spec,
    parse_field_selector,
    parse_label_selector,
)

LABELS = {"app": "web", "tier": "front", "env": "prod"}


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        ("", True),
        ("app=web", True),
        ("app==web", True),
        ("app=db", False),
        ("app!=db", True),
        ("missing!=x", True),
        ("app in (web, db)", True),
        ("app notin (web)", False),
        ("missing notin (web)", True),
        ("tier", True),
        ("!tier", False),
        ("!missing", True),
        ("app=web,env in (prod,staging),!debug", True),
        ("app=web,env=dev", False),
        ("example.com/role", False),
    ],
)
def test_label_selector_strings(selector: str, matches: bool) -> None:
    assert parse_label_selector(selector).matches_labels(LABELS) is matches


def test_an_empty_value_is_a_valid_selector() -> None:
    assert parse_label_selector("app=").matches_labels({"app": ""})


@pytest.mark.parametrize("bad", ["app in (", "=web", "a b=c", "app in ()", ",", "app=a b"])
def test_bad_label_selectors_are_errors(bad: str) -> None:
    with pytest.raises(SelectorError):
        parse_label_selector(bad)


@pytest.mark.parametrize(
    ("spec", "matches"),
    [
        (None, True),
        ({}, True),
        ({"matchLabels": {"app": "web"}}, True),
        ({"matchLabels": {"app": "db"}}, False),
        ({"matchExpressions": [{"key": "env", "operator": "In", "values": ["prod"]}]}, True),
        ({"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]}, False),
        ({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, True),
        ({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, False),
        (
            {
                "matchLabels": {"app": "web"},
                "matchExpressions": [{"key": "x", "operator": "DoesNotExist"}],
            },
            True,
        ),
    ],
)
def test_label_selector_specs(spec: object, matches: bool) -> None:
    assert label_selector_from_spec(spec).matches_labels(LABELS) is matches


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ("app=web", "selector"),
        ({"matchLabels": ["app"]}, "selector.matchLabels"),
        ({"matchExpressions": [{"key": "a", "operator": "Equals", "values": ["x"]}]}, "operator"),
        ({"matchExpressions": [{"key": "a", "operator": "In"}]}, "values"),
        ({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}, "values"),
    ],
)
def test_bad_selector_specs_name_the_field(spec: object, field: str) -> None:
    with pytest.raises(SelectorError, match=field):
        label_selector_from_spec(spec)


def test_selector_renders_back_to_its_string_form() -> None:
    spec = {
        "matchLabels": {"b": "2", "a": "1"},
        "matchExpressions": [{"key": "c", "operator": "In", "values": ["y", "x"]}],
    }
    rendered = label_selector_from_spec(spec).render()
    assert rendered == "a=1,b=2,c in (x,y)"
    assert parse_label_selector(rendered) == label_selector_from_spec(spec)


def test_field_selectors() -> None:
    obj = {"metadata": {"name": "a", "namespace": "ns"}, "status": {"phase": "Running"}}
    assert parse_field_selector("metadata.name=a,status.phase!=Failed").matches(obj)
    assert not parse_field_selector("metadata.namespace==other").matches(obj)
    with pytest.raises(SelectorError):
        parse_field_selector("metadata.name")

"""The customize hook's related-object rules matched as Metacontroller matches them
(`customize/manager.go`: selectByLabels, selectByNamespaceAndLabels, selectByNamespaceAndNames,
selectByNamespaceSelector), with plain dicts: a v1 hook of a namespaced parent sees its own
namespace only; a v2 hook, or a cluster-scoped parent, what the rule names."""

from __future__ import annotations

import pytest

from reconcile.engine.related import RelatedRule, RuleMismatch, Selection, rule_matches
from reconcile.objects.meta import Obj
from reconcile.objects.selectors import LabelSelector

PARENT: Obj = {"metadata": {"name": "p", "namespace": "home"}}
NAMESPACES = {"home": {"team": "a"}, "away": {"team": "b"}}
APP = LabelSelector.from_labels({"app": "x"})
TEAM_B = LabelSelector.from_labels({"team": "b"})


def obj(namespace: str, name: str = "o", **labels: str) -> Obj:
    return {"metadata": {"name": name, "namespace": namespace, "labels": labels}}


def matches(rule: RelatedRule, item: Obj, *, uniform: bool, parent_namespaced: bool = True) -> bool:
    return rule_matches(
        rule,
        item,
        uniform=uniform,
        parent=PARENT if parent_namespaced else {"metadata": {"name": "p"}},
        parent_namespaced=parent_namespaced,
        related_namespaced=True,
        namespace_labels=NAMESPACES.get,
    )


RULES: dict[str, RelatedRule] = {
    "labels": RelatedRule("v1", "configmaps", selector=APP),
    "namespace-and-labels": RelatedRule("v1", "configmaps", selector=APP, namespace="away"),
    "namespace-and-names": RelatedRule("v1", "configmaps", namespace="away", names=("o",)),
    "names": RelatedRule("v1", "configmaps", names=("o",)),
    "namespace-selector": RelatedRule(
        "v1",
        "configmaps",
        selector=APP,
        namespace_selector=LabelSelector.from_labels({"team": "b"}),
    ),
}


def test_each_rule_reads_as_metacontrollers_selection() -> None:
    assert [r.selection for r in RULES.values()] == [
        Selection.LABELS,
        Selection.NAMESPACE_AND_LABELS,
        Selection.NAMESPACE_AND_NAMES,
        Selection.NAMESPACE_AND_NAMES,
        Selection.NAMESPACE_SELECTOR,
    ]


@pytest.mark.parametrize(
    ("rule", "uniform", "parent_namespaced", "home", "away"),
    [
        # v1, namespaced parent: its own namespace only
        ("labels", False, True, True, False),
        ("names", False, True, True, False),
        # v2, or a cluster-scoped parent: the rule decides
        ("labels", True, True, True, True),
        ("labels", False, False, True, True),
        ("namespace-and-labels", True, True, False, True),
        ("namespace-and-labels", False, False, False, True),
        ("namespace-and-names", True, True, False, True),
        ("names", True, True, True, True),
        ("namespace-selector", True, True, False, True),
        ("namespace-selector", False, False, False, True),
    ],
)
def test_which_namespaces_a_rule_reaches(
    rule: str, uniform: bool, parent_namespaced: bool, home: bool, away: bool
) -> None:
    found = [
        matches(RULES[rule], obj(ns, app="x"), uniform=uniform, parent_namespaced=parent_namespaced)
        for ns in ("home", "away")
    ]
    assert found == [home, away]


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("namespace-and-labels", "is not the parent's namespace"),
        ("namespace-and-names", "is not the parent's namespace"),
        ("namespace-selector", "needs a v2 hook"),
    ],
)
def test_a_v1_namespaced_parent_may_not_reach_another_namespace(rule: str, message: str) -> None:
    with pytest.raises(RuleMismatch, match=message):
        matches(RULES[rule], obj("away", app="x"), uniform=False)


def test_namespace_and_labels_in_the_parents_own_namespace_is_fine_for_v1() -> None:
    rule = RelatedRule("v1", "configmaps", selector=APP, namespace="home")
    assert matches(rule, obj("home", app="x"), uniform=False)
    assert not matches(rule, obj("home", app="y"), uniform=False)


def test_labels_and_names_still_filter() -> None:
    assert not matches(RULES["labels"], obj("home", app="y"), uniform=True)
    assert not matches(RULES["names"], obj("home", name="other"), uniform=True)

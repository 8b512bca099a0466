"""The pieces of a review nobody can forge, on plain values: which last-applied annotations are
noise (a true record of their object) and which are data; which controller an object is
grouped under; and user text written into Markdown for every context it reaches."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from reconcile.engine.actions import Action, ActionKind
from reconcile.objects.resource import ResourceInfo
from reconcile.report import ReportFormat, render
from reconcile.report.diff import to_yaml
from reconcile.report.fit_lines import fit
from reconcile.report.last_applied import records, without_records
from reconcile.report.markdown import render_markdown as run_markdown
from reconcile.report.markdown_text import code_span, cut, html_text, inline, size, visible
from reconcile.report.state_diff import MANIFESTS_GROUP, Comparison, Side, compare_states, key
from reconcile.report.state_diff_markdown import render_markdown
from reconcile.results import (
    ActionResult,
    ControllerResult,
    HookCall,
    Outcome,
    ParentResult,
    PassResult,
    RunResult,
)
from tests.support.markdown_check import assert_inert

KUBECTL = "kubectl.kubernetes.io/last-applied-configuration"
METACONTROLLER = "metacontroller.k8s.io/last-applied-configuration"


def deployment(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "team"},
        "spec": {"replicas": 1, **spec},
    }


STORED = {  # what the server keeps: its defaults and metadata added to what was asked
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {
        "name": "web",
        "namespace": "team",
        "ownerReferences": [{"apiVersion": "x/v1", "kind": "P", "name": "p"}],
    },
    "spec": {"replicas": 1, "strategy": {"type": "RollingUpdate"}, "template": {"a": [1, 2]}},
}


@pytest.mark.parametrize(
    ("claim", "true_record"),
    [
        (deployment(template={"a": [1, 2]}), True),
        ({**deployment(), "status": {"ready": 9}}, True),  # a record's status is not applied
        (
            {
                **deployment(),
                "metadata": {
                    "name": "web",
                    "uid": "u",
                    "ownerReferences": [
                        {"apiVersion": "x/v1", "kind": "P", "name": "p", "uid": "9"}
                    ],
                },
            },
            True,  # server-owned metadata and owners' uids: a dump leaves them out
        ),
        (deployment(paused=None), True),  # a null the server dropped
        (deployment(replicas=5), False),
        (deployment(template={"a": [1]}), False),  # a list is the same list
        (deployment(template={"a": [1, 2, 3]}), False),
        (deployment(selector={"app": "web"}), False),  # a field the object does not have
        ({"spec": {"replicas": 1}}, False),  # no kind: not a record
        ([1, 2], False),
        ("not json", False),
        (7, False),
    ],
)
def test_a_record_is_what_the_object_holds(claim: Any, true_record: bool) -> None:
    text = claim if isinstance(claim, str) else json.dumps(claim)
    assert records(text, STORED) is true_record
    obj = json.loads(json.dumps(STORED))
    obj["metadata"]["annotations"] = {KUBECTL: text, METACONTROLLER: text, "keep": "me"}
    shown = without_records(obj)
    left = shown["metadata"]["annotations"]
    assert ("keep" in left) and ((KUBECTL in left) is not true_record)
    assert obj["metadata"]["annotations"][KUBECTL] == text  # never changed in place


def test_deep_or_huge_claims_are_data() -> None:
    deep: Any = {"kind": "X"}
    node = deep
    for _ in range(500):
        node["a"] = {}
        node = node["a"]
    assert records(json.dumps(deep), {"kind": "X"}) is False
    assert records("[" * 100_000, {"kind": "X"}) is False
    assert records(json.dumps({"kind": "X", "v": "y" * 5_000_000}), {"kind": "X"}) is False


def cm(name: str, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "team", **meta},
        "data": {"a": "1"},
    }


def test_objects_are_grouped_by_who_created_them_not_by_their_owners() -> None:
    """A manifest's object naming a controller's parent as its owner stays the manifests';
    an object the controller's run created is the controller's."""
    owner = [{"apiVersion": "x/v1", "kind": "Greeting", "name": "hello", "controller": True}]
    planted = cm("planted", ownerReferences=owner)
    child = cm("child", ownerReferences=owner)
    diff = compare_states(
        [], [planted, child], base_creators={}, head_creators={key(child): "greeter"}
    )
    assert {o.name: o.group for o in diff.objects} == {
        "planted": MANIFESTS_GROUP,
        "child": "greeter",
    }


HOSTILE = "\u202eevil\u2066 `x` <b>@alice</b> #1 https://e.example [l](x) *y* $z$ \x1b[1m a\u200bb"


def test_visible_writes_every_hidden_character_as_its_escape() -> None:
    assert visible("a\u202eb\u2066c\u2069\x1b\x7f\x85\u200b\u00ad\ufeff\u2028\U000e0041") == (
        "a\\u202eb\\u2066c\\u2069\\x1b\\x7f\\x85\\u200b\\xad\\ufeff\\u2028\\U000e0041"
    )
    assert visible("tab\tand\nline", keep="\t") == "tab\tand\\x0aline"
    assert visible("lone \ud800 surrogate") == "lone \\ud800 surrogate"
    assert visible("plain ünïcödé 日本") == "plain ünïcödé 日本"


@pytest.mark.parametrize("render", [inline, html_text, code_span])
def test_every_context_keeps_hostile_text_inert(render: Any) -> None:
    text = render(HOSTILE)
    assert_inert(f"<details><summary>{text}</summary></details>\n" if render is html_text else text)
    # shown as escapes (in inline text, their backslash escaped as Markdown wants)
    assert all(f"{escape}" in text for escape in ("u202eevil", "x1b", "u2066", "u200bb"))


def test_inline_text_opens_nothing_at_the_start_of_an_item() -> None:
    for start in ("- a", "+ a", "1. a", "2) a", "# a", "> a", "* a"):
        reading = assert_inert(f"- {inline(start)}")
        assert reading.prose, start
    assert inline("a\nb") == "a<br>b"


def test_code_spans_hold_any_backticks() -> None:
    assert code_span("a``b") == "```a``b```"
    assert code_span("`x`") == "`` `x` ``"
    assert_inert(f"x {code_span('` @alice `')} y")


def test_cut_says_how_much() -> None:
    assert cut("x" * 10, 20) == "x" * 10
    out = cut("x" * 10_000, 100)
    assert len(out) < 140 and out.endswith("(9,940 more characters not shown)")
    assert size("a😀") == 3  # UTF-16 code units, as GitHub counts


def test_the_run_report_keeps_what_it_quotes_inert() -> None:
    """The preview's report (also a pull-request comment): hook targets, errors, parent names,
    controller names and values, visible and inert; each error cut on its own."""
    parent = ParentResult(
        HOSTILE,
        f"WebApp team/{HOSTILE}",
        "sync",
        hooks=[HookCall("sync", f"http://h.example/{HOSTILE}", Outcome.FAILED, 0.1, HOSTILE)],
        errors=[HOSTILE, "e" * 50_000],
        waits=[HOSTILE],
    )
    result = RunResult(
        dry_run=True,
        passes=[PassResult(1, [ControllerResult(HOSTILE, [parent], errors=[HOSTILE])])],
        load_errors=[HOSTILE * 2000],
        warnings=[HOSTILE],
    )
    markdown = run_markdown(result)
    assert_inert(markdown)
    assert max(len(line) for line in markdown.splitlines()) < 6_000
    assert "\\u202eevil" in markdown


def test_the_diff_markdown_of_a_failing_side_stays_small() -> None:
    errors = tuple(f"load {n}: " + "v" * 500_000 for n in range(30))
    comparison = Comparison(Side("main", errors=errors), Side("head"), compare_states(
        [], [], base_creators={}, head_creators={}))  # fmt: skip
    markdown = render_markdown(comparison)
    assert size(markdown) < 50_000
    assert "- … and 10 more" in markdown
    assert_inert(markdown)


def binding_of(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"kind": "ClusterRole", "name": "cluster-admin"},
    }


@pytest.mark.parametrize("decoys", [300, 2_000])
def test_decoys_before_an_object_leave_it_named_or_counted_by_kind(decoys: int) -> None:
    """Many objects sorted before a dangerous one: it is still named (the names come first),
    or, when not even the names fit, the note counts what was left out by kind."""
    head = [cm(f"decoy-{n:05d}") for n in range(decoys)] + [binding_of("zz-admin")]
    diff = compare_states([], head, base_creators={}, head_creators={})
    markdown = render_markdown(Comparison(Side("main"), Side("head"), diff))
    assert size(markdown) <= 65_536 - 1_024
    assert_inert(markdown)
    if decoys == 300:
        assert "+ ClusterRoleBinding zz-admin created" in markdown
    else:
        assert "+ ClusterRoleBinding zz-admin created" not in markdown
        assert "Left out: " in markdown and "1 created ClusterRoleBinding" in markdown


def test_names_full_of_escapes_take_a_bounded_room() -> None:
    """A name of 250 tag characters (ten characters each as an escape) is cut once visible:
    it cannot crowd the others out."""
    names = [f"role-{n:02d}-" + "\U000e0041" * 250 for n in range(40)]
    head = [{**binding_of(name), "kind": "ClusterRole", "rules": []} for name in names]
    diff = compare_states([], head, base_creators={}, head_creators={})
    markdown = render_markdown(Comparison(Side("main"), Side("head"), diff))
    assert markdown.count("+ ClusterRole role-") == 40
    assert all(len(line) < 3_000 for line in markdown.splitlines())
    assert_inert(markdown)


def test_no_part_of_a_large_object_hides_another() -> None:
    """12,000 characters of annotations before the role and subjects: the cut object still
    shows both, and says what it left out."""
    padded = binding_of("readers")
    padded["metadata"]["annotations"] = {f"note-{n:03d}": "z" * 150 for n in range(300)}
    padded["subjects"] = [{"kind": "Group", "name": "system:unauthenticated"}]
    padded["roleRef"] = {"kind": "ClusterRole", "name": "cluster-admin"}
    lines = [f"+ {line}" for line in to_yaml(padded).splitlines()]
    kept, cut_any = fit(lines, 6_000)
    assert cut_any and sum(len(line) + 1 for line in kept) <= 6_000
    text = "\n".join(kept)
    assert "+   name: cluster-admin" in text and "+   name: system:unauthenticated" in text
    assert "+ - kind: Group" in text
    assert re.search(r"\+     … \d+ more lines not shown here", text)  # under annotations
    assert kept[:3] == lines[:3]  # in order: apiVersion, kind, metadata first


@pytest.mark.parametrize("parts", [1, 5, 400])
def test_lines_fit_whatever_their_shape(parts: int) -> None:
    lines = [f"+ key{n}:" for n in range(parts)]
    lines = [
        x
        for n, head in enumerate(lines)
        for x in (head, *[f"+   v{n}-{m}: " + "w" * 90 for m in range(50)])
    ]
    for budget in (200, 1_000, 12_000):
        kept, _ = fit(lines, budget)
        assert sum(len(line) + 1 for line in kept) <= budget
        assert kept[0] == lines[0]
        assert "not shown here" in kept[-1] or kept == lines


def test_the_run_report_cuts_a_created_object_part_by_part() -> None:
    """A preview's create with 500 annotations before its role: the text and the Markdown
    still show the role and the subjects."""
    padded = binding_of("readers")
    padded["metadata"]["annotations"] = {f"note-{n:03d}": "z" * 40 for n in range(500)}
    padded["subjects"] = [{"kind": "Group", "name": "system:unauthenticated"}]
    rbac = ResourceInfo(
        "rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False
    )
    action = Action(ActionKind.CREATE, rbac, None, padded, "desired")
    parent = ParentResult("c", "WebApp team/x", "sync", actions=[ActionResult(action, False)])
    result = RunResult(dry_run=True, passes=[PassResult(1, [ControllerResult("c", [parent])])])
    for output in (render(result, ReportFormat.TEXT), run_markdown(result)):
        assert "name: cluster-admin" in output and "name: system:unauthenticated" in output
        assert "more lines not shown here" in output


@pytest.mark.parametrize("value", ["`" * 3_000, "a\n```\n</details>\n```` @x", "~~~\n" * 20])
def test_no_value_closes_its_fence(value: str) -> None:
    """Backtick runs longer than a line is kept, fences inside multi-line values, tildes."""
    head = [{**cm("x"), "data": {"k": value}}, cm("y")]
    diff = compare_states([], head, base_creators={}, head_creators={})
    markdown = render_markdown(Comparison(Side("main"), Side("head"), diff))
    reading = assert_inert(markdown)
    assert len(reading.fences) == 2
    assert all("kind: ConfigMap" in fence for fence in reading.fences)

"""`reconcile diff` read by a reviewer of a hostile pull request, through the real command:
what the review shows (text, Markdown, JSON) is the object as it would be applied, never what
an annotation in the pull request's files claims; a large object or a long error takes its room
without hiding the rest, and says what was cut; what the files say is shown as text in the
Markdown (controls and bidirectional characters visible, no Markdown or HTML of its own, no
mention, no link)."""

from __future__ import annotations

import copy
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from reconcile.report.state_diff_markdown import COMMENT_LIMIT, WRAPPER_RESERVE
from tests.support.cli import reconcile
from tests.support.markdown_check import assert_inert

KUBECTL = "kubectl.kubernetes.io/last-applied-configuration"
METACONTROLLER = "metacontroller.k8s.io/last-applied-configuration"
RBAC = "rbac.authorization.k8s.io"


def binding(kind: str, name: str, role: str, subject: str, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{RBAC}/v1",
        "kind": kind,
        "metadata": {"name": name, **meta},
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role},
        "subjects": [{"apiGroup": RBAC, "kind": "Group", "name": subject}],
    }


def claiming(obj: dict[str, Any], annotation: str, claim: dict[str, Any]) -> dict[str, Any]:
    """`obj` with `annotation` saying it is `claim`."""
    obj["metadata"].setdefault("annotations", {})[annotation] = json.dumps(claim)
    return obj


def admin_for_everyone(annotation: str) -> dict[str, Any]:
    """A binding of cluster-admin to the unauthenticated, whose annotation says it is a view
    binding for team-readers."""
    harmless = binding("ClusterRoleBinding", "readers", "view", "team-readers")
    dangerous = binding("ClusterRoleBinding", "readers", "cluster-admin", "system:unauthenticated")
    return claiming(dangerous, annotation, harmless)


def write(root: Path, files: dict[str, Any]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        text = content if isinstance(content, str) else json.dumps(content)
        (root / name).write_text(text)


def review(
    tmp_path: Path, *args: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any], str]:
    """`reconcile diff base head`: its text, its JSON and its Markdown."""
    markdown = tmp_path / "comment.md"
    as_json = tmp_path / "diff.json"
    done = reconcile(
        "diff", "base", "head", *args, "--report-file", f"markdown:{markdown}",
        "--report-file", f"json:{as_json}", cwd=tmp_path,
    )  # fmt: skip
    return done, json.loads(as_json.read_text()), markdown.read_text()


def objects(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{o['kind']} {o['name']}": o for o in report["objects"]}


def block_of(markdown: str, title: str) -> str:
    """The diff of one object in the Markdown."""
    start = markdown.index(f"{title} ")
    return markdown[start : markdown.index("</details>", start)]


@pytest.mark.parametrize("annotation", [KUBECTL, METACONTROLLER])
def test_a_created_object_is_shown_as_it_is_not_as_its_annotation_claims(
    tmp_path: Path, annotation: str
) -> None:
    write(tmp_path / "base", {"empty.yaml": ""})
    write(tmp_path / "head", {"binding.json": admin_for_everyone(annotation)})
    done, report, markdown = review(tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "+ ClusterRoleBinding readers created" in done.stdout
    shown = objects(report)["ClusterRoleBinding readers"]["object"]
    assert shown["roleRef"]["name"] == "cluster-admin"
    assert shown["subjects"] == [
        {"apiGroup": RBAC, "kind": "Group", "name": "system:unauthenticated"}
    ]
    # the claim is data: an annotation shown as its text, not a view of the object
    assert json.loads(shown["metadata"]["annotations"][annotation])["roleRef"]["name"] == "view"
    block = block_of(markdown, "ClusterRoleBinding readers")
    assert "+   name: cluster-admin" in block
    assert "+   name: system:unauthenticated" in block
    claims = [line for line in block.splitlines() if "team-readers" in line]
    assert claims and all(line.startswith(f"+     {annotation}: ") for line in claims)
    assert_inert(markdown)


ECHO_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "echoes.trust.example.com"},
    "spec": {
        "group": "trust.example.com",
        "scope": "Namespaced",
        "names": {"plural": "echoes", "singular": "echo", "kind": "Echo"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                },
            }
        ],
    },
}
ECHO_CONTROLLER = f"""\
apiVersion: metacontroller.k8s.io/v1alpha1
kind: CompositeController
metadata: {{name: echo}}
spec:
  generateSelector: true
  parentResource: {{apiVersion: trust.example.com/v1, resource: echoes}}
  childResources:
  - {{apiVersion: v1, resource: configmaps}}
  - {{apiVersion: {RBAC}/v1, resource: rolebindings}}
  hooks:
    sync:
      command: {{argv: [python3, echo.py], timeout: 10s}}
"""
# The hook returns the parent's spec.children as they are: whatever the pull request wrote.
ECHO_HOOK = """\
import json, sys
request = json.load(sys.stdin)
json.dump({"children": request["parent"].get("spec", {}).get("children", [])}, sys.stdout)
"""


def echo_repository(root: Path, children: list[dict[str, Any]] | None) -> None:
    files: dict[str, Any] = {
        "namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n",
        "crd.json": ECHO_CRD,
        "controller.yaml": ECHO_CONTROLLER,
        "echo.py": ECHO_HOOK,
    }
    if children is not None:
        files["echo.json"] = {
            "apiVersion": "trust.example.com/v1",
            "kind": "Echo",
            "metadata": {"name": "access", "namespace": "team"},
            "spec": {"children": children},
        }
    write(root, files)


@pytest.mark.parametrize("annotation", [KUBECTL, METACONTROLLER])
def test_a_hook_child_is_shown_as_it_is_and_grouped_under_its_controller(
    tmp_path: Path, annotation: str
) -> None:
    """A hook (the pull request's too) returns a RoleBinding whose annotation claims another:
    the review shows the binding the run made."""
    harmless = binding("RoleBinding", "readers", "view", "team-readers", namespace="team")
    dangerous = binding("RoleBinding", "readers", "cluster-admin", "system:unauthenticated")
    echo_repository(tmp_path / "base", None)
    echo_repository(tmp_path / "head", [claiming(dangerous, annotation, harmless)])
    done, report, markdown = review(tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    created = objects(report)["RoleBinding readers"]
    assert created["controller"] == "echo"
    assert created["object"]["roleRef"]["name"] == "cluster-admin"
    assert created["object"]["subjects"][0]["name"] == "system:unauthenticated"
    block = block_of(markdown, "RoleBinding team/readers")
    assert "+   name: cluster-admin" in block and "system:unauthenticated" in block
    for line in block.splitlines():
        assert "team-readers" not in line or line.startswith(f"+     {annotation}: "), line
    assert_inert(markdown)


def test_an_update_or_a_deletion_is_shown_from_the_objects(tmp_path: Path) -> None:
    """The base's binding, truly recorded by its annotation, becomes cluster-admin in the head
    with the old record kept (now a false claim): the fields that change are shown, the claim
    is shown as a change of its own. A deleted object is shown as it was."""
    harmless = binding("ClusterRoleBinding", "readers", "view", "team-readers")
    recorded = claiming(binding("ClusterRoleBinding", "readers", "view", "team-readers"),
                        KUBECTL, harmless)  # fmt: skip
    gone = claiming(binding("ClusterRoleBinding", "old", "cluster-admin", "ops"), KUBECTL,
                    binding("ClusterRoleBinding", "old", "view", "ops"))  # fmt: skip
    write(tmp_path / "base", {"binding.json": recorded, "old.json": gone})
    write(tmp_path / "head", {"binding.json": admin_for_everyone(KUBECTL)})
    done, report, markdown = review(tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    found = objects(report)
    changed = {f["path"]: f for f in found["ClusterRoleBinding readers"]["fields"]}
    assert changed["roleRef.name"]["after"] == "cluster-admin"
    assert changed["subjects[name=system:unauthenticated]"]["op"] == "add"
    assert changed["subjects[name=team-readers]"]["op"] == "remove"
    assert "metadata.annotations" in changed  # the claim, no longer a record of it, shows
    assert "+ roleRef.name: cluster-admin" in done.stdout
    assert found["ClusterRoleBinding old"]["change"] == "deleted"
    assert found["ClusterRoleBinding old"]["object"]["roleRef"]["name"] == "cluster-admin"
    assert "- roleRef.name: view\n+ roleRef.name: cluster-admin" in markdown
    assert "-   name: cluster-admin" in block_of(markdown, "ClusterRoleBinding old")
    assert_inert(markdown)


def test_a_changed_claim_alone_is_a_difference(tmp_path: Path) -> None:
    """The same object, its annotation turned into a false claim: not `no object differs`."""
    harmless = binding("ClusterRoleBinding", "readers", "view", "team-readers")
    recorded = claiming(copy.deepcopy(harmless), KUBECTL, harmless)
    lying = claiming(copy.deepcopy(harmless), KUBECTL, binding(
        "ClusterRoleBinding", "readers", "view", "nobody"))  # fmt: skip
    write(tmp_path / "base", {"binding.json": recorded})
    write(tmp_path / "head", {"binding.json": lying})
    done, report, _ = review(tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    (entry,) = report["objects"]
    assert [f["path"] for f in entry["fields"]] == ["metadata.annotations"]
    assert "nobody" in json.dumps(entry["fields"][0]["after"])


def configmap(name: str, data: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": data,
    }


def test_one_large_object_hides_none_of_the_others(tmp_path: Path) -> None:
    """A 300,000-character value and a 6,000-line script in the first object, 40 small objects
    after it: all 41 are in the comment, the 40 whole, the large one in part, and the note says
    so."""
    big = configmap("aaa-big", {"blob": "x" * 300_000, "script": "echo hi\n" * 6000})
    small = {f"cm-{n:02d}.json": configmap(f"cm-{n:02d}", {"n": str(n)}) for n in range(40)}
    write(tmp_path / "base", {"empty.yaml": ""})
    write(tmp_path / "head", {"big.json": big, **small})
    done, report, markdown = review(tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(report["objects"]) == 41
    assert len(markdown) <= COMMENT_LIMIT - WRAPPER_RESERVE
    reading = assert_inert(markdown)
    assert len(reading.fences) == 41
    for n in range(40):
        assert f"+   n: '{n}'" in block_of(markdown, f"ConfigMap default/cm-{n:02d}")
    big_block = block_of(markdown, "ConfigMap default/aaa-big")
    assert "(shown in part)" in big_block
    assert "more characters not shown)" in big_block and "more lines not shown here" in big_block
    assert "**1 of 41 objects are not shown in full** here (1 shown in part)" in markdown
    # in order: the large one first, as in the text and the JSON
    assert markdown.index("aaa-big") < markdown.index("cm-00") < markdown.index("cm-39")


def test_many_objects_are_all_named_in_order_and_those_that_fit_shown(tmp_path: Path) -> None:
    many = {
        f"cm-{n:03d}.json": configmap(f"cm-{n:03d}", {"v": f"{n}-" + "y" * 1500}) for n in range(60)
    }
    write(tmp_path / "base", {"empty.yaml": ""})
    write(tmp_path / "head", many)
    _, _, markdown = review(tmp_path)
    assert len(markdown) <= COMMENT_LIMIT - WRAPPER_RESERVE
    reading = assert_inert(markdown)
    names = re.findall(r"\+ ConfigMap default/(cm-\d+) created", markdown)
    assert names == [f"cm-{n:03d}" for n in range(60)]
    shown = len(reading.fences)
    assert 10 < shown < 60
    assert len(re.findall(r"<i>\(not shown: 7 lines\)</i>", markdown)) == 60 - shown
    assert (
        f"**{60 - shown} of 60 objects are not shown in full** here ({60 - shown} named only)"
        in (markdown)
    )


def test_long_load_errors_are_each_cut(tmp_path: Path) -> None:
    """25 label values of 20,000 characters in one object, and 30 broken objects: each error is
    cut on its own, 20 are listed, and the comment stays within its size."""
    labels = {f"l{n}": "v" * 20_000 for n in range(25)}
    broken = configmap("labels", {})
    broken["metadata"]["labels"] = labels
    more = {f"bad-{n}.yaml": f"kind: [ConfigMap {n}\n" for n in range(30)}
    write(tmp_path / "base", {"empty.yaml": ""})
    write(tmp_path / "head", {"labels.json": broken, **more})
    done, report, markdown = review(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert any(len(e) > 500_000 for e in report["errors"])  # the JSON has them whole
    assert len(markdown) <= 40_000, len(markdown)
    items = [line for line in markdown.splitlines() if line.startswith("- ")]
    assert all(len(line) <= 2_100 for line in items), [len(line) for line in items]
    assert any("more characters not shown)" in line for line in items)
    assert_inert(markdown)


HOSTILE = (
    "\u202egnp.exe `x` ``` <details><summary>x</summary> --> <!-- @alice @acme/admins #1 GH-2 "
    "[click](https://evil.example) ![i](https://evil.example/i.png) www.evil.example "
    "*bold* $\\color{red}x$ | \x1b[31mred\x1b[0m \u2066iso\u2069 a\u200bb\r\n"
)


def test_what_the_files_say_is_text_in_the_markdown(tmp_path: Path) -> None:
    """Bidirectional controls, terminal escapes, Markdown and HTML, mentions and links in
    names, keys, values, paths and errors: visible, inert, nobody pinged."""
    role = {
        "apiVersion": f"{RBAC}/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "reader " + HOSTILE.replace("\r\n", "").replace("/", "")},
        "rules": [],
    }
    values = configmap("values", {"k": HOSTILE, "multi": f"line\n```\n{HOSTILE}\n</details>"})
    values["metadata"]["annotations"] = {"note": HOSTILE}
    crd = json.loads(json.dumps(ECHO_CRD))

    def echo(value: str) -> dict[str, Any]:
        return {
            "apiVersion": "trust.example.com/v1",
            "kind": "Echo",
            "metadata": {"name": "keys", "namespace": "team"},
            "spec": {HOSTILE: value, "<b>@alice</b>": value},
        }

    namespace = "apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n"
    bad = configmap("bad", {})
    bad["metadata"]["labels"] = {"l": HOSTILE * 3}  # an error that quotes the value
    write(tmp_path / "base", {"ns.yaml": namespace, "crd.json": crd, "echo.json": echo("a")})
    write(tmp_path / "head", {
        "ns.yaml": namespace, "crd.json": crd, "echo.json": echo("b"), "role.json": role,
        "values.json": values,
    })  # fmt: skip
    done, report, markdown = review(tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(report["objects"]) == 3
    reading = assert_inert(markdown)
    assert len(reading.fences) == 3
    assert "\\u202egnp.exe" in markdown and "\\x1b[31m" in markdown and "\\u2066iso" in markdown
    assert "\\u200b" in markdown  # a zero-width space of the data's, shown
    assert "\u202e" not in done.stdout and "\x1b" not in done.stdout  # the text report too

    write(tmp_path / "head", {"bad.json": bad})
    failed, _, markdown = review(tmp_path)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "must be no more than 63 characters" in markdown
    assert_inert(markdown)

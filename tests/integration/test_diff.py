"""`reconcile diff`, through the real command: two refs of a real git repository and two
directories, each side run to convergence with its real command hooks in an in-process
cluster; what a change does reported per object in text, Markdown and JSON, exit 2 when
something differs, 0 when nothing does, 1 when a side cannot be trusted."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import reconcile
from tests.support.examples import EXAMPLES
from tests.support.gitrepo import git

GITOPS = EXAMPLES / "gitops"
INPUTS = ("--local", "apps", "--controllers", "controllers")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The GitOps example as a repository: `main`, and a branch `change` checked out."""
    path = tmp_path / "platform"
    shutil.copytree(GITOPS, path)
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "Greetings")
    git(path, "checkout", "-qb", "change")
    return path


def commit(repo: Path, message: str) -> None:
    git(repo, "commit", "-qam", message)


def as_json(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def changed(report: dict[str, Any]) -> dict[str, tuple[str, list[str]]]:
    """`Kind namespace/name` -> (change, changed field paths)."""
    return {
        f"{o['kind']} {o['namespace']}/{o['name']}": (
            o["change"],
            [f["path"] for f in o.get("fields", [])],
        )
        for o in report["objects"]
    }


def test_a_one_word_change_between_two_refs(repo: Path, tmp_path: Path) -> None:
    greetings = repo / "apps" / "greetings.yaml"
    greetings.write_text(greetings.read_text().replace("Hello from git", "Hello from a branch"))
    commit(repo, "A warmer hello")
    markdown = tmp_path / "comment.md"
    done = reconcile(
        "diff",
        "--git",
        repo.as_uri(),
        "main",
        "change",
        *INPUTS,
        "--report-format",
        "json",
        "--report-file",
        f"markdown:{markdown}",
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stderr
    report = as_json(done)
    assert changed(report) == {
        "ConfigMap greetings/hello-greeting": ("changed", ["data.message"]),
        "Greeting greetings/hello": ("changed", ["spec.message"]),
    }
    fields = [f for o in report["objects"] for f in o["fields"]]
    assert {(f["before"], f["after"]) for f in fields} == {
        ("Hello from git", "Hello from a branch")
    }
    # the ConfigMap is grouped under the controller that made it
    assert {o["name"]: o["controller"] for o in report["objects"]} == {
        "hello-greeting": "greeter",
        "hello": None,
    }
    assert report["base"]["commit"] == git(repo, "rev-parse", "main")
    assert report["head"]["commit"] == git(repo, "rev-parse", "change")
    assert report["head"]["converged"] and report["errors"] == []
    text = markdown.read_text()
    assert "### reconcile diff: 2 objects differ" in text
    assert "- data.message: Hello from git\n+ data.message: Hello from a branch" in text
    assert "last-applied" not in text and "resourceVersion" not in text


def test_revision_expressions_name_the_sides(repo: Path, tmp_path: Path) -> None:
    """What `git rev-parse` resolves (`HEAD~1`, an abbreviated commit and `^`) names a side, as
    the commit it resolves to."""
    greetings = repo / "apps" / "greetings.yaml"
    greetings.write_text(greetings.read_text().replace("Hello from git", "Hello from a branch"))
    commit(repo, "A warmer hello")
    head = git(repo, "rev-parse", "HEAD")
    done = reconcile(
        "diff", "--git", repo.as_uri(), f"{head[:7]}^", "HEAD", *INPUTS, "--report-format",
        "json", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    report = as_json(done)
    assert report["base"]["commit"] == git(repo, "rev-parse", "main")
    assert report["head"]["commit"] == head
    assert changed(report) == {
        "ConfigMap greetings/hello-greeting": ("changed", ["data.message"]),
        "Greeting greetings/hello": ("changed", ["spec.message"]),
    }
    same = reconcile(
        "diff", "--git", repo.as_uri(), "HEAD~1", "main", *INPUTS, "--report-format", "json",
        cwd=tmp_path,
    )  # fmt: skip
    assert same.returncode == 0, same.stdout + same.stderr


def test_a_hook_change_shows_in_every_child_and_nowhere_else(repo: Path, tmp_path: Path) -> None:
    hook = repo / "hooks" / "greeter.py"
    hook.write_text(hook.read_text().replace('{"message": message}', '{"message": message + "!"}'))
    commit(repo, "Greet louder")
    done = reconcile(
        "diff", "--git", repo.as_uri(), "main", "change", *INPUTS, "--report-format", "json",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert changed(as_json(done)) == {
        "ConfigMap greetings/hello-greeting": ("changed", ["data.message"]),
        "ConfigMap greetings/welcome-greeting": ("changed", ["data.message"]),
    }


def test_directories_created_deleted_and_the_same(tmp_path: Path) -> None:
    base, head = tmp_path / "base", tmp_path / "head"
    shutil.copytree(GITOPS, base)
    shutil.copytree(GITOPS, head)
    same = reconcile("diff", "base", "head", *INPUTS, cwd=tmp_path)
    assert same.returncode == 0, same.stdout + same.stderr
    assert same.stdout.startswith("no object differs")

    greetings = head / "apps" / "greetings.yaml"
    documents = greetings.read_text().split("---\n")
    greetings.write_text(
        documents[0]
        + "---\n"
        + documents[1].replace("welcome", "farewell").replace("Welcome aboard", "Goodbye")
    )
    done = reconcile("diff", "base", "head", *INPUTS, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "4 objects differ (2 created, 2 deleted, 0 changed; 20 compared)"
    assert "  + ConfigMap greetings/farewell-greeting created" in lines
    assert "  - ConfigMap greetings/welcome-greeting deleted" in lines
    assert "  + Greeting greetings/farewell created" in lines
    as_report = reconcile("diff", "base", "head", *INPUTS, "--report-format", "json", cwd=tmp_path)
    created = {
        o["name"]: o["object"] for o in as_json(as_report)["objects"] if o["change"] == "created"
    }
    # what the hook asked for, not the server's bookkeeping
    assert created["farewell-greeting"]["data"] == {"message": "Goodbye"}
    assert "resourceVersion" not in created["farewell-greeting"]["metadata"]


def test_status_is_compared_only_when_asked(tmp_path: Path) -> None:
    base, head = tmp_path / "base", tmp_path / "head"
    shutil.copytree(GITOPS, base)
    shutil.copytree(GITOPS, head)
    hook = head / "hooks" / "greeter.py"
    hook.write_text(hook.read_text().replace('"greeted": len(children)', '"greeted": 7'))
    assert reconcile("diff", "base", "head", *INPUTS, cwd=tmp_path).returncode == 0
    done = reconcile(
        "diff", "base", "head", *INPUTS, "--status", "--report-format", "json", cwd=tmp_path
    )
    assert done.returncode == 2, done.stderr
    assert changed(as_json(done)) == {
        "Greeting greetings/hello": ("changed", ["status.greeted"]),
        "Greeting greetings/welcome": ("changed", ["status.greeted"]),
    }


def test_a_side_that_fails_is_an_error_not_a_difference(tmp_path: Path) -> None:
    base, head = tmp_path / "base", tmp_path / "head"
    shutil.copytree(GITOPS, base)
    shutil.copytree(GITOPS, head)
    (head / "hooks" / "greeter.py").write_text("import sys\nsys.exit('broken hook')\n")
    done = reconcile("diff", "base", "head", *INPUTS, "--report-format", "json", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    report = as_json(done)
    assert report["head"]["errors"] and report["base"]["errors"] == []
    assert any("broken hook" in e and e.startswith("head (head): ") for e in report["errors"])

    missing = reconcile("diff", "base", "nowhere", *INPUTS, cwd=tmp_path)
    assert missing.returncode == 1
    assert "head nowhere: no such directory" in missing.stdout

    bad_ref = reconcile(
        "diff", "--git", (tmp_path / "none").as_uri(), "main", "x", *INPUTS, cwd=tmp_path
    )
    assert bad_ref.returncode == 1
    assert "base (main):" in bad_ref.stdout


def test_plain_manifests_are_compared_without_a_word_about_controllers(tmp_path: Path) -> None:
    """A diff of manifests without any controller is an ordinary use: nothing on stderr says
    that no controller ran (a plain run still does)."""
    for side, message in (("base", "hello"), ("head", "hello, world")):
        (tmp_path / side).mkdir()
        (tmp_path / side / "settings.yaml").write_text(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n"
            f"data: {{message: {message!r}}}\n"
        )
    done = reconcile("diff", "base", "head", "--report-format", "json", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert changed(as_json(done)) == {"ConfigMap default/settings": ("changed", ["data.message"])}
    assert "no controllers to run" not in done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    plain = reconcile("--local", "base", cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    assert "no controllers to run" in plain.stderr


def test_help_and_usage(tmp_path: Path) -> None:
    help_text = reconcile("diff", "--help", cwd=tmp_path)
    assert help_text.returncode == 0
    assert "Exit status: 0 no object differs, 2 some do, 1 an error" in " ".join(
        help_text.stdout.split()
    )
    usage = reconcile("diff", "only-one", cwd=tmp_path)
    # a usage error is not "differs"
    assert usage.returncode == 1 and "Missing argument 'HEAD'" in usage.stderr


def test_a_change_to_a_kustomize_overlay(tmp_path: Path) -> None:
    """Two checkouts of a kustomize tree: a patched value is that one field; a generator's new
    content is a new hashed ConfigMap, the old one gone, and the Pod that refers to it."""
    data = Path(__file__).parent / "data" / "kustomize" / "apps"
    for side in ("base", "head"):
        shutil.copytree(data, tmp_path / side / "apps")
        for file in (tmp_path / side).rglob("*.yaml"):
            file.write_text(file.read_text().replace("TEST_NAMESPACE", "kz"))
        (tmp_path / side / "namespace.yaml").write_text(
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: kz}\n"
        )
    overlay = tmp_path / "head" / "apps" / "overlay"
    (overlay / "level.yaml").write_text(
        (overlay / "level.yaml").read_text().replace("debug", "warn")
    )
    done = reconcile(
        "diff", "base", "head", "--local", "namespace.yaml", "--local", "apps/overlay",
        "--report-format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert changed(as_json(done)) == {"ConfigMap kz/settings": ("changed", ["data.level"])}

    kustomization = overlay / "kustomization.yaml"
    kustomization.write_text(kustomization.read_text().replace("from the overlay", "from review"))
    done = reconcile(
        "diff", "base", "head", "--local", "namespace.yaml", "--local", "apps/overlay",
        "--report-format", "json", cwd=tmp_path,
    )  # fmt: skip
    found = changed(as_json(done))
    assert found.pop("ConfigMap kz/settings") == ("changed", ["data.level"])
    assert found.pop("Pod kz/greeter") == (
        "changed",
        ["spec.containers[name=greeter].envFrom[0].configMapRef.name"],
    )
    assert sorted(change for change, _ in found.values()) == ["created", "deleted"]
    assert all(name.startswith("ConfigMap kz/greeting-") for name in found)

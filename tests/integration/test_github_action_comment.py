"""The GitHub Action's pull-request comment, annotations and command line, without a cluster:
`--local` runs, the comment posted to a fake GitHub API on loopback (tests/support/fake_github.py).

The action's steps run as the runner runs them (tests/support/actions.py), its install skipped:
the venv is this test run's own environment (test_github_action.py installs for real). Its
`uses:` steps (setup-python, cache) are never run here; their configuration is checked."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.actions import ActionRun, run_action
from tests.support.controlplane import free_port
from tests.support.fake_github import MAX_BODY, FakeGitHub, Refusal
from tests.support.gitrepo import git
from tests.support.hookserver import serving

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "github-actions"
TOKEN = "ghs_" + "t0k3n" * 8  # a string to look for in every output
CONTEXT = {"token": TOKEN, "workflow": "preview", "job": "plan"}
MARKER = "<!-- reconcile-report: preview/plan -->"
PENDING = "### reconcile: 2 changes pending\n\n| | |\n|:--|:--|\n| Changes pending | 2 |\n"
PR = 7
# This interpreter first on PATH, as setup-python's would be (a version manager's `python3`
# shim costs half a second a step).
PYTHON_FIRST = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: default}
data: {a: "1"}
"""


@pytest.fixture
def runner_temp(tmp_path: Path) -> Path:
    """A runner's temp directory whose venv is this test run's environment (the `install`
    step is skipped)."""
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    assert (Path(sys.prefix) / "bin" / "reconcile").exists(), "the tests run in reconcile's venv"
    (temp / "reconcile-venv").symlink_to(sys.prefix)
    return temp


def fake_venv(
    runner_temp: Path, report: dict[str, object], code: int, markdown: str = PENDING
) -> Path:
    """A venv whose `reconcile` records its arguments (in the file returned), writes the
    reports it is asked for and exits with `code`: for what the action does around a run, in
    a tenth of the time a run takes."""
    venv = runner_temp / "reconcile-venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    argv = runner_temp / "argv.json"
    script = f"""#!{sys.executable}
import json, sys
json.dump(sys.argv[1:], open({str(argv)!r}, "w"))
for i, word in enumerate(sys.argv):
    if sys.argv[i - 1] == "--report-file":
        kind, path = word.split(":", 1)
        with open(path, "w") as out:
            out.write(json.dumps({report!r}) if kind == "json" else {markdown!r})
sys.exit({code})
"""
    (venv / "bin" / "reconcile").write_text(script)
    (venv / "bin" / "reconcile").chmod(0o755)
    return argv


@pytest.fixture
def fake_temp(tmp_path: Path) -> Path:
    """A runner's temp directory whose reconcile is fake_venv's, finding 2 changes."""
    temp = tmp_path / "runner-temp"
    fake_venv(temp, {"errors": []}, 2)
    return temp


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    (root / "apps").mkdir(parents=True)
    (root / "apps" / "settings.yaml").write_text(CONFIGMAP)
    return root


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with serving(FakeGitHub(TOKEN)) as server:
        yield server


def event_env(
    tmp_path: Path,
    api: str,
    *,
    name: str = "pull_request",
    fork: bool = False,
) -> dict[str, str]:
    """The runner's variables for an event of `name` on acme/platform (pull request 7)."""
    head = "someone/platform" if fork else "acme/platform"
    event = {
        "action": "synchronize",
        "number": PR,
        "pull_request": {
            "number": PR,
            "head": {"sha": "0123456789abcdef" * 2 + "01234567", "repo": {"full_name": head}},
            "base": {"repo": {"full_name": "acme/platform"}},
        },
        "repository": {"full_name": "acme/platform"},
    }
    if not name.startswith("pull_request"):
        event = {"ref": "refs/heads/main", "repository": {"full_name": "acme/platform"}}
    path = tmp_path / f"event-{name}.json"
    path.write_text(json.dumps(event))
    return {
        "GITHUB_EVENT_NAME": name,
        "GITHUB_EVENT_PATH": str(path),
        "GITHUB_API_URL": api,
        "GITHUB_REPOSITORY": "acme/platform",
        "GITHUB_SERVER_URL": "https://github.example",
        "GITHUB_RUN_ID": "4242",
        "GITHUB_RUN_ATTEMPT": "1",
        # the fake API is on loopback, whatever proxy the machine has
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }


def preview(
    runner_temp: Path,
    workspace: Path,
    env: dict[str, str],
    *,
    token: str = TOKEN,
    **inputs: str,
) -> ActionRun:
    given = {"args": "--local apps --manifests apps", "dry-run": "true"} | inputs
    return run_action(
        ACTION,
        given,
        runner_temp,
        env=PYTHON_FIRST | env,
        cwd=workspace,
        github=CONTEXT | {"token": token},
        skip={"install"},
    )


def no_token(run: ActionRun) -> None:
    assert TOKEN not in run.stdout + run.stderr + run.summary


# -- the comment ------------------------------------------------------------------------------


def test_the_report_is_one_comment_edited_by_later_runs(
    runner_temp: Path, workspace: Path, github: FakeGitHub, tmp_path: Path
) -> None:
    for n in range(3):  # others' comments first: ours is found on a later page
        github.add(PR, f"a review comment {n}")
    env = event_env(tmp_path, github.url)

    first = preview(runner_temp, workspace, env)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    assert first.outputs["exit-code"] == "2" and first.outputs["changes-pending"] == "true"
    assert [r.method for r in github.writes()] == ["POST"]
    ours = [c for c in github.on(PR) if c.body.startswith(MARKER)]
    assert len(ours) == 1
    markdown = Path(first.outputs["markdown"]).read_text()
    assert "### reconcile: 2 changes pending" in markdown
    assert ours[0].body.startswith(f"{MARKER}\n{markdown.rstrip(chr(10))}\n")
    assert "[workflow run](https://github.example/acme/platform/actions/runs/4242)" in ours[0].body
    assert markdown in first.summary  # the job summary has it too
    assert "posted the report on pull request #7" in first.stdout
    assert not first.warnings
    no_token(first)

    (workspace / "apps" / "settings.yaml").write_text(CONFIGMAP.replace('"1"', '"2"'))
    github.add(PR, "a comment after the report")
    second = preview(runner_temp, workspace, env)
    assert second.returncode == 0, second.stdout[-3000:]
    assert [r.method for r in github.writes()] == ["POST", "PATCH"]
    assert github.writes()[1].path == f"/repos/acme/platform/issues/comments/{ours[0].id}"
    assert len(github.on(PR)) == 5 and ours[0].edits == 1
    assert Path(second.outputs["markdown"]).read_text().rstrip("\n") in ours[0].body
    assert "updated the report on pull request #7" in second.stdout
    # every page of the list was read (two a page here), each request with the token
    pages = [
        r.query.get("page", ["1"])[0]
        for r in github.requests
        if r.method == "GET" and r.path != "/user"
    ]
    assert pages == ["1", "2", "1", "2"]  # the second stops at the page with ours
    assert {r.authorization for r in github.requests} == {f"Bearer {TOKEN}"}
    no_token(second)

    # another use of the action (its own key) has a comment of its own
    staging = preview(runner_temp, workspace, env, **{"comment-key": "staging"})
    assert staging.returncode == 0
    assert [r.method for r in github.writes()] == ["POST", "PATCH", "POST"]
    assert github.on(PR)[-1].body.startswith("<!-- reconcile-report: staging -->\n")


@pytest.mark.parametrize(
    ("refusal", "token", "status"),
    [
        (("POST", Refusal(403, "Resource not accessible by integration")), TOKEN, 403),
        (("GET", Refusal(404, "Not Found")), TOKEN, 404),
        (None, "ghs_not_the_token", 401),
    ],
    ids=["fork-403", "no-access-404", "bad-token-401"],
)
def test_a_token_that_may_not_write_is_a_note_not_a_failure(
    fake_temp: Path,
    workspace: Path,
    github: FakeGitHub,
    tmp_path: Path,
    refusal: tuple[str, Refusal] | None,
    token: str,
    status: int,
) -> None:
    if refusal is not None:
        github.refuse[refusal[0]] = refusal[1]
    env = event_env(tmp_path, github.url, fork=True)
    done = preview(fake_temp, workspace, env, token=token)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.outputs["exit-code"] == "2"
    assert not github.on(PR)
    assert len(done.warnings) == 1
    assert done.warnings[0].startswith(
        f"::warning title=reconcile::the report was not posted on pull request #7: GitHub "
        f"answered {status} ("
    )
    note = [line for line in done.summary.splitlines() if "**reconcile:**" in line]
    assert len(note) == 1
    assert "The pull request comes from the fork someone/platform" in note[0]
    assert "`pull-requests: write`" in note[0]
    assert "### reconcile: 2 changes pending" in done.summary  # the report is still there
    assert token not in done.stdout + done.stderr + done.summary
    no_token(done)


def test_an_outage_is_a_warning_not_a_failure(
    fake_temp: Path, workspace: Path, github: FakeGitHub, tmp_path: Path
) -> None:
    github.refuse["POST"] = Refusal(502, "Server Error")
    done = preview(fake_temp, workspace, event_env(tmp_path, github.url))
    assert done.returncode == 0 and done.outputs["exit-code"] == "2"
    assert [r.method for r in github.writes()] == ["POST"]  # a post is never repeated
    assert len(done.warnings) == 1 and "GitHub answered 502 (Server Error)" in done.warnings[0]
    assert "was not posted on pull request #7" in done.summary


def test_no_answer_at_all_is_a_warning(tmp_path: Path) -> None:
    """Nothing listens on the API's port: the list is asked twice (one retry), then a
    warning; comment.py exits 0."""
    markdown = tmp_path / "report.md"
    markdown.write_text("### reconcile: nothing to do\n")
    env = event_env(tmp_path, f"http://127.0.0.1:{free_port()}")
    done = run_comment(markdown, env, tmp_path)
    assert done.returncode == 0
    assert (
        "::warning title=reconcile::the report was not posted on pull request #7: GitHub "
        "could not be reached (" in done.stdout
    )
    assert TOKEN not in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("event", "comment"),
    [("push", "true"), ("workflow_dispatch", "true"), ("pull_request", "false")],
)
def test_no_pull_request_or_no_comment_asked_sends_nothing(
    fake_temp: Path,
    workspace: Path,
    github: FakeGitHub,
    tmp_path: Path,
    event: str,
    comment: str,
) -> None:
    env = event_env(tmp_path, github.url, name=event)
    done = preview(fake_temp, workspace, env, comment=comment)
    assert done.returncode == 0 and done.outputs["exit-code"] == "2"
    assert github.requests == []
    assert not done.warnings
    assert "### reconcile: 2 changes pending" in done.summary


def test_a_pull_request_target_event_comments_too(
    fake_temp: Path, workspace: Path, github: FakeGitHub, tmp_path: Path
) -> None:
    done = preview(
        fake_temp, workspace, event_env(tmp_path, github.url, name="pull_request_target")
    )
    assert done.returncode == 0
    assert [r.method for r in github.writes()] == ["POST"]


def run_comment(
    markdown: Path, env: dict[str, str], tmp_path: Path, key: str = "preview/plan"
) -> subprocess.CompletedProcess[str]:
    """comment.py as the action's step runs it."""
    summary = tmp_path / "summary.md"
    summary.touch()
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_"))}
    return subprocess.run(
        [
            sys.executable,
            str(ACTION / "comment.py"),
            f"--markdown={markdown}",
            f"--key={key}",
            "--exit-code=2",
        ],
        env=clean
        | env
        | {
            "RECONCILE_COMMENT_TOKEN": TOKEN,
            "RECONCILE_WORKFLOW_TOKEN": TOKEN,
            "GITHUB_STEP_SUMMARY": str(summary),
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_report_too_long_for_a_comment_is_cut_at_a_line_with_a_note(
    github: FakeGitHub, tmp_path: Path
) -> None:
    lines = ["### reconcile: 900 changes pending", ""]
    for n in range(900):  # each parent a <details> block with a diff fence, as the report has
        lines += [
            f"<details><summary>Parent {n}</summary>",
            "",
            "```diff",
            *(f"+ key{k}: {'é' * 20} value {n}.{k}" for k in range(3)),
            "```",
            "",
            "</details>",
            "",
        ]
    markdown = tmp_path / "report.md"
    markdown.write_text("\n".join(lines))
    assert len(markdown.read_text()) > 2 * MAX_BODY

    done = run_comment(markdown, event_env(tmp_path, github.url), tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [r.method for r in github.writes()] == ["POST"]
    (comment,) = github.on(PR)
    body = comment.body
    assert MAX_BODY - 400 < len(body) <= MAX_BODY
    assert body.startswith(f"{MARKER}\n### reconcile: 900 changes pending\n")
    shown, note = body.split("\n\n> [!NOTE]\n> ", 1)
    cut = re.match(
        r"This comment is cut to stay under GitHub's 65536 characters: lines (\d+) ", note
    )
    assert cut is not None
    left_out = int(cut.group(1))  # the first line left out
    assert f"to {len(lines) - 1} of the report" in note  # the last line is empty
    assert (
        "The whole report is in the job summary of [workflow run](https://github.example/" in note
    )
    # whole lines, then what closes the fence and the <details> they leave open
    kept = f"{MARKER}\n" + "\n".join(lines[: left_out - 1])
    assert shown.startswith(kept)
    assert set(shown[len(kept) :].split()) <= {"```", "</details>"}
    assert shown.count("```") % 2 == 0
    assert shown.count("<details>") == shown.count("</details>")
    assert body.endswith("</sub>\n")


# -- annotations ------------------------------------------------------------------------------


BROKEN_SECOND_DOCUMENT = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: fine, namespace: default}
---
# no name
apiVersion: v1
kind: ConfigMap
metadata: {namespace: default}
"""

SEED_WITH_A_BAD_ITEM = """\
# the team's namespace and settings
---
apiVersion: v1
kind: Namespace
metadata: {name: team}
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: ok, namespace: team}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: Not_Valid, namespace: team}
"""

CONTROLLERS = """\
apiVersion: metacontroller.k8s.io/v1alpha1
kind: CompositeController
metadata: {name: fine}
spec:
  parentResource: {apiVersion: v1, resource: configmaps}
  hooks: {sync: {webhook: {url: "http://hooks.invalid/sync"}}}
---

apiVersion: metacontroller.k8s.io/v1alpha1
kind: CompositeController
metadata: {name: broken}
spec:
  parentResource: {apiVersion: v1, resource: configmaps}
  hooks: {}
"""


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_manifest_errors_are_annotated_on_their_file_and_line(
    runner_temp: Path, workspace: Path, tmp_path: Path
) -> None:
    write(workspace, {"broken/app.yaml": BROKEN_SECOND_DOCUMENT, "bad.yaml": "kind: [ConfigMap\n"})
    outside = tmp_path / "elsewhere" / "app.yaml"  # named, but not in the workspace
    write(outside.parent, {outside.name: BROKEN_SECOND_DOCUMENT})
    args = f"--local apps --manifests broken --manifests bad.yaml --manifests {outside}"
    failed = preview(runner_temp, workspace, {}, args=args)
    assert failed.returncode == 1 and failed.outputs["exit-code"] == "1"
    assert len(failed.annotations) == 3, failed.annotations
    assert failed.annotations[0] == (
        "::error file=broken/app.yaml,line=4,title=reconcile::--manifests broken/app.yaml "
        "(document 2): missing metadata.name"
    )
    assert failed.annotations[1].startswith(
        "::error file=bad.yaml,line=2,col=1,title=reconcile::--manifests bad.yaml: bad.yaml: "
        "invalid YAML: while parsing a flow sequence"
    )
    assert failed.annotations[2] == (
        f"::error title=reconcile::--manifests {outside} (document 2): missing metadata.name"
    )


def test_controller_errors_are_annotated_on_their_file_and_line(
    runner_temp: Path, workspace: Path
) -> None:
    write(workspace, {"controllers/all.yaml": CONTROLLERS})
    failed = preview(runner_temp, workspace, {}, args="--local apps --controllers controllers")
    assert failed.returncode == 1
    assert failed.annotations == [
        "::error file=controllers/all.yaml,line=7,title=reconcile::CompositeController broken "
        "(controllers/all.yaml (document 2)): spec.hooks.sync: is required"
    ]


def test_local_failures_are_one_annotation_each_at_most_ten(
    runner_temp: Path, workspace: Path
) -> None:
    """`--local` names its failures relative to its directory, one a line."""
    files = {"seed/a-team.yaml": SEED_WITH_A_BAD_ITEM}
    for n in range(11):
        files[f"seed/cm{n:02d}.yaml"] = f"# {n}\n---\n" + CONFIGMAP.replace("settings", "Bad_")
    write(workspace, files)
    failed = preview(runner_temp, workspace, {}, args="--local seed")
    assert failed.returncode == 1
    assert len(failed.annotations) == 10
    assert failed.annotations[0].startswith(
        "::error file=seed/a-team.yaml,line=6,title=reconcile::--local a-team.yaml (document 2, "
        'item 2): ConfigMap team/Not_Valid: Invalid (422): ConfigMap "Not_Valid" is invalid'
    )
    assert failed.annotations[1].startswith(
        "::error file=seed/cm00.yaml,line=2,title=reconcile::--local cm00.yaml (document 1): "
        "ConfigMap default/Bad_: Invalid (422)"
    )
    assert failed.annotations[8].startswith("::error file=seed/cm07.yaml,line=2,")
    assert failed.annotations[9] == (
        "::error title=reconcile::3 more errors: see the job summary and the JSON report"
    )


def annotate(report: dict[str, object], words: list[str], cwd: Path, workspace: Path) -> list[str]:
    path = cwd / "report.json"
    path.write_text(json.dumps(report))
    (cwd / "words").write_text("".join(f"{w}\0" for w in words))
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RECONCILE_"))}
    done = subprocess.run(
        [sys.executable, str(ACTION / "annotate.py"), str(path), str(cwd / "words")],
        env=clean | {"GITHUB_WORKSPACE": str(workspace)},
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.splitlines()


def test_annotation_properties_and_messages_are_escaped(tmp_path: Path) -> None:
    (tmp_path / "odd,name:100%.yaml").write_text("a: 1\n---\nb: 2\n")
    error = "--manifests odd,name:100%.yaml (document 2): line one\nline two\r"
    assert annotate({"errors": [error], "source": None}, [], tmp_path, tmp_path) == [
        "::error file=odd%2Cname%3A100%25.yaml,line=2,title=reconcile::--manifests "
        "odd,name:100%25.yaml (document 2): line one%0Aline two%0D"
    ]


def test_a_git_run_places_no_error_in_the_workspace(tmp_path: Path) -> None:
    """Its files were read from a checkout: the workspace's file of the same name may differ."""
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "x.yaml").write_text("a: 1\n")
    error = "--local: 1 manifest failed to load:\n  x.yaml (document 1): missing metadata.name"
    source = {"url": "https://github.example/acme/platform", "commit": "0" * 40}
    assert annotate(
        {"errors": [error], "source": source}, ["--local", "apps"], tmp_path, tmp_path
    ) == ["::error title=reconcile::--local x.yaml (document 1): missing metadata.name"]
    assert annotate({"errors": [error], "source": None}, ["--local=apps"], tmp_path, tmp_path) == [
        "::error file=apps/x.yaml,line=1,title=reconcile::--local x.yaml (document 1): "
        "missing metadata.name"
    ]


@pytest.mark.parametrize(
    ("text", "number", "line"),
    [
        ("a: 1\n", 1, 1),
        ("a: 1\n---\nb: 2\n", 2, 2),
        ("# c\n\n---\na: 1\n---\nb: 2\n", 2, 5),
        ("%YAML 1.1\n---\na: 1\n", 1, 2),
        ("a: |\n  x\n---\nb: 1\n", 2, 3),
        ("--- {a: 1}\n--- {b: 2}\n", 2, 2),
        ("---\n---\n---\nc: 1\n", 3, 3),
        ("a: 1\n", 2, None),
        ("a: '---'\n----\nb: 1\n", 2, None),  # `----` is no separator
    ],
)
def test_where_a_document_starts(text: str, number: int, line: int | None) -> None:
    loaded = _load_script("annotate")
    assert loaded.document_line(text, number) == line
    if line is not None:  # as PyYAML counts documents (reconcile reads them with it)
        assert len(list(yaml.safe_load_all(text))) >= number


def _load_script(name: str) -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"action_{name}", ACTION / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


# -- the command line -------------------------------------------------------------------------


def test_diff_gets_the_action_options_after_its_name(tmp_path: Path) -> None:
    runner_temp = tmp_path / "runner-temp"
    argv = fake_venv(runner_temp, {"errors": []}, 2, "### reconcile: a diff\n")
    done = run_action(
        ACTION,
        {"args": "diff main 'feature x' --git https://github.example/acme/platform"},
        runner_temp,
        env=PYTHON_FIRST,
        cwd=tmp_path,
        github=CONTEXT,
        skip={"install"},
    )
    assert done.returncode == 0, done.stdout + done.stderr  # differences fail only when asked
    assert done.outputs["exit-code"] == "2" and done.outputs["changes-pending"] == "true"
    out = Path(done.outputs["report"]).parent
    assert json.loads(argv.read_text()) == [
        "diff",
        "--report-format",
        "none",
        "--report-file",
        f"json:{out}/report.json",
        "--report-file",
        f"markdown:{out}/report.md",
        "main",
        "feature x",
        "--git",
        "https://github.example/acme/platform",
    ]
    assert "### reconcile: a diff" in done.summary

    strict = run_action(
        ACTION,
        {"args": "diff a b", "fail-on-changes": "true"},
        runner_temp,
        env=PYTHON_FIRST,
        cwd=tmp_path,
        github=CONTEXT,
        skip={"install"},
    )
    assert strict.returncode == 2


def test_the_run_gets_the_action_options_before_the_arguments(tmp_path: Path) -> None:
    runner_temp = tmp_path / "runner-temp"
    argv = fake_venv(runner_temp, {"errors": []}, 0)
    done = run_action(
        ACTION,
        {"args": "--local apps", "dry-run": "server", "kubeconfig": "apiVersion: v1"},
        runner_temp,
        env=PYTHON_FIRST,
        cwd=tmp_path,
        github=CONTEXT,
        skip={"install"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    words = json.loads(argv.read_text())
    out = Path(done.outputs["report"]).parent
    assert words[:6] == [
        "--report-format",
        "none",
        "--report-file",
        f"json:{out}/report.json",
        "--report-file",
        f"markdown:{out}/report.md",
    ]
    assert words[6:] == [
        "--kubeconfig",
        str(runner_temp / "reconcile-kubeconfig"),
        "--dry-run=server",
        "--local",
        "apps",
    ]


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        (
            {"dry-run": "true"},
            "input dry-run is 'true', but `diff` writes nothing: leave dry-run false with diff",
        ),
        (
            {"dry-run": "server"},
            "input dry-run is 'server', but `diff` writes nothing: leave dry-run false with diff",
        ),
        (
            {"kubeconfig": "apiVersion: v1"},
            "input kubeconfig is set, but `diff` reads no cluster: leave it empty",
        ),
    ],
)
def test_diff_with_a_dry_run_or_a_cluster_fails_before_it_runs(
    tmp_path: Path, inputs: dict[str, str], message: str
) -> None:
    runner_temp = tmp_path / "runner-temp"
    argv = fake_venv(runner_temp, {"errors": []}, 0)
    refused = run_action(
        ACTION,
        {"args": "diff main feature", **inputs},
        runner_temp,
        env=PYTHON_FIRST,
        cwd=tmp_path,
        github=CONTEXT,
        skip={"install"},
    )
    assert refused.returncode == 1 and refused.outputs["exit-code"] == "1"
    assert refused.annotations == [f"::error title=reconcile::{message}"]
    assert not argv.exists()


@pytest.mark.parametrize("value", ["True", "yes", "", " true"])
@pytest.mark.parametrize("flag", ["comment", "cache"])
def test_the_new_boolean_inputs_are_true_or_false(tmp_path: Path, flag: str, value: str) -> None:
    runner_temp = tmp_path / "runner-temp"
    argv = fake_venv(runner_temp, {"errors": []}, 0)
    refused = run_action(
        ACTION,
        {"args": "--local apps", flag: value},
        runner_temp,
        env=PYTHON_FIRST,
        cwd=tmp_path,
        github=CONTEXT,
        skip={"install"},
    )
    assert refused.returncode == 1
    assert refused.annotations == [
        f"::error title=reconcile::input {flag} must be true or false, not '{value}'"
    ]
    assert not argv.exists()


# -- the install ------------------------------------------------------------------------------


def test_python_and_the_cache_are_pinned_actions_the_runner_would_run(tmp_path: Path) -> None:
    runner_temp = tmp_path / "runner-temp"
    fake_venv(runner_temp, {"errors": []}, 0)
    done = run_action(
        ACTION,
        {"args": ""},
        runner_temp,
        env=PYTHON_FIRST,
        cwd=tmp_path,
        github=CONTEXT,
        skip={"install"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    uses = {step["id"]: step for step in done.skipped}
    assert list(uses) == ["python", "cache"]
    python, cache = uses["python"], uses["cache"]
    # pinned by commit: a moved tag cannot change what runs
    assert re.fullmatch(r"actions/setup-python@[0-9a-f]{40}", python["uses"])
    assert re.fullmatch(r"actions/cache@[0-9a-f]{40}", cache["uses"])
    assert python["if"] == "inputs.python-version != ''"
    assert python["with"] == {
        "python-version": "${{ inputs.python-version }}",
        "update-environment": False,
    }
    assert cache["if"] == "inputs.cache == 'true'"
    assert cache["with"] == {
        "path": "${{ steps.plan.outputs.venv }}",
        "key": "${{ steps.plan.outputs.key }}",
    }
    action = yaml.safe_load((ACTION / "action.yml").read_text())
    assert action["inputs"]["python-version"]["default"] == "3.11"
    steps = [step["id"] for step in action["runs"]["steps"]]
    # the interpreter before the key (which names it), the cache before the install
    assert steps.index("python") < steps.index("plan") < steps.index("cache")
    assert steps.index("cache") < steps.index("install")


def install_key(spec: str, cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, str(ACTION / "install_key.py"), spec],
        cwd=cwd,
        env=os.environ | {"RUNNER_OS": "Linux", "RUNNER_ARCH": "X64"},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_the_install_key_follows_what_is_installed(tmp_path: Path) -> None:
    source = tmp_path / "package"
    (source / "pkg").mkdir(parents=True)
    (source / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (source / "pkg" / "m.py").write_text("x = 1\n")
    key = install_key(str(source), tmp_path)
    version = ".".join(map(str, sys.version_info[:3]))
    assert re.fullmatch(rf"reconcile-venv-Linux-X64-py{version}-[0-9a-f]{{24}}", key)
    # what an install or a test run leaves in the source changes nothing
    for leftover in (".git/HEAD", "pkg/__pycache__/m.pyc", "build/lib/m.py", "p.egg-info/PKG"):
        (source / leftover).parent.mkdir(parents=True, exist_ok=True)
        (source / leftover).write_text("anything")
    assert install_key(str(source), tmp_path) == key
    (source / "pkg" / "m.py").write_text("x = 2\n")
    assert install_key(str(source), tmp_path) != key
    assert install_key("reconcile-batch==0.1.0", tmp_path) != install_key(
        "reconcile-batch==0.2.0", tmp_path
    )


def test_the_preview_example_may_comment_and_the_apply_example_may_not() -> None:
    preview = yaml.safe_load((ACTION / "examples" / "preview.yml").read_text())
    apply = yaml.safe_load((ACTION / "examples" / "apply.yml").read_text())
    assert preview[True] == "pull_request"  # YAML 1.1 reads the key `on` as true
    assert preview["permissions"] == {"contents": "read", "pull-requests": "write"}
    assert apply["permissions"] == {"contents": "read"}
    for workflow in (preview, apply):
        for job in workflow["jobs"].values():
            for step in job["steps"]:
                assert "github-token" not in step.get("with", {})  # the job's own token


def test_a_diff_of_the_pull_request_is_posted_as_the_comment(
    runner_temp: Path, github: FakeGitHub, tmp_path: Path
) -> None:
    """review.yml's step, as the runner runs it: `args: diff --git ...` compares the base and
    the head of a real repository; the differences (exit 2) are the comment, and the step
    passes."""
    repo = tmp_path / "workspace"
    shutil.copytree(ROOT / "examples" / "gitops", repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Greetings")
    base = git(repo, "rev-parse", "HEAD")
    greetings = repo / "apps" / "greetings.yaml"
    greetings.write_text(greetings.read_text().replace("Hello from git", "Hello from review"))
    git(repo, "commit", "-qam", "A new hello")
    head = git(repo, "rev-parse", "HEAD")
    review = yaml.safe_load((ACTION / "examples" / "review.yml").read_text())
    (step,) = [s for s in review["jobs"]["review"]["steps"] if "args" in s.get("with", {})]
    args = (
        step["with"]["args"]
        .replace("${{ github.workspace }}", str(repo))
        .replace("${{ github.event.pull_request.base.sha }}", base)
        .replace("${{ github.event.pull_request.head.sha }}", head)
    )
    assert args.startswith("diff --git file://")
    run = run_action(
        ACTION,
        {"args": args},
        runner_temp,
        env=PYTHON_FIRST | event_env(tmp_path, github.url),
        cwd=repo,
        github=CONTEXT,
        skip={"install"},
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert run.outputs["exit-code"] == "2" and run.outputs["changes-pending"] == "true"
    (comment,) = [c for c in github.on(PR) if c.body.startswith(MARKER)]
    assert "### reconcile diff: 2 objects differ" in comment.body
    assert "- data.message: Hello from git\n+ data.message: Hello from review" in comment.body
    assert "- spec.message: Hello from git\n+ spec.message: Hello from review" in comment.body
    assert "### reconcile diff" in run.summary
    no_token(run)


def test_the_review_example_needs_no_secret() -> None:
    review = yaml.safe_load((ACTION / "examples" / "review.yml").read_text())
    assert review[True] == "pull_request"
    assert review["permissions"] == {"contents": "read", "pull-requests": "write"}
    assert "secrets." not in (ACTION / "examples" / "review.yml").read_text()
    checkout, action = review["jobs"]["review"]["steps"]
    assert re.fullmatch(r"actions/checkout@[0-9a-f]{40}", checkout["uses"])
    assert checkout["with"]["fetch-depth"] == 0
    assert "kubeconfig" not in action["with"] and "dry-run" not in action["with"]

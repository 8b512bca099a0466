"""The GitHub Action against what others control, its steps run as the runner runs them: the
comment thread (anyone who may comment can write the action's hidden marker), the review a
pull request's files make (posted as that comment), and the step's inputs (`dry-run: true`
is final, whatever `args` or the environment say).

The comment goes to a fake GitHub API on loopback (tests/support/fake_github.py) that, like
GitHub, lets a token that may write edit anyone's comment: only the action keeps to its own."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.test_diff_trust import KUBECTL, admin_for_everyone, configmap
from tests.integration.test_github_action import controller_args
from tests.integration.test_github_action_comment import (
    ACTION,
    CONTEXT,
    MARKER,
    PR,
    PYTHON_FIRST,
    TOKEN,
    event_env,
    fake_venv,
    no_token,
    preview,
)
from tests.support.actions import run_action
from tests.support.backends import Backend
from tests.support.controlplane import TESTED_USER, ControlPlane
from tests.support.examples import load_example
from tests.support.fake_github import ACTIONS_BOT, FakeGitHub, Refusal
from tests.support.gitrepo import git
from tests.support.hookserver import serving
from tests.support.markdown_check import assert_inert

PLANTED = f"{MARKER}\n### reconcile: no changes\n\nAll good, merge away."


@pytest.fixture
def venv_temp(tmp_path: Path) -> Path:
    """A runner's temp directory whose venv is this test run's environment."""
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    (temp / "reconcile-venv").symlink_to(sys.prefix)
    return temp


@pytest.fixture
def kubeconfig(control_plane: ControlPlane) -> str:
    """What a repository secret would hold: a kubeconfig for the tested user only."""
    return json.dumps(control_plane._kubeconfig_dict([TESTED_USER], TESTED_USER))


@pytest.fixture
def hello(live_backend: Backend) -> Iterator[str]:
    loaded = load_example(live_backend, "hello-world", "crd.yaml", "hello.yaml")
    yield loaded.name("hello")
    loaded.cleanup()


@pytest.fixture
def fake_temp(tmp_path: Path) -> Path:
    temp = tmp_path / "runner-temp"
    fake_venv(temp, {"errors": []}, 2)
    return temp


def ours(github: FakeGitHub, login: str) -> list[int]:
    return [c.id for c in github.on(PR) if c.user == login and c.body.startswith(MARKER)]


def patched(github: FakeGitHub) -> list[int]:
    return [int(r.path.rsplit("/", 1)[1]) for r in github.writes() if r.method == "PATCH"]


@pytest.mark.parametrize(
    "planter",
    ["mallory", "github-actions", "GitHub-Actions", "reviewer-bot[bot]"],
    ids=["another-user", "lookalike-login", "lookalike-case", "another-bot"],
)
def test_a_planted_marker_is_never_edited(fake_temp: Path, tmp_path: Path, planter: str) -> None:
    """Someone else's comment starting with the marker, older than ours: the action posts its
    own, then edits only that one; the planted comment keeps its words."""
    with serving(FakeGitHub(TOKEN)) as github:
        planted = github.add(PR, PLANTED, user=planter)
        env = event_env(tmp_path, github.url)
        workspace = tmp_path / "workspace"
        workspace.mkdir()
        first = preview(fake_temp, workspace, env)
        assert first.returncode == 0, first.stdout + first.stderr
        assert [r.method for r in github.writes()] == ["POST"]
        (own,) = ours(github, ACTIONS_BOT)
        second = preview(fake_temp, workspace, env)
        assert second.returncode == 0
        assert patched(github) == [own]
        assert planted.body == PLANTED and planted.edits == 0
        assert "updated the report on pull request #7" in second.stdout
        no_token(second)


def test_a_user_token_edits_only_what_that_user_wrote(fake_temp: Path, tmp_path: Path) -> None:
    """A personal token (`GET /user` answers `reviewer`): a marker comment by the workflow's
    bot and one by another user are both someone else's."""
    with serving(FakeGitHub(TOKEN, login="reviewer", user_token=True)) as github:
        by_bot = github.add(PR, PLANTED, user=ACTIONS_BOT)
        by_other = github.add(PR, PLANTED, user="mallory")
        env = event_env(tmp_path, github.url)
        workspace = tmp_path / "workspace"
        workspace.mkdir()
        for _ in range(2):
            done = preview(fake_temp, workspace, env, **{"github-token": TOKEN})
            assert done.returncode == 0, done.stdout + done.stderr
        (own,) = ours(github, "reviewer")
        assert [r.method for r in github.writes()] == ["POST", "PATCH"]
        assert patched(github) == [own]
        assert by_bot.edits == 0 and by_other.edits == 0
        assert any(r.path == "/user" for r in github.requests)


def test_a_github_app_token_edits_nothing_it_cannot_tell_is_its_own(
    fake_temp: Path, tmp_path: Path
) -> None:
    """An installation token that is not the job's own (a GitHub App's writes as its app's
    bot): a marker comment by github-actions[bot] is not its own, nor can its own be told, so
    every run posts anew."""
    app_token = "ghs_" + "app" * 12
    with serving(FakeGitHub(app_token, login="platform-bot[bot]")) as github:
        by_actions = github.add(PR, PLANTED, user=ACTIONS_BOT)
        workspace = tmp_path / "workspace"
        workspace.mkdir()
        for _ in range(2):
            done = preview(
                fake_temp, workspace, event_env(tmp_path, github.url), **{"github-token": app_token}
            )
            assert done.returncode == 0, done.stdout + done.stderr
            assert app_token not in done.stdout + done.stderr + done.summary
        assert [r.method for r in github.writes()] == ["POST", "POST"]
        assert by_actions.edits == 0


@pytest.mark.parametrize(
    "refusal",
    [Refusal(502, "Server Error"), Refusal(403, "API rate limit exceeded")],
    ids=["outage", "other-403"],
)
def test_an_identity_that_cannot_be_told_edits_nothing(
    fake_temp: Path, tmp_path: Path, refusal: Refusal
) -> None:
    """`GET /user` not answered as it should: the action cannot tell its comments from
    others', so it edits none, not even its own: the report is a new comment."""
    with serving(FakeGitHub(TOKEN)) as github:
        github.add(PR, PLANTED, user=ACTIONS_BOT)  # ours, as far as anyone can tell
        github.refuse["GET /user"] = refusal
        workspace = tmp_path / "workspace"
        workspace.mkdir()
        done = preview(fake_temp, workspace, event_env(tmp_path, github.url))
        assert done.returncode == 0, done.stdout + done.stderr
        assert [r.method for r in github.writes()] == ["POST"]
        assert len(ours(github, ACTIONS_BOT)) == 2


def test_comments_without_an_author_are_nobody_s(fake_temp: Path, tmp_path: Path) -> None:
    with serving(FakeGitHub(TOKEN)) as github:
        ghost = github.add(PR, PLANTED, user="")  # a deleted account: GitHub's `ghost`
        workspace = tmp_path / "workspace"
        workspace.mkdir()
        done = preview(fake_temp, workspace, event_env(tmp_path, github.url))
        assert done.returncode == 0
        assert [r.method for r in github.writes()] == ["POST"] and ghost.edits == 0


# -- the review a pull request makes, as the comment ------------------------------------------


def test_a_forged_review_is_posted_as_what_would_be_applied(
    venv_temp: Path,
    tmp_path: Path,
) -> None:
    """review.yml's step on a pull request that adds a cluster-admin binding claiming to be a
    view binding, a 300,000-character object and forty small ones, with a hostile name: the
    comment shows the binding as it is, names every object, holds GitHub's limit without
    being cut again, and is inert."""
    repo = tmp_path / "workspace"
    (repo / "apps").mkdir(parents=True)
    (repo / "apps" / "first.json").write_text(json.dumps(configmap("first", {"a": "1"})))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "First")
    base = git(repo, "rev-parse", "HEAD")
    files = {
        "binding.json": admin_for_everyone(KUBECTL),
        "aaa-big.json": configmap("aaa-big", {"blob": "x" * 300_000}),
        **{
            f"cm-{n:02d}.json": configmap(f"cm-{n:02d}", {"n": f"{n} @alice \u202e"})
            for n in range(40)
        },
    }
    for name, content in files.items():
        (repo / "apps" / name).write_text(json.dumps(content))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "More")
    head = git(repo, "rev-parse", "HEAD")
    with serving(FakeGitHub(TOKEN)) as github:
        run = run_action(
            ACTION,
            {"args": f"diff --git file://{repo} {base} {head} --local apps"},
            venv_temp,
            env=PYTHON_FIRST | event_env(tmp_path, github.url),
            cwd=repo,
            github=CONTEXT,
            skip={"install"},
        )
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        (comment,) = github.on(PR)
    body = comment.body
    assert len(body) <= 65_536
    assert "This comment is cut" not in body  # the report fits as it is
    assert "+   name: cluster-admin" in body and "+   name: system:unauthenticated" in body
    assert body.count("<details><summary>+ ConfigMap") == 41
    assert "(shown in part)" in body
    assert_inert(body.split("\n<sub>")[0].split("\n", 1)[1])  # the report, without our lines
    no_token(run)


# -- dry-run: true is final --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dry_run", "args"),
    [
        ("true", "--local apps --dry-run=none"),
        ("true", "--local apps --dry-run none"),
        ("true", "--dry-run=false --local apps"),
        ("true", "--local apps --dry-run=0"),
        ("true", "--local apps --dry-run=NONE"),
        ("true", "--local apps --dry-run"),
        ("true", "--local apps --dry-run=client"),
        ("server", "--local apps --dry-run=none"),
        ("server", "--local apps --dry-run=client"),
        ("true", "--local apps -- --dry-run=none"),
    ],
)
def test_args_cannot_change_the_input_dry_run(tmp_path: Path, dry_run: str, args: str) -> None:
    runner_temp = tmp_path / "runner-temp"
    argv = fake_venv(runner_temp, {"errors": []}, 0)
    refused = run_action(
        ACTION, {"args": args, "dry-run": dry_run}, runner_temp, env=PYTHON_FIRST,
        cwd=tmp_path, github=CONTEXT, skip={"install"},
    )  # fmt: skip
    assert refused.returncode == 1 and refused.outputs["exit-code"] == "1"
    (annotation,) = refused.annotations
    assert annotation.startswith(
        f"::error title=reconcile::input dry-run is '{dry_run}', and args names a dry-run mode "
        "too (--dry-run"
    )
    assert not argv.exists()  # reconcile never ran


@pytest.mark.parametrize(
    ("dry_run", "variable", "refused"),
    [
        ("true", "none", True),
        ("true", "false", True),
        ("true", "server", True),
        ("server", "client", True),
        ("true", "true", False),
        ("true", "client", False),
        ("server", "server", False),
    ],
)
def test_the_environment_cannot_change_the_input_dry_run(
    tmp_path: Path, dry_run: str, variable: str, refused: bool
) -> None:
    """RECONCILE_DRY_RUN in the step's `env:` that says otherwise is refused; one that says
    the same is harmless."""
    runner_temp = tmp_path / "runner-temp"
    argv = fake_venv(runner_temp, {"errors": []}, 0)
    done = run_action(
        ACTION, {"args": "--local apps", "dry-run": dry_run}, runner_temp,
        env=PYTHON_FIRST | {"RECONCILE_DRY_RUN": variable}, cwd=tmp_path, github=CONTEXT,
        skip={"install"},
    )  # fmt: skip
    if refused:
        assert done.returncode == 1 and not argv.exists()
        assert done.annotations == [
            f"::error title=reconcile::input dry-run is '{dry_run}', but the step's environment "
            f"sets RECONCILE_DRY_RUN='{variable}': the input decides alone; unset the variable"
        ]
    else:
        assert done.returncode == 0, done.stdout + done.stderr
        assert "--dry-run" in json.loads(argv.read_text())[6:][0]


def test_without_a_dry_run_input_args_choose(tmp_path: Path) -> None:
    """`dry-run: false` (the default) leaves the mode to args: a preview asked there runs."""
    runner_temp = tmp_path / "runner-temp"
    argv = fake_venv(runner_temp, {"errors": []}, 2)
    done = run_action(
        ACTION, {"args": "--local apps --dry-run=server"}, runner_temp, env=PYTHON_FIRST,
        cwd=tmp_path, github=CONTEXT, skip={"install"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(argv.read_text())[-1] == "--dry-run=server"


@pytest.mark.parametrize("first", ["none", "false", "server"])
def test_a_first_word_of_args_is_not_the_action_s_dry_run_mode(
    venv_temp: Path, tmp_path: Path, first: str
) -> None:
    """`args: none ...` after the action's dry run: the real reconcile, `--local` with a
    controller whose parents need writes, refuses the stray word; nothing is applied."""
    shutil.copytree(Path(__file__).parents[2] / "examples" / "gitops", tmp_path / "platform")
    inputs = {"args": f"{first} --local apps --controllers controllers", "dry-run": "true"}
    done = run_action(
        ACTION, inputs, venv_temp, env=PYTHON_FIRST, cwd=tmp_path / "platform",
        github=CONTEXT, skip={"install"},
    )  # fmt: skip
    assert done.outputs["exit-code"] == "1", done.stdout[-2000:] + done.stderr[-2000:]
    assert "Got unexpected extra argument" in done.stderr
    assert not Path(done.outputs["report"]).is_file()


def test_a_refused_combination_never_runs_reconcile_for_real(
    venv_temp: Path,
    tmp_path: Path,
) -> None:
    """The real reconcile, `--local` with a controller whose parents need writes: refused
    before it starts (no report at all); the same step without the contrary flag previews."""
    shutil.copytree(Path(__file__).parents[2] / "examples" / "gitops", tmp_path / "platform")
    inputs = {"args": "--local apps --controllers controllers --dry-run=none", "dry-run": "true"}
    refused = run_action(
        ACTION, inputs, venv_temp, env=PYTHON_FIRST, cwd=tmp_path / "platform",
        github=CONTEXT, skip={"install"},
    )  # fmt: skip
    assert refused.returncode == 1
    assert not list(venv_temp.glob("reconcile-*/report*"))  # reconcile never started
    inputs["args"] = inputs["args"].removesuffix(" --dry-run=none")
    done = run_action(
        ACTION, inputs, venv_temp, env=PYTHON_FIRST, cwd=tmp_path / "platform",
        github=CONTEXT, skip={"install"},
    )  # fmt: skip
    assert done.outputs["exit-code"] == "2", done.stdout[-2000:] + done.stderr[-2000:]
    report = json.loads(Path(done.outputs["report"]).read_text())
    assert report["dryRun"] is True


@pytest.mark.controlplane
@pytest.mark.parametrize("args", ["--dry-run=none", "--dry-run none", "--dry-run=false"])
def test_dry_run_true_writes_nothing_to_a_real_cluster(
    kubeconfig: str,
    hello: str,
    live_backend: Backend,
    venv_temp: Path,
    tmp_path: Path,
    args: str,
) -> None:
    """On the real control plane, with a credential that may write: `dry-run: true` and a
    contrary flag in args is refused, and the API server sees no write."""
    mark = live_backend.mark()
    inputs = {"kubeconfig": kubeconfig, "args": f"{controller_args()} {args}", "dry-run": "true"}
    refused = run_action(
        ACTION, inputs, venv_temp, cwd=tmp_path, github={"token": ""}, skip={"install"}
    )
    assert refused.returncode == 1, refused.stdout[-2000:] + refused.stderr[-2000:]
    assert live_backend.mutations_since(mark) == {}
    assert live_backend.requests_since(mark) == {}  # reconcile never connected


def test_the_comment_s_own_line_keeps_a_hostile_key_inert(fake_temp: Path, tmp_path: Path) -> None:
    """The default key is the workflow's name, which a pull request may change: in the line
    naming the run it pings no one and links nowhere."""
    key = "@acme/admins #1 [x](https://evil.example) <b>\u202e'"
    with serving(FakeGitHub(TOKEN)) as github:
        workspace = tmp_path / "workspace"
        workspace.mkdir()
        done = preview(
            fake_temp, workspace, event_env(tmp_path, github.url), **{"comment-key": key}
        )
        assert done.returncode == 0, done.stdout + done.stderr
        (comment,) = github.on(PR)
    footer = comment.body.rsplit("\n<sub>", 1)[1]
    ours = "[workflow run](https://github.example/acme/platform/actions/runs/4242)"
    assert ours in footer
    assert_inert(footer.replace(ours, "the run"))  # nothing else links
    assert "\\u202e" in footer and "&lt;b&gt;" in footer

"""The pull-request review as its reader sees it: `reconcile diff` run on the GitOps example as
a repository (a `main` and a branch that changes one Greeting and adds another, committed at a
fixed time so the commits are always the same), its Markdown made into the comment by the
GitHub Action's own `compose`, and that comment rendered as GitHub renders CommonMark."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

from docgen.metrics_page import clean_environment

ROOT = Path(__file__).resolve().parents[2]
GITOPS = ROOT / "examples" / "gitops"
BRANCH = "warmer-hello"
ONBOARDING = """---
apiVersion: gitops.example.com/v1
kind: Greeting
metadata:
  name: onboarding
  namespace: greetings
spec:
  message: Glad you are here
"""
# what the review workflow passes (review.yml), and a workflow run of a made-up repository
KEY = "reconcile review/review"
RUN_URL = "https://github.com/acme/platform/actions/runs/123456789"


def _git(repo: Path, *args: str) -> str:
    when = "2026-01-05T09:00:00+00:00"
    env = {
        **clean_environment(),
        "GIT_AUTHOR_NAME": "Platform Team",
        "GIT_AUTHOR_EMAIL": "platform@example.com",
        "GIT_COMMITTER_NAME": "Platform Team",
        "GIT_COMMITTER_EMAIL": "platform@example.com",
        "GIT_AUTHOR_DATE": when,
        "GIT_COMMITTER_DATE": when,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _repository(scratch: Path) -> Path:
    repo = scratch / "platform"
    # the example as a checkout has it: bytecode a run of its hook left would change the
    # commits' ids
    shutil.copytree(GITOPS, repo, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "Greetings")
    _git(repo, "checkout", "-qb", BRANCH)
    greetings = repo / "apps" / "greetings.yaml"
    text = greetings.read_text().replace("Hello from git", "Hello from the platform team")
    greetings.write_text(text + ONBOARDING)
    _git(repo, "commit", "-qam", "A warmer hello, and an onboarding greeting")
    return repo


def _compose() -> Any:
    """The action's `compose` (github-actions/comment.py, a script of the action's, which
    imports its neighbour github_api.py as the step that runs it can)."""
    scripts = str(ROOT / "github-actions")
    if scripts not in sys.path:
        sys.path.insert(0, scripts)
    spec = importlib.util.spec_from_file_location("comment", ROOT / "github-actions" / "comment.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module.compose


def review_markdown() -> str:
    """The comment's Markdown, as the action posts it."""
    with tempfile.TemporaryDirectory() as scratch:
        repo = _repository(Path(scratch))
        done = subprocess.run(
            [sys.executable, "-m", "reconcile", "diff", "--git", repo.as_uri(), "main", BRANCH,
             "--local", "apps", "--controllers", "controllers", "--report-format", "markdown"],
            cwd=scratch, capture_output=True, text=True, check=False, env=clean_environment(),
        )  # fmt: skip
        if done.returncode != 2:
            raise SystemExit(f"reconcile diff exited {done.returncode}:\n{done.stderr}")
        head = _git(repo, "rev-parse", BRANCH)
    comment: str = _compose()(done.stdout, key=KEY, run_url=RUN_URL, head_sha=head)
    return comment


def region() -> str:
    """What the GitOps page holds between its markers: the comment rendered, then its
    Markdown in a collapsed block."""
    markdown = review_markdown()
    rendered = MarkdownIt("commonmark").enable("table").enable("strikethrough").render(markdown)
    source = "\n".join("    " + line if line else "" for line in markdown.rstrip("\n").split("\n"))
    return (
        f'<div class="review-comment">\n{rendered.strip()}\n</div>\n\n'
        f'??? note "The comment\'s Markdown, as posted"\n\n    ````markdown\n{source}\n    ````\n'
    )

"""Revision expressions as refs (`HEAD~1`, `67763d1^`, `origin/main`): resolved by git, against
real repositories made in the test, to the commit a clone of the repository would name; what
could reach git as an option, or names the cache's own history, refused before git runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconcile.gitsource import GitSourceError, checkout
from reconcile.gitsource.checks import check_ref
from reconcile.gitsource.revisions import is_ref_name, spellings
from tests.support.gitrepo import git


def commit(repo: Path, name: str, text: str) -> str:
    (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", f"{name}: {text}")
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def origin(tmp_path: Path) -> tuple[Path, list[str]]:
    """`trunk`: first, second; `feature` (from second): third; tag `v1` (annotated) on first."""
    path = tmp_path / "origin"
    path.mkdir()
    git(path, "init", "-q", "-b", "trunk")
    first = commit(path, "a.yaml", "one")
    git(path, "tag", "-a", "v1", "-m", "release")
    second = commit(path, "a.yaml", "two")
    git(path, "checkout", "-qb", "feature")
    third = commit(path, "a.yaml", "three")
    git(path, "checkout", "-q", "trunk")
    return path, [first, second, third]


@pytest.mark.parametrize(
    ("ref", "index"),
    [
        ("HEAD~1", 0),
        ("HEAD^", 0),
        ("HEAD", 1),
        ("trunk~1", 0),
        ("feature^", 1),
        ("feature~2", 0),
        ("v1^{commit}", 0),
        ("v1~0", 0),
        ("refs/heads/feature^0", 2),
        ("origin/feature", 2),  # the repository given is the origin: its own branch
        ("origin/trunk~1", 0),
    ],
)
def test_an_expression_is_the_commit_git_names(
    origin: tuple[Path, list[str]], tmp_path: Path, ref: str, index: int
) -> None:
    path, commits = origin
    found = checkout(path.as_uri(), ref, tmp_path / "cache")
    assert (found.ref, found.commit) == (ref, commits[index])
    assert (found.path / "a.yaml").read_text() == ["one", "two", "three"][index]


def test_an_abbreviated_commit_with_a_suffix(
    origin: tuple[Path, list[str]], tmp_path: Path
) -> None:
    path, commits = origin
    assert checkout(str(path), f"{commits[2][:7]}^", tmp_path / "cache").commit == commits[1]
    assert checkout(str(path), f"{commits[2][:7]}~2", tmp_path / "cache").commit == commits[0]


def test_in_a_clone_origin_names_its_remote_tracking_refs(
    origin: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """The workspace of a CI job: a clone whose `origin/feature` is a remote-tracking ref (no
    local branch of that name), and whose HEAD is detached, as a pull request's checkout is."""
    path, commits = origin
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(path), str(clone))
    git(clone, "checkout", "-q", "--detach", commits[2])
    newer = commit(path, "a.yaml", "four")  # the origin moves on; the clone has not fetched
    cache = tmp_path / "cache"
    assert checkout(clone.as_uri(), "origin/feature", cache).commit == commits[2]
    assert checkout(clone.as_uri(), "origin/trunk", cache).commit == commits[1]
    assert checkout(clone.as_uri(), "HEAD~1", cache).commit == commits[1]
    assert checkout(clone.as_uri(), "HEAD", cache).commit == commits[2]
    assert checkout(path.as_uri(), "origin/trunk", tmp_path / "other").commit == newer


def test_a_shallow_cache_is_deepened_and_a_deleted_branch_forgotten(
    origin: tuple[Path, list[str]], tmp_path: Path
) -> None:
    path, commits = origin
    cache = tmp_path / "cache"
    assert checkout(str(path), "feature", cache).commit == commits[2]  # fetched --depth=1
    assert checkout(str(path), "feature~2", cache).commit == commits[0]
    git(path, "branch", "-qD", "feature")
    with pytest.raises(GitSourceError, match=r"has no commit 'feature~2'"):
        checkout(str(path), "feature~2", cache)


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("HEAD~9", r"has no commit 'HEAD~9' \(as git rev-parse reads it\)"),
        ("HEAD:a.yaml", r"'HEAD:a.yaml' in .* is not a commit"),
        ("no-such/branch", r"has no branch, tag or ref named 'no-such/branch'"),
        ("HEAD^{tree}", r"is not a commit"),
    ],
)
def test_what_names_no_commit_is_a_clear_error(
    origin: tuple[Path, list[str]], tmp_path: Path, ref: str, message: str
) -> None:
    with pytest.raises(GitSourceError, match=message):
        checkout(str(origin[0]), ref, tmp_path / "cache")


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("-uevil", "cannot start with '-'"),
        ("--output=/tmp/x", "cannot start with '-'"),
        ("--end-of-options", "cannot start with '-'"),
        ("HEAD\n--upload-pack=x", "control character"),
        ("trunk..feature", r"is a range \(\.\.\), not one commit"),
        ("HEAD@{1}", "reflog entry"),
        ("@{-1}", "reflog entry"),
        ("", "is empty"),
        ("FETCH_HEAD", "names FETCH_HEAD: the state of the local cache"),
        ("FETCH_HEAD~1", "names FETCH_HEAD: the state of the local cache"),
        ("ORIG_HEAD^{commit}", "names ORIG_HEAD"),
        ("MERGE_HEAD", "names MERGE_HEAD"),
        ("AUTO_MERGE", "names AUTO_MERGE"),
        ("refs/reconcile/remote-head", "names refs/reconcile/remote-head"),
        ("reconcile/remote-head~2", "names reconcile/remote-head"),
    ],
)
def test_refused_before_git_runs(ref: str, message: str) -> None:
    with pytest.raises(GitSourceError, match=f"^--git-ref .*{message}"):
        check_ref(ref)


@pytest.mark.parametrize("ref", ["HEAD", "FETCH_HEADS", "feature/FETCH_HEAD", "reconcile/x"])
def test_names_like_the_cache_s_own_are_still_revisions(ref: str) -> None:
    check_ref(ref)  # a branch may be called so: only the cache's own names are refused


def test_an_option_never_reaches_git(origin: tuple[Path, list[str]], tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    with pytest.raises(GitSourceError, match="cannot start with '-'"):
        checkout(str(origin[0]), f"--upload-pack=touch {marker}", tmp_path / "cache")
    assert not marker.exists()
    assert not (tmp_path / "cache").exists()  # refused before git (and the cache) were used


@pytest.mark.parametrize(
    ("ref", "name"),
    [("main", True), ("refs/tags/v1", True), ("origin/main", True), ("HEAD~1", False)],
)
def test_ref_names_and_expressions(ref: str, name: bool) -> None:
    assert is_ref_name(ref) is name


def test_origin_is_also_the_repository_itself() -> None:
    assert spellings("origin/main~1") == ("origin/main~1", "main~1")
    assert spellings("main") == ("main",)
    assert spellings("origin/") == ("origin/",)

"""The git source against real repositories made in the test: refs resolved once to a commit,
a cache that later runs fetch into, clear errors, and credentials that never show."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from reconcile.gitsource import GitSourceError, checkout
from reconcile.gitsource.credentials import remote
from reconcile.secret_values import scrub
from tests.support.gitrepo import git


def commit(repo: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "trunk")
    files = {
        f"apps/app{i}.yaml": f"kind: ConfigMap\nmetadata: {{name: app{i}}}\n" for i in range(40)
    }
    commit(path, files, "first apps")
    git(path, "tag", "v1")
    git(path, "tag", "-a", "v1-annotated", "-m", "release")
    return path


def objects_in(cache: Path) -> int:
    (store,) = cache.glob("*/repo.git")
    counts = dict(line.split(": ") for line in git(store, "count-objects", "-v").splitlines())
    return int(counts["count"]) + int(counts["in-pack"])


def test_the_default_branch_a_branch_tags_and_commits(repo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = git(repo, "rev-parse", "HEAD")
    second = commit(repo, {"apps/app0.yaml": "changed\n"}, "change app0")
    default = checkout(f"file://{repo}", None, cache)
    assert (default.ref, default.commit, default.subject) == ("trunk", second, "change app0")
    assert (default.path / "apps" / "app0.yaml").read_text() == "changed\n"
    for ref in ("v1", "v1-annotated", first, first[:10], "refs/tags/v1"):
        old = checkout(str(repo), ref, cache)
        assert (old.commit, old.subject) == (first, "first apps"), ref
        assert (old.path / "apps" / "app0.yaml").read_text().startswith("kind: ConfigMap")
    assert checkout(str(repo), "trunk", cache).commit == second


def test_a_later_run_fetches_only_the_new_commit(repo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    checkout(str(repo), "trunk", cache)
    before = objects_in(cache)
    assert before >= 40  # every file of the first commit
    new = commit(repo, {"apps/app1.yaml": "changed\n"}, "change app1")
    again = checkout(str(repo), "trunk", cache)
    assert again.commit == new
    assert objects_in(cache) - before <= 4  # the commit, two trees and one blob


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("no-such-branch", "has no branch, tag or ref named 'no-such-branch'"),
        ("deadbeefdeadbeefdeadbeefdeadbeefdeadbeef", "has no commit deadbeef"),
    ],
)
def test_an_unknown_ref_is_a_clear_error(
    repo: Path, tmp_path: Path, ref: str, message: str
) -> None:
    with pytest.raises(GitSourceError, match=message):
        checkout(str(repo), ref, tmp_path / "cache")


def test_an_unreachable_repository_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(GitSourceError, match=r"^git: cannot read file://.*/missing: "):
        checkout(f"file://{tmp_path}/missing", None, tmp_path / "cache")


def test_a_token_in_the_url_never_shows(tmp_path: Path) -> None:
    token = "ghp_notarealtoken1234567890"
    url = f"https://builder:{token}@127.0.0.1:9/team/repo.git"
    with pytest.raises(GitSourceError) as failed:
        checkout(url, None, tmp_path / "cache")
    assert token not in str(failed.value)
    assert "https://127.0.0.1:9/team/repo.git" in str(failed.value)
    # anything else that quotes it is scrubbed on its way out, in every encoding
    assert token not in scrub(f"fatal: auth failed for {url}")
    where = remote(url, environ={})
    assert where.url == "https://127.0.0.1:9/team/repo.git"
    assert token not in where.url and "GIT_CONFIG_VALUE_0" in where.env


def test_a_token_from_a_file_goes_to_git_through_the_environment(tmp_path: Path) -> None:
    secret_file = tmp_path / "token"
    secret_file.write_text("file-token-abcdef\n")
    where = remote(
        "https://git.example.com/repo.git", environ={"RECONCILE_GIT_TOKEN_FILE": str(secret_file)}
    )
    assert where.env["GIT_CONFIG_KEY_0"] == "http.extraHeader"
    assert where.env["GIT_CONFIG_VALUE_0"].startswith("Authorization: Basic ")
    assert "file-token-abcdef" not in scrub("token file-token-abcdef used")
    ssh = remote(
        "git@github.com:team/repo.git",
        environ={"RECONCILE_GIT_SSH_KEY_FILE": "/keys/id", "RECONCILE_GIT_KNOWN_HOSTS": "/kh"},
    )
    assert "StrictHostKeyChecking=yes" in ssh.env["GIT_SSH_COMMAND"]
    assert "UserKnownHostsFile=/kh" in ssh.env["GIT_SSH_COMMAND"]


def test_a_corrupt_cache_is_cloned_again(repo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    checkout(str(repo), "trunk", cache)
    (store,) = cache.glob("*/repo.git")
    (store / "HEAD").write_text("garbage\n")
    for pack in (store / "objects").rglob("*"):
        if pack.is_file():
            pack.chmod(0o644)
            pack.write_bytes(b"corrupt")
    new = commit(repo, {"apps/app2.yaml": "changed\n"}, "change app2")
    again = checkout(str(repo), "trunk", cache)
    assert again.commit == new
    assert (again.path / "apps" / "app2.yaml").read_text() == "changed\n"


def test_a_corrupt_object_in_the_cache_is_mended_by_cloning_again(
    repo: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    first = checkout(str(repo), "trunk", cache)
    (store,) = cache.glob("*/repo.git")
    blob = git(repo, "rev-parse", "HEAD:apps/app7.yaml")
    loose = store / "objects" / blob[:2] / blob[2:]
    assert loose.is_file()  # the first fetch left its few objects loose
    loose.chmod(0o644)
    loose.write_bytes(b"corrupt")
    again = checkout(str(repo), "trunk", cache)
    assert first.commit == again.commit == git(repo, "rev-parse", "HEAD")
    assert (again.path / "apps" / "app7.yaml").read_text() == (
        repo / "apps" / "app7.yaml"
    ).read_text()


@pytest.mark.parametrize("password", ["pa/ss-SECRET1", "pa?ss-SECRET2", "pa#ss-SECRET3"])
def test_a_password_with_an_unencoded_separator_is_refused_unshown(password: str) -> None:
    from reconcile.gitsource.credentials import CredentialError

    with pytest.raises(CredentialError, match="percent-encode") as raised:
        remote(f"https://alice:{password}@git.example.com/r.git", {})
    assert "SECRET" not in str(raised.value)
    assert "SECRET" not in scrub(f"fatal: https://alice:{password}@git.example.com")


def test_a_credential_is_never_carried_to_a_redirect() -> None:
    env = remote("https://git.example.com/r.git", {"RECONCILE_GIT_TOKEN": "ghp_x"}).env
    settings = {
        env[f"GIT_CONFIG_KEY_{i}"]: env[f"GIT_CONFIG_VALUE_{i}"]
        for i in range(int(env["GIT_CONFIG_COUNT"]))
    }
    assert settings["http.followRedirects"] == "false"
    assert settings["http.extraHeader"].startswith("Authorization: Basic ")
    assert "GIT_CONFIG_COUNT" not in remote("https://git.example.com/r.git", {}).env


def _one_file_repo(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "repo"
    (repo / "apps").mkdir(parents=True)
    (repo / "apps" / "app.yaml").write_text("name: app\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "x")
    return repo, git(repo, "hash-object", "apps/app.yaml")


def _lose(where: Path, blob: str) -> None:
    for stored in where.rglob(f"objects/{blob[:2]}/{blob[2:]}"):
        stored.unlink()


def test_a_cache_that_lost_an_object_is_cloned_again(tmp_path: Path) -> None:
    repo, blob = _one_file_repo(tmp_path)
    cache = tmp_path / "cache"
    checkout(repo.as_uri(), None, cache)
    _lose(cache, blob)
    again = checkout(repo.as_uri(), None, cache)
    assert (again.path / "apps" / "app.yaml").read_text() == "name: app\n"


def test_a_checkout_that_fails_leaves_no_tree_behind(tmp_path: Path) -> None:
    repo, blob = _one_file_repo(tmp_path)
    cache = tmp_path / "cache"
    checkout(repo.as_uri(), None, cache)
    runs = next(iter(cache.rglob("runs")))
    before = sorted(runs.iterdir())
    _lose(cache, blob)
    _lose(repo, blob)  # the repository too: cloning again cannot mend it
    with pytest.raises(GitSourceError, match="cannot"):
        checkout(repo.as_uri(), None, cache)
    assert sorted(runs.iterdir()) == before


def test_a_file_larger_than_a_run_reads_is_not_written(tmp_path: Path) -> None:
    repo, _ = _one_file_repo(tmp_path)
    with (repo / "apps" / "zeros.bin").open("wb") as out:  # compressed, it is ~65 KiB
        out.truncate(65 * 2**20)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "y"],
        check=True,
    )
    done = checkout(repo.as_uri(), None, tmp_path / "cache")
    assert done.unreadable == {"apps/zeros.bin": f"larger than 64 MiB ({65 * 2**20} bytes)"}
    assert not (done.path / "apps" / "zeros.bin").exists()
    assert (done.path / "apps" / "app.yaml").read_text() == "name: app\n"

"""A repository at a ref, resolved once to a commit and checked out from a local cache.

The cache (`--git-cache`, default `~/.cache/reconcile/git`) keeps one bare repository per URL.
A run asks the remote what the ref points at (`git ls-remote`), fetches that one commit with
`--depth=1` unless the cache has it already (git sends only the objects the cache lacks), and
extracts its tree into `trees/<sha>` (kept for the next runs; the oldest are removed). A cache
that git cannot use is removed and cloned again, once.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tarfile
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import git

from reconcile.gitsource.credentials import CredentialError, Remote, remote
from reconcile.secret_values import scrub

TREES_KEPT = 3
_HEX = re.compile(r"^[0-9a-f]{4,40}$")
# what git says when the remote does not have the commit asked for
_MISSING = re.compile(r"not our ref|couldn't find remote ref|no such remote ref|unadvertised")


class GitSourceError(Exception):
    """The repository cannot be read as asked; the message names the URL (never credentials)
    and says why."""


@dataclass(frozen=True)
class Checkout:
    path: Path  # the commit's files
    url: str  # without credentials
    ref: str  # the ref asked for, or the remote's default branch
    commit: str  # the full SHA
    subject: str  # the commit's first line


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "reconcile" / "git"


def checkout(
    url: str,
    ref: str | None = None,
    cache_dir: Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    timeout: float = 300.0,
) -> Checkout:
    """Resolve `ref` (default: the remote's default branch) to a commit and check it out."""
    try:
        where = remote(url, environ)
    except CredentialError as exc:
        raise GitSourceError(str(exc)) from exc
    repo = _CachedRepo(where, (cache_dir or default_cache_dir()), timeout)
    ref_name, wanted = repo.resolve(ref)
    commit = repo.fetch(wanted)
    subject = repo.git("log", "-1", "--format=%s", commit).strip()
    return Checkout(repo.tree(commit), where.display, ref_name, commit, subject)


class _CachedRepo:
    def __init__(self, where: Remote, cache_dir: Path, timeout: float) -> None:
        self.remote = where
        self.timeout = timeout
        digest = hashlib.sha256(where.url.encode()).hexdigest()[:16]
        self.root = cache_dir / digest
        self.git_dir = self.root / "repo.git"
        self._ensure()

    def _ensure(self, *, fresh: bool = False) -> None:
        if fresh and self.root.exists():
            shutil.rmtree(self.root)
        if self.git_dir.is_dir() and self._usable():
            return
        if self.root.exists():
            shutil.rmtree(self.root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._run(["init", "--quiet", "--bare", str(self.git_dir)], cwd=self.root)

    def _usable(self) -> bool:
        try:
            self.git("rev-parse", "--git-dir")
            return True
        except GitSourceError:
            return False

    def git(self, *args: str) -> str:
        return self._run(["--git-dir", str(self.git_dir), *args], cwd=self.root)

    def _run(self, args: list[str], cwd: Path) -> str:
        command = git.Git(str(cwd))
        env = dict(self.remote.env)
        try:
            output: str = command.execute(
                ["git", *args],
                env=env,
                kill_after_timeout=self.timeout,
                with_extended_output=False,
                strip_newline_in_stdout=False,
            )
        except git.GitCommandError as exc:
            raise GitSourceError(_why(exc)) from None
        except git.GitCommandNotFound as exc:
            raise GitSourceError(f"git is not installed: {exc}") from None
        return output

    def resolve(self, ref: str | None) -> tuple[str, str]:
        """(the ref's name, its commit SHA), asking the remote once."""
        url = self.remote.url
        try:
            if ref is None:
                listed = self.git("ls-remote", "--symref", url, "HEAD")
                match = re.search(r"^ref: refs/heads/(\S+)\tHEAD$", listed, re.M)
                sha = re.search(r"^([0-9a-f]{40})\tHEAD$", listed, re.M)
                if sha is None:
                    raise GitSourceError(f"git: {url} has no default branch (an empty repository?)")
                return (match.group(1) if match else "HEAD"), sha.group(1)
            listed = self.git("ls-remote", url)
        except GitSourceError as exc:
            raise GitSourceError(f"git: cannot read {url}: {exc}") from None
        refs = dict(
            (name, sha)
            for sha, name in (line.split("\t", 1) for line in listed.splitlines() if "\t" in line)
        )
        for name in (
            f"refs/tags/{ref}^{{}}",
            f"refs/tags/{ref}",
            f"refs/heads/{ref}",
            ref,
            f"{ref}^{{}}",
        ):
            if name in refs and name.startswith("refs/"):
                return ref, refs[name]
        if _HEX.match(ref):
            return ref, ref  # a commit: checked when it is fetched
        raise GitSourceError(f"git: {url} has no branch, tag or ref named {ref!r}")

    def fetch(self, commit: str) -> str:
        """Make `commit` available in the cache, fetching only what the cache lacks; returns its
        full SHA."""
        if not self._has(commit):
            try:
                self._fetch(commit)
            except GitSourceError as exc:
                if _MISSING.search(str(exc)):
                    raise GitSourceError(f"git: {self.remote.url} has no commit {commit}") from None
                # the remote answered ls-remote: a cache git cannot use is cloned again, once
                self._ensure(fresh=True)
                try:
                    self._fetch(commit)
                except GitSourceError as again:
                    raise GitSourceError(
                        f"git: cannot fetch {commit} from {self.remote.url}: {again}"
                    ) from None
            if not self._has(commit):
                raise GitSourceError(f"git: {self.remote.url} has no commit {commit}")
        return self.git("rev-parse", "--verify", f"{commit}^{{commit}}").strip()

    def _fetch(self, commit: str) -> None:
        if len(commit) == 40:
            self.git("fetch", "--quiet", "--depth=1", "--no-tags", self.remote.url, commit)
            return
        # an abbreviated SHA: only a full fetch can find it
        self.git(
            "fetch",
            "--quiet",
            "--no-tags",
            self.remote.url,
            "+refs/heads/*:refs/remotes/origin/*",
            "+refs/tags/*:refs/tags/*",
        )

    def _has(self, commit: str) -> bool:
        try:
            self.git("cat-file", "-e", f"{commit}^{{commit}}")
            return True
        except GitSourceError:
            return False

    def tree(self, commit: str) -> Path:
        """The commit's files, extracted once into `trees/<sha>`."""
        full = self.git("rev-parse", "--verify", f"{commit}^{{commit}}").strip()
        trees = self.root / "trees"
        target = trees / full
        if target.is_dir():
            return target
        trees.mkdir(exist_ok=True)
        with tempfile.TemporaryDirectory(dir=trees) as work:
            archive = Path(work) / "tree.tar"
            self.git("archive", "--format=tar", f"--output={archive}", full)
            extracted = Path(work) / "tree"
            with tarfile.open(archive) as tar:
                tar.extractall(extracted, filter="data")  # no links or paths out of the tree
            extracted.rename(target)
        self._forget_old_trees(trees, keep=target)
        return target

    @staticmethod
    def _forget_old_trees(trees: Path, keep: Path) -> None:
        others = sorted(
            (
                p
                for p in trees.iterdir()
                if p.is_dir() and p != keep and not p.name.startswith("tmp")
            ),
            key=lambda p: p.stat().st_mtime,
            reverse=True,
        )
        for old in others[TREES_KEPT - 1 :]:
            shutil.rmtree(old, ignore_errors=True)


def _why(exc: git.GitCommandError) -> str:
    """git's own reason (its last `fatal:`/`error:` line), credentials scrubbed."""
    stderr = exc.stderr if isinstance(exc.stderr, str) else str(exc.stderr or "")
    lines = [line.strip() for line in stderr.strip().strip("'").splitlines() if line.strip()]
    lines = [line.removeprefix("stderr: ").strip("'").strip() for line in lines]
    reasons = [line for line in lines if line.startswith(("fatal:", "error:"))] or lines[-1:]
    reason = reasons[-1] if reasons else f"git exited with {exc.status}"
    return scrub(reason)

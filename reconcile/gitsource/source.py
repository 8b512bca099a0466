"""A repository at a ref, resolved once to a commit and read from a local cache, through
GitPython.

The cache (`--git-cache`, default `~/.cache/reconcile/git`) keeps one bare repository per URL.
A run asks the remote what the ref points at (`git ls-remote`), fetches that one commit with
`--depth=1` unless the cache has it already (git sends only the objects the cache lacks), and
writes the commit's tree, as committed, into a directory of the run's own (removed when the run
ends): see `tree`. A revision expression (`HEAD~1`, `origin/main`: see `revisions`) is resolved
by git in the cache, to a commit id, after fetching the remote's refs. A cache that git cannot
use is removed and cloned again, once.

What reaches git is checked first: a URL or ref that could be read as an option, a transport
that runs commands (`ext::`), control characters (`checks`); GitPython's own refusals of unsafe
protocols and options stay on (ls-remote and fetch check their arguments; no `allow_unsafe_*`
is ever passed), and every value follows `--end-of-options` (or fetch's `--`). git runs with an
environment of our own (inherited `GIT_*` variables dropped), only the protocols a URL may name
allowed (`ext::` never), no hooks, and within the run's budget: its timeout, SIGINT / SIGTERM or
the budget's end kill it with its process group (`processes`, and `gitpython` for how GitPython
is kept from reading the environment). Runs sharing a cache take turns on each repository (a
lock file beside it), and a run never removes a cache another run is using.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import field
from pathlib import Path
from typing import Any

from reconcile.budget import Budget
from reconcile.gitsource.checks import check_ref, check_url
from reconcile.gitsource.credentials import CredentialError, Remote, remote
from reconcile.gitsource.errors import GitSourceError
from reconcile.gitsource.gitpython import GitFailed, git, repository
from reconcile.gitsource.processes import ProcessGuard, environment
from reconcile.gitsource.revisions import HEX, MIRROR, REMOTE_HEAD, rev_parse
from reconcile.gitsource.tree import write_tree
from reconcile.records import dataclass
from reconcile.secret_values import scrub

# what git says when the remote does not have the commit asked for
_MISSING = re.compile(r"not our ref|couldn't find remote ref|no such remote ref|unadvertised")
LOCK_WAIT = 120.0  # the longest a run waits for another using the same repository


@dataclass(frozen=True)
class Checkout:
    path: Path  # the commit's files, in a directory of this run's own
    url: str  # without credentials
    ref: str  # the ref asked for, or the remote's default branch
    commit: str  # the full SHA
    subject: str  # the commit's subject (its first paragraph, on one line, as git log's %s)
    # paths (relative to the root) that are not written: links out of the tree, submodules
    unreadable: dict[str, str] = field(default_factory=dict)

    def cleanup(self) -> None:
        shutil.rmtree(self.path.parent, ignore_errors=True)


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
    budget: Budget | None = None,
) -> Checkout:
    """Resolve `ref` (default: the remote's default branch) to a commit and write its tree."""
    check_url(url)
    if ref is not None:
        check_ref(ref)
    try:
        where = remote(url, environ)
    except CredentialError as exc:
        raise GitSourceError(str(exc)) from exc
    cache = cache_dir or default_cache_dir()
    repo = _CachedRepo(where, cache, timeout, budget or Budget())
    try:
        with repo.locked():
            try:
                repo.ensure()
                ref_name, wanted = repo.resolve(ref)
                commit = repo.fetch(wanted)
                with repo.errors():
                    sha, subject = commit.hexsha, _subject(commit.message)
                try:
                    path, unreadable = repo.tree(commit)
                except CacheObjectsError:
                    if repo.budget.expired:
                        raise
                    # an object the cache lost or holds corrupt: the cache is cloned again, once
                    repo.ensure(fresh=True)
                    commit = repo.fetch(wanted)
                    path, unreadable = repo.tree(commit)
            finally:
                repo.close()  # its cat-file processes too, before the next run may use it
    except OSError as exc:  # the cache: not a directory, not writable, full
        named = f" ({exc.filename})" if exc.filename else ""
        raise GitSourceError(
            f"git: the cache {cache} cannot be used{named}: {exc.strerror or exc}"
        ) from None
    return Checkout(path, where.display, ref_name, sha, subject, unreadable)


class CacheObjectsError(GitSourceError):
    """An object of the cache's repository that git cannot give (missing or corrupt)."""


class _CachedRepo:
    def __init__(self, where: Remote, cache_dir: Path, timeout: float, budget: Budget) -> None:
        self.remote = where
        self.budget = budget
        digest = hashlib.sha256(where.url.encode()).hexdigest()[:16]
        self.cache_dir = cache_dir
        self.root = cache_dir / digest
        self.lock_file = cache_dir / f"{digest}.lock"  # beside the root: never removed with it
        self.git_dir = self.root / "repo.git"
        self.guard = ProcessGuard(environment(str(self.git_dir), where.env), timeout, budget)
        self._repo: git.Repo | None = None

    @property
    def repo(self) -> git.Repo:
        assert self._repo is not None, "ensure() first"
        return self._repo

    def close(self) -> None:
        self._forget()
        self.guard.close()

    def _forget(self) -> None:
        if self._repo is not None:
            self._repo.close()
            self._repo = None

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """This repository's cache to this run alone, waiting (bounded) for another run."""
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + min(LOCK_WAIT, self.budget.remaining())
        with self.lock_file.open("a") as handle:
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline or self.budget.expired:
                        raise GitSourceError(
                            f"git: the cache of {self.remote.url} is in use by another run "
                            f"({self.lock_file})"
                        ) from None
                    self.budget.sleep(0.1)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def ensure(self, *, fresh: bool = False) -> None:
        """A usable bare repository (under the lock: no other run is reading it)."""
        self._forget()
        if fresh and self.root.exists():
            shutil.rmtree(self.root)
        if self.git_dir.is_dir() and self._usable():
            return
        if self.root.exists():
            shutil.rmtree(self.root)
        self.root.mkdir(parents=True, exist_ok=True)
        with self.errors():
            self._repo = repository(self.git_dir, self.guard, create=True)

    def _usable(self) -> bool:
        """Whether GitPython opens the cache's repository, and git reads it."""
        try:
            self._repo = repository(self.git_dir, self.guard)  # reads files, runs no git
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            return False
        try:
            self.command("rev-parse", "--git-dir")
            return True
        except GitSourceError:
            self._forget()
            return False

    @contextlib.contextmanager
    def errors(self) -> Iterator[None]:
        """GitPython's failures as GitSourceError: a process the guard killed says why it was
        killed, a git command git's own reason; GitPython's refusals say what they refuse."""
        since = self.guard.stops
        try:
            yield
        except GitSourceError:
            raise
        except (git.UnsafeProtocolError, git.UnsafeOptionError) as exc:
            raise GitSourceError(f"git: refused: {scrub(str(exc))}") from None
        except Exception as exc:
            stopped = self.guard.why_stopped(since)
            if stopped is not None:
                raise GitSourceError(f"git: {stopped}") from None
            if isinstance(exc, git.GitCommandError):
                raise GitSourceError(_why(_stderr(exc), exc.status)) from None
            if isinstance(exc, git.GitError | git.exc.ODBError | ValueError):
                # an object cat-file could not give (a corrupt or missing one in the cache)
                reason = scrub(" ".join(re.sub(r"b'([^']*)'", r"\1", str(exc)).split()))
                raise CacheObjectsError(f"git: cannot read the cache's objects: {reason}") from None
            raise

    def command(self, name: str, *args: str) -> str:
        """`git NAME ARGS...` through GitPython (its methods for commands that have one,
        ls-remote's refusals among them); its standard output."""
        with self.errors():
            output: str = getattr(self.repo.git, name.replace("-", "_"))(*args)
            return output

    def resolve(self, ref: str | None) -> tuple[str, str]:
        """(the ref's name, its commit SHA), asking the remote once."""
        url = self.remote.url
        try:
            if ref is None:
                listed = self.command("ls-remote", "--symref", "--end-of-options", url, "HEAD")
                match = re.search(r"^ref: refs/heads/(\S+)\tHEAD$", listed, re.M)
                sha = re.search(r"^([0-9a-f]{40})\tHEAD$", listed, re.M)
                if sha is None:
                    raise GitSourceError(f"git: {url} has no default branch (an empty repository?)")
                return (match.group(1) if match else "HEAD"), sha.group(1)
            listed = self.command("ls-remote", "--end-of-options", url)
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
        if HEX.match(ref):
            return ref, ref  # a commit: checked when it is fetched
        return ref, self.revision(ref, refs.get("HEAD"))

    def revision(self, ref: str, head: str | None) -> str:
        """The commit an expression (or a name ls-remote does not list: `HEAD`, `origin/main`)
        names, resolved by git in the cache once it has every branch, tag and remote-tracking
        ref of the remote, and its HEAD (`head`) as the cache's."""
        try:
            self._fetch_all(*([f"+HEAD:{REMOTE_HEAD}"] if head else []))
        except GitSourceError as exc:
            raise GitSourceError(f"git: cannot fetch from {self.remote.url}: {exc}") from None
        if head:
            self.command("update-ref", "--no-deref", "HEAD", head)
        return rev_parse(self.command, self.remote.url, ref)

    def fetch(self, commit: str) -> git.Commit:
        """Make `commit` available in the cache, fetching only what the cache lacks."""
        if not self._has(commit):
            try:
                self._fetch(commit)
            except GitSourceError as exc:
                if _MISSING.search(str(exc)):
                    raise GitSourceError(f"git: {self.remote.url} has no commit {commit}") from None
                if self.budget.expired:
                    raise
                # the remote answered ls-remote: a cache git cannot use is cloned again, once
                self.ensure(fresh=True)
                try:
                    self._fetch(commit)
                except GitSourceError as again:
                    raise GitSourceError(
                        f"git: cannot fetch {commit} from {self.remote.url}: {again}"
                    ) from None
            if not self._has(commit):
                raise GitSourceError(f"git: {self.remote.url} has no commit {commit}")
        full = self.command("rev-parse", "--verify", "--end-of-options", f"{commit}^{{commit}}")
        with self.errors():
            return self.repo.commit(full.strip())

    def _fetch(self, commit: str) -> None:
        if len(commit) == 40:
            self._remote_fetch([commit], depth=1, no_tags=True)
            return
        self._fetch_all()  # an abbreviated SHA: only a full fetch can find it

    def _fetch_all(self, *extra: str) -> None:
        """The remote's refs (MIRROR) and `extra` refspecs, with the whole history."""
        shallow = self.command("rev-parse", "--is-shallow-repository").strip() == "true"
        self._remote_fetch([*MIRROR, *extra], no_tags=True, prune=True, unshallow=shallow)

    def _remote_fetch(self, refspecs: list[str], **options: Any) -> None:
        """GitPython's fetch (its refusals on; the refspecs after `--`) from the remote named
        by its URL, as git fetch takes one: the cache configures no remote, whose fetch refspecs
        would also update remote-tracking refs of their own."""
        with self.errors():
            git.Remote(self.repo, self.remote.url).fetch(refspecs, **options)

    def _has(self, commit: str) -> bool:
        try:
            self.command("cat-file", "-e", f"{commit}^{{commit}}")
            return True
        except GitSourceError:
            return False

    def tree(self, commit: git.Commit) -> tuple[Path, dict[str, str]]:
        """The commit's files as committed, in a new directory of this run's own (under the
        cache, so on its file system); and the paths not written, with why."""
        work = self.cache_dir / "runs"
        work.mkdir(exist_ok=True)
        _forget_abandoned(work)
        own = Path(tempfile.mkdtemp(prefix=f"{commit.hexsha[:12]}-", dir=work))
        target = own / "tree"
        try:
            target.mkdir()
            since = self.guard.stops
            with self.errors():
                unreadable = write_tree(commit, target, self._check_budget)
            stopped = self.guard.why_stopped(since)
            if stopped is not None:  # a cat-file process killed mid-read leaves a blob short
                raise GitSourceError(f"git: {stopped}")
        except BaseException:
            # a tree left half-written (the budget's end, a signal, a refused entry) is no
            # run's: it goes now, not a day later
            shutil.rmtree(own, ignore_errors=True)
            raise
        return target, unreadable

    def _check_budget(self) -> None:
        if self.budget.expired:
            raise GitSourceError(f"git: stopped, {self.budget.why()}")


ABANDONED_AFTER = 24 * 3600.0  # a run's tree still there a day later: its run was killed


def _forget_abandoned(work: Path) -> None:
    """Trees of runs that were killed before they could remove theirs."""
    now = time.time()
    for old in work.iterdir():
        with contextlib.suppress(OSError):
            if now - old.stat().st_mtime > ABANDONED_AFTER:
                shutil.rmtree(old, ignore_errors=True)


def _subject(message: str | bytes) -> str:
    """A commit's subject as `git log --format=%s` gives it: its first paragraph (past any
    blank lines) on one line. (GitPython leaves a message its encoding cannot read as bytes.)"""
    if isinstance(message, bytes):
        message = message.decode("utf-8", errors="replace")
    lines = iter(message.splitlines())
    subject: list[str] = []
    for line in lines:
        if line.strip() or subject:
            if not line.strip():
                break
            subject.append(line.rstrip())
    return " ".join(subject)


def _stderr(error: git.GitCommandError) -> str:
    """What git wrote on its standard error (GitPython keeps it formatted for its message)."""
    if isinstance(error, GitFailed):
        return error.reason
    return str(error.stderr).removeprefix("\n  stderr: '").removesuffix("'")


def _why(stderr: str, status: object) -> str:
    """git's own reason (its last `fatal:`/`error:` line), credentials scrubbed."""
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    reasons = [line for line in lines if line.startswith(("fatal:", "error:"))] or lines[-1:]
    reason = reasons[-1] if reasons else f"git exited with {status}"
    return scrub(reason)

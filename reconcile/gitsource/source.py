"""A repository at a ref, resolved once to a commit and read from a local cache.

The cache (`--git-cache`, default `~/.cache/reconcile/git`) keeps one bare repository per URL.
A run asks the remote what the ref points at (`git ls-remote`), fetches that one commit with
`--depth=1` unless the cache has it already (git sends only the objects the cache lacks), and
writes the commit's tree, as committed, into a directory of the run's own (removed when the run
ends). A revision expression (`HEAD~1`, `origin/main`: see `revisions`) is resolved by git in
the cache, to a commit id, after fetching the remote's refs. A cache that git cannot use is
removed and cloned again, once.

What reaches git is checked first: a URL or ref that could be read as an option, a transport
that runs commands (`ext::`), control characters. git runs with an environment of our own
(inherited `GIT_*` variables dropped), only the protocols a URL may name allowed (`ext::`
never), and within the run's budget:
SIGINT / SIGTERM or the budget's end kill it. Runs sharing a cache take turns on each repository
(a lock file beside it), and a run never removes a cache another run is using.

The tree is read with `git ls-tree` and `git cat-file`, not `git archive`: `.gitattributes`
(`export-ignore`, `export-subst`, filters) cannot hide or rewrite a committed file. A symbolic
link that points out of the tree is not written, nor is a submodule (its commit is not fetched);
both are listed so that a run reading such a path fails naming it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from reconcile.budget import Budget
from reconcile.gitsource.checks import check_ref, check_url
from reconcile.gitsource.credentials import CredentialError, Remote, remote
from reconcile.gitsource.errors import GitSourceError
from reconcile.gitsource.revisions import HEX, MIRROR, REMOTE_HEAD, rev_parse
from reconcile.secret_values import scrub

# what git says when the remote does not have the commit asked for
_MISSING = re.compile(r"not our ref|couldn't find remote ref|no such remote ref|unadvertised")
_PROTOCOLS = ("http", "https", "ssh", "git", "file")  # git's names for what SCHEMES reach
# Inherited variables that would point git elsewhere or run something: never passed on.
_KEPT_GIT_VARIABLES = frozenset({"GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "GIT_SSL_NO_VERIFY"})
LOCK_WAIT = 120.0  # the longest a run waits for another using the same repository


@dataclass(frozen=True)
class Checkout:
    path: Path  # the commit's files, in a directory of this run's own
    url: str  # without credentials
    ref: str  # the ref asked for, or the remote's default branch
    commit: str  # the full SHA
    subject: str  # the commit's first line
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
            repo.ensure()
            ref_name, wanted = repo.resolve(ref)
            commit = repo.fetch(wanted)
            subject = repo.git("log", "-1", "--format=%s", commit).strip()
            path, unreadable = repo.tree(commit)
    except OSError as exc:  # the cache: not a directory, not writable, full
        named = f" ({exc.filename})" if exc.filename else ""
        raise GitSourceError(
            f"git: the cache {cache} cannot be used{named}: {exc.strerror or exc}"
        ) from None
    return Checkout(path, where.display, ref_name, commit, subject, unreadable)


class _CachedRepo:
    def __init__(self, where: Remote, cache_dir: Path, timeout: float, budget: Budget) -> None:
        self.remote = where
        self.timeout = timeout
        self.budget = budget
        digest = hashlib.sha256(where.url.encode()).hexdigest()[:16]
        self.cache_dir = cache_dir
        self.root = cache_dir / digest
        self.lock_file = cache_dir / f"{digest}.lock"  # beside the root: never removed with it
        self.git_dir = self.root / "repo.git"

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
        if fresh and self.root.exists():
            shutil.rmtree(self.root)
        if self.git_dir.is_dir() and self._usable():
            return
        if self.root.exists():
            shutil.rmtree(self.root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._run(["init", "--quiet", "--bare", str(self.git_dir)])

    def _usable(self) -> bool:
        try:
            self.git("rev-parse", "--git-dir")
            return True
        except GitSourceError:
            return False

    def git(self, *args: str, stdin: bytes | None = None) -> str:
        return self._run(["--git-dir", str(self.git_dir), *args], stdin=stdin).decode(
            "utf-8", errors="replace"
        )

    def git_bytes(self, *args: str, stdin: bytes | None = None) -> bytes:
        return self._run(["--git-dir", str(self.git_dir), *args], stdin=stdin)

    def _run(self, args: list[str], stdin: bytes | None = None) -> bytes:
        """git with our environment, in its own process group, killed at its timeout, the
        budget's end or a signal (GitSourceError then)."""
        self.budget.check(f"git {args[-1] if args else ''}".strip())
        limit = min(self.timeout, self.budget.remaining())
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            try:
                process = subprocess.Popen(
                    ["git", *args],
                    stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    cwd=self.cache_dir,
                    env=_environment(self.remote.env),
                    start_new_session=True,
                )
            except OSError as exc:
                raise GitSourceError(f"git cannot be run: {exc.strerror or exc}") from None
            if stdin is not None:
                assert process.stdin is not None
                with contextlib.suppress(BrokenPipeError):
                    process.stdin.write(stdin)
                process.stdin.close()
            self._wait(process, limit)
            out.seek(0)
            err.seek(0)
            if process.returncode != 0:
                raise GitSourceError(_why(err.read(), process.returncode))
            return out.read()

    def _wait(self, process: subprocess.Popen[bytes], limit: float) -> None:
        deadline = time.monotonic() + limit
        while True:
            try:
                process.wait(timeout=min(0.1, max(0.0, deadline - time.monotonic())))
                return
            except subprocess.TimeoutExpired:
                pass
            if self.budget.interrupted_by or time.monotonic() >= deadline:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                if self.budget.expired:
                    raise GitSourceError(f"git: stopped, {self.budget.why()}")
                raise GitSourceError(f"git: no answer within {limit:g}s")

    def resolve(self, ref: str | None) -> tuple[str, str]:
        """(the ref's name, its commit SHA), asking the remote once."""
        url = self.remote.url
        try:
            if ref is None:
                listed = self.git("ls-remote", "--symref", "--end-of-options", url, "HEAD")
                match = re.search(r"^ref: refs/heads/(\S+)\tHEAD$", listed, re.M)
                sha = re.search(r"^([0-9a-f]{40})\tHEAD$", listed, re.M)
                if sha is None:
                    raise GitSourceError(f"git: {url} has no default branch (an empty repository?)")
                return (match.group(1) if match else "HEAD"), sha.group(1)
            listed = self.git("ls-remote", "--end-of-options", url)
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
            self.git("update-ref", "--no-deref", "HEAD", head)
        return rev_parse(self.git, self.remote.url, ref)

    def fetch(self, commit: str) -> str:
        """Make `commit` available in the cache, fetching only what the cache lacks; returns its
        full SHA."""
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
        return self.git("rev-parse", "--verify", "--end-of-options", f"{commit}^{{commit}}").strip()

    def _fetch(self, commit: str) -> None:
        url = self.remote.url
        if len(commit) == 40:
            self.git("fetch", "--quiet", "--depth=1", "--no-tags", "--end-of-options", url, commit)
            return
        self._fetch_all()  # an abbreviated SHA: only a full fetch can find it

    def _fetch_all(self, *extra: str) -> None:
        """The remote's refs (MIRROR) and `extra` refspecs, with the whole history."""
        shallow = self.git("rev-parse", "--is-shallow-repository").strip() == "true"
        self.git(
            "fetch",
            "--quiet",
            "--no-tags",
            "--prune",
            *(["--unshallow"] if shallow else []),
            "--end-of-options",
            self.remote.url,
            *MIRROR,
            *extra,
        )

    def _has(self, commit: str) -> bool:
        try:
            self.git("cat-file", "-e", f"{commit}^{{commit}}")
            return True
        except GitSourceError:
            return False

    def tree(self, commit: str) -> tuple[Path, dict[str, str]]:
        """The commit's files as committed, in a new directory of this run's own (under the
        cache, so on its file system); and the paths not written, with why."""
        work = self.cache_dir / "runs"
        work.mkdir(exist_ok=True)
        _forget_abandoned(work)
        target = Path(tempfile.mkdtemp(prefix=f"{commit[:12]}-", dir=work)) / "tree"
        target.mkdir()
        listing = self.git_bytes("ls-tree", "-r", "-z", "--full-tree", commit)
        entries = [_entry(item) for item in listing.split(b"\0") if item]
        blobs = [e for e in entries if e[1] == "blob"]
        contents = self._blobs([sha for _, _, sha, _ in blobs])
        unreadable: dict[str, str] = {}
        links: list[tuple[Path, str]] = []
        for mode, kind, sha, path in entries:
            if kind == "commit":
                unreadable[path] = "a git submodule (its commit is not fetched)"
                continue
            if not _safe_path(path):
                unreadable[path] = "a path that leaves the tree"
                continue
            where = target / path
            where.parent.mkdir(parents=True, exist_ok=True)
            if mode == "120000":
                links.append((where, contents[sha].decode("utf-8", errors="replace")))
                continue
            where.write_bytes(contents[sha])
            if mode == "100755":
                where.chmod(0o755)
        for where, points_to in links:
            relative = where.relative_to(target).as_posix()
            if os.path.isabs(points_to):
                unreadable[relative] = f"a symbolic link out of the repository (to {points_to})"
                continue
            where.symlink_to(points_to)
        # a link inside the tree may still lead out of it through others (or nowhere)
        root = os.path.realpath(target)
        for where, points_to in links:
            relative = where.relative_to(target).as_posix()
            if relative in unreadable:
                continue
            resolved = os.path.realpath(where)
            if os.path.commonpath([root, resolved]) != root or not os.path.exists(resolved):
                where.unlink()
                unreadable[relative] = (
                    f"a symbolic link out of the repository (to {points_to})"
                    if os.path.commonpath([root, resolved]) != root
                    else f"a symbolic link to nothing (to {points_to})"
                )
        return target, unreadable

    def _blobs(self, shas: list[str]) -> dict[str, bytes]:
        """Every blob's bytes, from one `git cat-file --batch`."""
        if not shas:
            return {}
        wanted = sorted(set(shas))
        output = self.git_bytes(
            "cat-file", "--batch", stdin="".join(f"{s}\n" for s in wanted).encode()
        )
        found: dict[str, bytes] = {}
        position = 0
        for sha in wanted:
            end = output.index(b"\n", position)
            header = output[position:end].split()
            size = int(header[2])
            found[sha] = output[end + 1 : end + 1 + size]
            position = end + 1 + size + 1
        return found


ABANDONED_AFTER = 24 * 3600.0  # a run's tree still there a day later: its run was killed


def _forget_abandoned(work: Path) -> None:
    """Trees of runs that were killed before they could remove theirs."""
    now = time.time()
    for old in work.iterdir():
        with contextlib.suppress(OSError):
            if now - old.stat().st_mtime > ABANDONED_AFTER:
                shutil.rmtree(old, ignore_errors=True)


def _entry(item: bytes) -> tuple[str, str, str, str]:
    """(mode, type, sha, path) of one `ls-tree -z` entry."""
    info, _, path = item.partition(b"\t")
    mode, kind, sha = info.decode().split()
    return mode, kind, sha, path.decode("utf-8", errors="surrogateescape")


def _safe_path(path: str) -> bool:
    parts = path.split("/")
    return not path.startswith("/") and ".." not in parts and "" not in parts


def _environment(credentials: Mapping[str, str]) -> dict[str, str]:
    """The environment git runs with: the process's, less the GIT_* variables that would
    point it elsewhere or run something, plus ours (credentials, safe protocol settings)."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in _KEPT_GIT_VARIABLES
    }
    env.update(credentials)
    env["GIT_TERMINAL_PROMPT"] = "0"
    count = int(env.get("GIT_CONFIG_COUNT", "0"))
    # only the transports a URL may name (check_url): `ext::` and other helpers never run
    settings = [("protocol.allow", "never"), ("core.hooksPath", os.devnull)]
    settings += [(f"protocol.{name}.allow", "always") for name in _PROTOCOLS]
    for key, value in settings:
        env[f"GIT_CONFIG_KEY_{count}"] = key
        env[f"GIT_CONFIG_VALUE_{count}"] = value
        count += 1
    env["GIT_CONFIG_COUNT"] = str(count)
    return env


def _why(stderr: bytes, status: int) -> str:
    """git's own reason (its last `fatal:`/`error:` line), credentials scrubbed."""
    text = stderr.decode("utf-8", errors="replace")
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    reasons = [line for line in lines if line.startswith(("fatal:", "error:"))] or lines[-1:]
    reason = reasons[-1] if reasons else f"git exited with {status}"
    return scrub(reason)

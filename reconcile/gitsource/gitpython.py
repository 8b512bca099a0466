"""GitPython, on our terms: imported, and its repositories opened, where the environment cannot
steer it; every git process it starts handed to a `ProcessGuard` (processes.py says why).

What GitPython reads from `os.environ` besides the environment it gives git:
- at import, `GIT_PYTHON_GIT_EXECUTABLE`, which it then runs (`<it> version`, to check it), and
  `GIT_PYTHON_REFRESH` / `GIT_PYTHON_TRACE`;
- when it opens a repository, `GIT_DIR`, `GIT_COMMON_DIR`, `GIT_OBJECT_DIRECTORY` and
  `GIT_WORK_TREE`, which would make it read (and have git read) another repository than the
  cache's.
So those reads happen with every `GIT_*` variable hidden (`_hidden_git_variables`); the
executable is `git` from PATH, as for every other process of a run; and the command class
(`GuardedGit`) builds no environment of its own.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from reconcile.gitsource.processes import ProcessGuard

# `git` too: the package's other modules take GitPython from here, imported as above
__all__ = ["GitFailed", "GuardedGit", "git", "repository"]

_environ_lock = threading.Lock()


@contextlib.contextmanager
def _hidden_git_variables() -> Iterator[None]:
    """`os.environ` without GIT_* variables (GIT_PYTHON_* among them) for the block: only
    around GitPython's own reads of it, which take no time and start no work of ours."""
    with _environ_lock:
        hidden = {name: os.environ.pop(name) for name in list(os.environ) if name[:4] == "GIT_"}
        try:
            yield
        finally:
            os.environ.update(hidden)


with _hidden_git_variables():
    import git
    from git.compat import safe_decode
    from git.util import remove_password_if_present

# Who may reach git.Git.execute: our GuardedGit handles these of its arguments, and refuses
# the others (`shell`, `output_stream`: nothing we call uses them).
_HANDLED = frozenset(
    {
        "istream",
        "with_extended_output",
        "with_exceptions",
        "as_process",
        "stdout_as_string",
        "kill_after_timeout",  # the guard's own timeout applies instead (it kills the group)
        "with_stdout",
        "universal_newlines",
        "env",
        "strip_newline_in_stdout",
        "max_chunk_size",
    }
)


class GitFailed(git.GitCommandError):
    """A git command that exited with an error; `reason` is its standard error, as git wrote
    it."""

    def __init__(self, command: list[str], status: int, stderr: bytes | str) -> None:
        self.reason = safe_decode(stderr) or ""
        super().__init__(command, status, stderr)


class GuardedGit(git.Git):
    """GitPython's command runner, its processes started by the repository's `ProcessGuard`
    (a class of its own per repository: see `repository`)."""

    GIT_PYTHON_GIT_EXECUTABLE = "git"  # what GitPython's refresh() found or was told: not read
    GIT_PYTHON_TRACE = False
    guard: ClassVar[ProcessGuard]

    def execute(self, command: Any, *args: Any, **kwargs: Any) -> Any:
        unknown = sorted(set(kwargs) - _HANDLED)
        if args or unknown or not isinstance(command, list | tuple):
            raise TypeError(f"git {command!r}: not run with {list(args) + unknown}")
        as_process = bool(kwargs.get("as_process"))
        text = bool(kwargs.get("universal_newlines"))
        istream = kwargs.get("istream")
        process = self.guard.start(
            [str(part) for part in command],
            cwd=str(self._working_dir) if self._working_dir else None,
            stdin=istream,
            stdout=subprocess.PIPE if kwargs.get("with_stdout", True) else subprocess.DEVNULL,
            text=text,
            # GitPython's long-lived cat-file processes: read from while the tree is written
            persistent=as_process and istream == subprocess.PIPE,
            extra_env=kwargs.get("env"),
        )
        if as_process:
            return self.AutoInterrupt(process, command)
        stdout, stderr = process.communicate()
        newline = "\n" if text else b"\n"
        if stdout and kwargs.get("strip_newline_in_stdout", True) and stdout.endswith(newline):
            stdout = stdout[:-1]
        status = process.returncode
        if status != 0 and kwargs.get("with_exceptions", True):
            raise GitFailed(remove_password_if_present(command), status, stderr)
        if isinstance(stdout, bytes) and kwargs.get("stdout_as_string", True):
            stdout = safe_decode(stdout)
        if kwargs.get("with_extended_output"):
            return status, stdout, safe_decode(stderr)
        return stdout


def repository(path: Path, guard: ProcessGuard, *, create: bool = False) -> git.Repo:
    """The bare repository at `path` (made first with `create`), its git processes `guard`'s.
    Raises git.InvalidGitRepositoryError / git.NoSuchPathError when there is none."""

    class Git(GuardedGit):
        pass

    Git.guard = guard

    class Repo(git.Repo):
        GitCommandWrapperType = Git

    if create:
        path.mkdir(parents=True, exist_ok=True)
        Git(str(path)).init("--quiet", "--bare")  # into GIT_DIR, the guard's environment's
    with _hidden_git_variables():
        return Repo(path)

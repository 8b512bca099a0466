"""`--output-dir`: a `--local` run's objects written as YAML into a directory reconcile owns,
without ever losing a file that is not its own.

Ownership is proven by a marker file (MARKER, hidden so that `--local OUT -R` skips it) that
records the files the last dump wrote. Only a new or empty directory is taken over, and one
that overlaps an input is refused. Cleaning removes only the files the previous dump recorded,
while they are still regular files inside the directory. Writing refuses symlinks and goes
through a temporary file and `os.replace`, so nothing outside the directory is written or
deleted.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import os
import secrets
import stat
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from reconcile.objects.secrets import is_secret

if TYPE_CHECKING:
    from reconcile.cluster.memory import MemoryCluster

log = logging.getLogger(__name__)

MARKER = ".reconcile-output"
CONTROLLER_GROUP = "metacontroller.k8s.io/"
MARKER_FORMAT = 1
SECRET_MODE = 0o600  # Secret files hold the values twice: `data` and the last-applied copy
_DEFAULT_MODE = 0o666  # less the umask, as for any new file
_LAYOUT_DEPTH = 3  # <namespace or _cluster>/<group.resource>/<name>.yaml


class OutputDirError(Exception):
    """The output directory cannot be taken over or written: one line naming it and why."""


def prepare_output_dir(path: Path, inputs: Sequence[Path]) -> OutputDir:
    """Check `path` before the run and take it over: a missing directory is created, an empty
    one is taken, one already marked as reconcile's keeps its record. Refused: a path that is
    not a directory, a non-empty directory without the marker, and a directory that is, holds
    or sits inside one of `inputs` (files or directories). Raises OutputDirError."""
    root = Path(os.path.realpath(path))
    _refuse_overlap(path, root, inputs)
    try:
        recorded = _take_over(path, root)
    except OSError as exc:
        raise _os_error(path, exc) from None
    return OutputDir(path, root, recorded)


class OutputDir:
    """A directory taken over by `prepare_output_dir`."""

    def __init__(self, path: Path, root: Path, recorded: frozenset[str]) -> None:
        self.path = path  # as given, for messages
        self._root = root  # its real path: the only place anything is written or removed
        self._recorded = recorded  # what the previous dump wrote (relative POSIX paths)

    def write(
        self, cluster: MemoryCluster, hook_dirs: Mapping[str, Path] | None = None
    ) -> list[Path]:
        """Dump every object (files whose content is unchanged are left alone), remove the files
        the previous dump wrote and this one did not, and record what this one wrote. Returns
        the objects' files. Raises OutputDirError; a refused target is found before any write.

        `hook_dirs`: for each controller read from a file, that file's directory. Its dumped
        command hooks get a `workingDir` relative to where they are written, so that the dump
        loads again (`--local OUT -R`) with the hooks where they were."""
        # the in-process cluster's dump: loaded only when an --output-dir is written
        from reconcile.files.dump import dump_entries, to_yaml

        files: dict[str, tuple[bytes, bool]] = {}
        for path, dumped in dump_entries(cluster):
            obj = _hooks_resolved(dumped, hook_dirs or {}, self._root / path.parent)
            files[path.as_posix()] = (to_yaml(obj).encode(), is_secret(obj))
        try:
            for relative in files:
                self._walk(self._parts(relative), create=False)
            # Recorded before writing, so that a run stopped half-way leaves no file unrecorded.
            self._record(self._recorded | files.keys())
            for relative, (data, private) in files.items():
                self._write_file(relative, data, SECRET_MODE if private else None)
            for relative in sorted(self._recorded - files.keys()):
                self._remove_stale(relative)
            self._record(files.keys())
        except OSError as exc:
            raise _os_error(self.path, exc) from None
        self._recorded = frozenset(files)
        return [self.path / relative for relative in files]

    def _parts(self, relative: str) -> tuple[str, ...]:
        parts = _layout_parts(relative)
        if parts is None:
            raise OutputDirError(
                f"--output-dir {self.path}: an object's file {relative!r} is not a plain "
                "<namespace>/<resource>/<name>.yaml path"
            )
        return parts

    def _walk(self, parts: tuple[str, ...], *, create: bool) -> Path:
        """The file's path after checking every directory on the way below the root is a real
        directory (`create`: making the missing ones) and the file, if it exists, a regular
        file."""
        directory = self._root
        for index, part in enumerate(parts[:-1], start=1):
            directory = directory / part
            if create:
                with contextlib.suppress(FileExistsError):  # checked just below
                    directory.mkdir()
            mode = _lstat_mode(directory)
            if mode is None:
                return self._root.joinpath(*parts)  # nothing below it exists yet
            if not stat.S_ISDIR(mode):
                raise self._refused("/".join(parts[:index]), _not_ours(mode, "directory"))
        target = directory / parts[-1]
        mode = _lstat_mode(target)
        if mode is not None and not stat.S_ISREG(mode):
            raise self._refused("/".join(parts), _not_ours(mode, "regular file"))
        return target

    def _write_file(self, relative: str, data: bytes, private_mode: int | None) -> None:
        target = self._walk(self._parts(relative), create=True)
        current = _read_regular(target)
        if current is not None:
            content, mode = current
            private_enough = private_mode is None or mode & 0o777 & ~private_mode == 0
            if content == data and private_enough:
                return
        _replace(target, data, private_mode or _DEFAULT_MODE)

    def _remove_stale(self, relative: str) -> None:
        """Remove a file the previous dump wrote, if it still is a regular file reached through
        real directories inside the root, then the directories it leaves empty."""
        parts = _layout_parts(relative)
        if parts is None:
            return
        try:
            target = self._walk(parts, create=False)
        except OutputDirError as exc:
            log.warning("kept %s: %s", self.path / relative, exc)
            return
        if _lstat_mode(target) is None:
            return
        if not _strictly_inside(Path(os.path.realpath(target)), self._root):
            return
        target.unlink()
        for depth in range(len(parts) - 1, 0, -1):
            directory = self._root.joinpath(*parts[:depth])
            mode = _lstat_mode(directory)
            if mode is None or not stat.S_ISDIR(mode) or any(directory.iterdir()):
                break
            directory.rmdir()

    def _record(self, files: Iterable[str]) -> None:
        _write_marker(self._root, files)

    def _refused(self, relative: str, problem: str) -> OutputDirError:
        return OutputDirError(
            f"--output-dir {self.path}: {relative} {problem}; reconcile neither writes nor "
            "deletes through it"
        )


# -- taking the directory over --------------------------------------------------------------


def _hooks_resolved(obj: Any, hook_dirs: Mapping[str, Path], written_in: Path) -> Any:
    """A controller whose command hooks run where they ran in this run, from `written_in`."""
    if not (isinstance(obj, dict) and str(obj.get("apiVersion", "")).startswith(CONTROLLER_GROUP)):
        return obj
    name = str((obj.get("metadata") or {}).get("name", ""))
    hooks = (obj.get("spec") or {}).get("hooks")
    if name not in hook_dirs or not isinstance(hooks, dict):
        return obj
    obj = copy.deepcopy(obj)
    for hook in obj["spec"]["hooks"].values():
        command = hook.get("command") if isinstance(hook, dict) else None
        if not isinstance(command, dict):
            continue
        ran_in = os.path.normpath(os.path.join(hook_dirs[name], command.get("workingDir") or "."))
        command["workingDir"] = os.path.relpath(ran_in, written_in)
    return obj


def _refuse_overlap(path: Path, root: Path, inputs: Sequence[Path]) -> None:
    for given in inputs:
        real = Path(os.path.realpath(given))
        if real == root:
            relation = "is the input"
        elif root in real.parents:
            relation = "contains the input"
        elif real in root.parents:
            relation = "is inside the input"
        else:
            continue
        raise OutputDirError(
            f"--output-dir {path}: {relation} {given}; choose a directory outside the inputs"
        )


def _take_over(path: Path, root: Path) -> frozenset[str]:
    """What the previous dump recorded (nothing for a new or empty directory)."""
    if os.path.lexists(path) and not path.exists():
        raise OutputDirError(f"--output-dir {path}: is a broken symbolic link")
    if not root.exists():
        root.mkdir(parents=True)
    elif not root.is_dir():
        raise OutputDirError(f"--output-dir {path}: exists and is not a directory")
    elif os.path.lexists(root / MARKER):
        return _read_marker(path, root / MARKER)
    elif any(root.iterdir()):
        raise OutputDirError(
            f"--output-dir {path}: is not empty and was not written by reconcile; "
            "choose an empty or new directory"
        )
    _write_marker(root, [])
    return frozenset()


def _read_marker(path: Path, marker: Path) -> frozenset[str]:
    problem = f"--output-dir {path}: its marker {MARKER}"
    if not stat.S_ISREG(marker.lstat().st_mode):
        raise OutputDirError(f"{problem} is not a regular file")
    try:
        content = json.loads(marker.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise OutputDirError(f"{problem} is not valid JSON: {exc}") from None
    version = content.get("format") if isinstance(content, dict) else None
    if version != MARKER_FORMAT:
        raise OutputDirError(
            f"{problem} has format {version!r}, not {MARKER_FORMAT} (another version of "
            "reconcile wrote it?)"
        )
    files = content.get("files")
    if not isinstance(files, list) or not all(
        isinstance(f, str) and _layout_parts(f) for f in files
    ):
        raise OutputDirError(f"{problem}: `files` is not a list of the files reconcile wrote")
    return frozenset(files)


def _write_marker(root: Path, files: Iterable[str]) -> None:
    content = {"format": MARKER_FORMAT, "files": sorted(files)}
    _replace(root / MARKER, (json.dumps(content, indent=1) + "\n").encode(), _DEFAULT_MODE)


# -- files --------------------------------------------------------------------------------------


def _layout_parts(relative: str) -> tuple[str, ...] | None:
    """The parts of a dump's relative path, or None unless it has exactly the layout's depth
    of plain names (no `..`, no hidden or absolute parts)."""
    path = PurePosixPath(relative)
    parts = path.parts
    if path.is_absolute() or len(parts) != _LAYOUT_DEPTH or path.as_posix() != relative:
        return None
    if any(part.startswith(".") or "\\" in part or "\0" in part for part in parts):
        return None
    return parts


def _lstat_mode(path: Path) -> int | None:
    try:
        return path.lstat().st_mode
    except FileNotFoundError:
        return None


def _not_ours(mode: int, expected: str) -> str:
    return "is a symbolic link" if stat.S_ISLNK(mode) else f"is not a {expected}"


def _strictly_inside(path: Path, root: Path) -> bool:
    return root in path.parents


def _read_regular(target: Path) -> tuple[bytes, int] | None:
    """Content and mode of an existing regular file, without following a symlink (O_NOFOLLOW)
    or blocking on a FIFO swapped in (O_NONBLOCK); None when there is none."""
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as stream:
        mode = os.fstat(stream.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(f"{target} is not a regular file")
        return stream.read(), mode


def _replace(target: Path, data: bytes, mode: int) -> None:
    """Write `target` atomically: a new hidden file beside it (created with `mode`, less the
    umask) renamed over it, which replaces a symlink rather than following it."""
    temporary = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _os_error(path: Path, exc: OSError) -> OutputDirError:
    where = f" ({exc.filename})" if exc.filename else ""
    return OutputDirError(f"--output-dir {path}: {exc.strerror or exc}{where}")

"""A commit's tree written as committed, read through GitPython's object model (the tree's
entries and each blob's bytes, from the repository's object database): no checkout, so
`.gitattributes` (`export-ignore`, `export-subst`, filters, `eol`) cannot hide or rewrite a file.

A symbolic link that points out of the tree (or to nothing) is not written, nor is a submodule
(its commit is not fetched), nor an entry whose path would leave the tree; each is listed, with
why, so that a run reading such a path fails naming it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from reconcile.gitsource.gitpython import git

_LINK = 0o120000
_EXECUTABLE = 0o100755


# No file a run reads may be larger (the manifests' reader holds the same bound): one that is,
# is not written, and a run reading it fails naming it
MAX_FILE_BYTES = 64 * 2**20
_PIECE = 2**20


def write_tree(commit: git.Commit, target: Path, check: Callable[[], None]) -> dict[str, str]:
    """`commit`'s files under `target` (an empty directory); the paths not written, with why.
    `check` is called before each entry (the run's budget)."""
    unreadable: dict[str, str] = {}
    links: list[tuple[Path, str]] = []
    for item in commit.tree.traverse():
        check()
        if isinstance(item, git.Submodule):
            unreadable[str(item.path)] = "a git submodule (its commit is not fetched)"
            continue
        if not isinstance(item, git.Blob):  # a tree: made by the files in it
            continue
        path = str(item.path)
        if not _safe_path(path):
            unreadable[path] = "a path that leaves the tree"
            continue
        if item.size > MAX_FILE_BYTES:  # git compresses zeros a thousandfold
            unreadable[path] = f"larger than {MAX_FILE_BYTES // 2**20} MiB ({item.size} bytes)"
            continue
        where = target / path
        where.parent.mkdir(parents=True, exist_ok=True)
        stream = item.data_stream
        if item.mode == _LINK:
            links.append((where, stream.read().decode("utf-8", errors="replace")))
            continue
        with where.open("wb") as out:  # in pieces: a blob is never held whole
            while piece := stream.read(_PIECE):
                out.write(piece)
                check()
        if item.mode == _EXECUTABLE:
            where.chmod(0o755)
    unreadable.update(_write_links(target, links))
    return unreadable


def _write_links(target: Path, links: list[tuple[Path, str]]) -> dict[str, str]:
    """The links that stay inside the tree, written; the others, with why."""
    unreadable: dict[str, str] = {}
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
    return unreadable


def _safe_path(path: str) -> bool:
    parts = path.split("/")
    return not path.startswith("/") and ".." not in parts and "" not in parts and "." not in parts

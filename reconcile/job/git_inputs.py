"""`--git`: the repository checked out, and every input path read inside it."""

from __future__ import annotations

import atexit
import logging
from dataclasses import replace
from pathlib import Path

from reconcile.budget import Budget
from reconcile.config import RunConfig
from reconcile.files import is_standard_input
from reconcile.results import Provenance

log = logging.getLogger("reconcile")


def from_git(config: RunConfig, budget: Budget | None = None) -> tuple[RunConfig, Provenance]:
    """Check the repository out (within the budget) and read every input path inside it; the
    checked-out tree is removed when the process ends. Raises GitSourceError."""
    from reconcile.gitsource import GitSourceError, checkout

    git = config.git
    assert git.url is not None
    cache = Path(git.cache_dir) if git.cache_dir else None
    checked_out = checkout(git.url, git.ref, cache, budget=budget)
    atexit.register(checked_out.cleanup)
    log.info(
        "git: %s at %s is commit %s (%s)",
        checked_out.url,
        checked_out.ref,
        checked_out.commit[:12],
        checked_out.subject,
    )
    root = checked_out.path

    def inside(paths: tuple[str, ...], option: str) -> tuple[str, ...]:
        found = []
        for path in paths:
            if is_standard_input(path):  # not a path: the run's standard input, as without --git
                found.append(path)
                continue
            full = (root / path).resolve()
            if Path(path).is_absolute() or not full.is_relative_to(root.resolve()):
                raise GitSourceError(
                    f"{option} {path}: with --git, paths are read inside the repository; "
                    "give a path relative to its root"
                )
            read = full.relative_to(root.resolve()).as_posix()
            for skipped, why in sorted(checked_out.unreadable.items()):
                if (
                    read in (".", skipped)
                    or skipped.startswith(f"{read}/")
                    or (read.startswith(f"{skipped}/"))
                ):
                    raise GitSourceError(
                        f"{option} {path}: {skipped} in the repository is {why}; not read"
                    )
            found.append(str(full))
        return tuple(found)

    config = replace(
        config,
        reconcile=replace(
            config.reconcile,
            controller_paths=inside(config.reconcile.controller_paths, "--controllers"),
            apply_paths=inside(config.reconcile.apply_paths, "--manifests"),
        ),
        local=replace(config.local, manifest_paths=inside(config.local.manifest_paths, "--local")),
        # a kustomization in the repository may name only the repository's files
        kustomize=replace(config.kustomize, confined_to=str(root.resolve())),
    )
    source = Provenance(checked_out.url, checked_out.ref, checked_out.commit, checked_out.subject)
    return config, source

"""Writing every object of an in-process cluster into a directory the test owns."""

from __future__ import annotations

import os
from pathlib import Path

from reconcile.cluster.memory import MemoryCluster
from reconcile.files.dump import dump_entries, to_yaml


def dump_objects(
    cluster: MemoryCluster,
    directory: str | os.PathLike[str],
    *,
    include_builtin_namespaces: bool = False,
) -> list[Path]:
    """Write every object as YAML, one file per object (see `dump_path`), leaving files whose
    content is unchanged untouched; removes nothing. Returns the paths of all objects' files.

    `reconcile --output-dir` writes through `reconcile.job.output_dir`, which also removes
    what its previous dump wrote and this one did not, and never a file it did not write.
    """
    root = Path(directory)
    written: list[Path] = []
    for relative, obj in dump_entries(
        cluster, include_builtin_namespaces=include_builtin_namespaces
    ):
        target = root / relative
        text = to_yaml(obj)
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
        written.append(target)
    return written

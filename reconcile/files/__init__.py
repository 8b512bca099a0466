"""Manifests as `kubectl apply -f` (and `-k`) reads them: one walker and one reader for
`--local`, `--manifests` and `--controllers`, so that the same input gets the same verdicts and
the same document numbers whichever option names it (`inputs`: files, directories holding a
kustomization, rendered by `kustomize`, and standard input); `seed` creates a path's objects in
a cluster (the embedded default's start, and test fixtures), `dump` writes an in-process cluster
back to files (`--output-dir`)."""

from reconcile.files.inputs import (
    STANDARD_INPUT,
    STANDARD_INPUT_LABEL,
    ManifestSource,
    is_standard_input,
    manifest_sources,
    reading_inputs,
)
from reconcile.files.kustomize import KustomizeError
from reconcile.files.reader import (
    MANIFEST_SUFFIXES,
    Document,
    Problem,
    parse_documents,
    read_documents,
)

__all__ = [
    "MANIFEST_SUFFIXES",
    "STANDARD_INPUT",
    "STANDARD_INPUT_LABEL",
    "Document",
    "KustomizeError",
    "ManifestSource",
    "Problem",
    "is_standard_input",
    "manifest_sources",
    "parse_documents",
    "read_documents",
    "reading_inputs",
]

"""Manifest files as `kubectl apply -f` reads them: one walker and one reader for `--local`,
`--manifests` and `--controllers`, so that the same file gets the same verdicts and the same
document numbers whichever option names it; `seed` creates a file's objects in a cluster (the
embedded default's start, and test fixtures), `dump` writes an in-process cluster back to files
(`--output-dir`)."""

from reconcile.files.reader import (
    MANIFEST_SUFFIXES,
    Document,
    Problem,
    manifest_files,
    read_documents,
)

__all__ = ["MANIFEST_SUFFIXES", "Document", "Problem", "manifest_files", "read_documents"]

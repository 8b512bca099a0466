"""A run reads each manifest file once: `--local` seeds the cluster from its manifests and then
takes the controllers they hold from the same files. Every reader gets objects of its own,
named its own way."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconcile.config import KustomizeSettings
from reconcile.files import manifest_sources, reading_inputs

FIRST = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: first}\n---\nkind: Broken\n--- 3\n"


def _read(path: Path, label: str) -> tuple[list[str], list[str], list[dict[str, object]]]:
    (source,) = manifest_sources(path)
    documents, problems = source.documents(label)
    return [d.label for d in documents], [p[1] for p in problems], [d.obj for d in documents]


def test_within_a_run_a_file_is_parsed_once_and_each_reader_has_its_own_objects(
    tmp_path: Path,
) -> None:
    manifest = tmp_path / "objects.yaml"
    manifest.write_text(FIRST)
    with reading_inputs(KustomizeSettings()):
        labels, problems, objects = _read(manifest, "objects.yaml")
        objects[0]["metadata"] = {"name": "changed by the first reader"}
        manifest.write_text(FIRST.replace("first", "second"))  # read already: not again
        again_labels, again_problems, again = _read(manifest, str(manifest))
    assert labels == ["objects.yaml (document 1)", "objects.yaml (document 2)"]
    assert problems == ["objects.yaml (document 3): not a mapping but a YAML number"]
    assert again_labels == [f"{manifest} (document 1)", f"{manifest} (document 2)"]
    assert again_problems == [f"{manifest} (document 3): not a mapping but a YAML number"]
    assert again[0]["metadata"] == {"name": "first"}
    assert _read(manifest, "objects.yaml")[2][0]["metadata"] == {"name": "second"}  # outside


def test_a_file_that_cannot_be_read_fails_for_every_reader_in_its_words(tmp_path: Path) -> None:
    manifest = tmp_path / "bad.yaml"
    manifest.write_text("a: [unclosed\n")
    with reading_inputs(KustomizeSettings()):
        for label in ("bad.yaml", str(manifest)):
            with pytest.raises(ValueError, match=rf"^{label}: invalid YAML"):
                _read(manifest, label)

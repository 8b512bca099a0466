"""Kustomizations and standard input without running kustomize: which entries are remote, the
checks of what a kustomization names, which kustomizations of a walk are rendered, the units of
a path, kustomize's errors on one line, labels, and reading each input once per run."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest
import typer

from reconcile.cli.support import check_standard_input
from reconcile.config import KustomizeSettings
from reconcile.files import (
    KustomizeError,
    ManifestSource,
    manifest_sources,
    parse_documents,
    reading_inputs,
)
from reconcile.files import inputs as inputs_module
from reconcile.files.inputs import SourceKind
from reconcile.files.kustomize import (
    MESSAGE_LIMIT,
    check_kustomization,
    failure_reason,
    is_remote,
    kustomization_roots,
    references,
)

ROOT = Path(__file__).resolve().parents[2]


def kustomization(directory: Path, text: str, name: str = "kustomization.yaml") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_text(text)
    return directory


@pytest.mark.parametrize(
    ("entry", "remote"),
    [
        ("https://github.com/acme/platform//base?ref=v1", True),
        ("http://example.com/manifest.yaml", True),
        ("ssh://git@example.com/acme/platform.git", True),
        ("file:///srv/repo", True),
        ("git@github.com:acme/platform.git//base", True),
        ("git::https://example.com/acme/platform", True),
        ("gh:acme/platform", True),
        ("github.com/acme/platform/base?ref=v1", True),
        ("gitlab.example.com/acme/platform", True),  # a host and a path, no such directory
        ("../base", False),
        ("base", False),
        ("deployment.yaml", False),
        ("/srv/shared/base", False),
        ("./overlays/prod", False),
    ],
)
def test_remote_entries(tmp_path: Path, entry: str, remote: bool) -> None:
    assert is_remote(entry, tmp_path) is remote


def test_a_dotted_local_directory_is_not_remote(tmp_path: Path) -> None:
    (tmp_path / "base.v2" / "x").mkdir(parents=True)
    assert not is_remote("base.v2/x", tmp_path)


def test_references_read_every_field_that_loads_something(tmp_path: Path) -> None:
    kustomization(
        tmp_path,
        "resources: [a.yaml, ../base]\nbases: [../old]\ncomponents: [../c]\n"
        "generators: [gen.yaml]\ntransformers:\n  - |\n    apiVersion: builtin\n"
        "    kind: LabelTransformer\nvalidators: v.yaml\nnamePrefix: x-\n"
        "patches: [{path: p.yaml, target: {name: x}}, {patch: '[]'}]\n"
        "patchesStrategicMerge: [psm.yaml]\npatchesJson6902: [{path: j.yaml}]\n"
        "configMapGenerator: [{name: g, files: [k=f.txt], envs: [e.env], literals: [a=b]}]\n"
        "secretGenerator: [{name: s, env: s.env, type: Opaque}]\n"
        "openapi: {path: schema.json}\nreplacements: [{path: r.yaml}]\n"
        "configurations: [conf.yaml]\ncrds: [crd.json]\n"
        "images: [{name: app, newName: ghcr.io/acme/app}]\n"
        "commonAnnotations: {docs: 'https://example.com/docs'}\n"
        "helmCharts: [{name: c, repo: 'https://charts.example.com', valuesFile: v.yaml}]\n",
    )
    assert references(tmp_path / "kustomization.yaml") == [
        ("resources[0]", "a.yaml"),
        ("resources[1]", "../base"),
        ("bases[0]", "../old"),
        ("components[0]", "../c"),
        ("generators[0]", "gen.yaml"),
        ("validators", "v.yaml"),  # the inline transformer is no path
        ("patches[0].path", "p.yaml"),  # a target is data
        ("patchesStrategicMerge[0]", "psm.yaml"),
        ("patchesJson6902[0].path", "j.yaml"),
        ("configMapGenerator[0].files[0]", "k=f.txt"),
        ("configMapGenerator[0].envs[0]", "e.env"),
        ("secretGenerator[0].env", "s.env"),
        ("openapi.path", "schema.json"),
        ("replacements[0].path", "r.yaml"),
        ("configurations[0]", "conf.yaml"),
        ("crds[0]", "crd.json"),
        # names, images and annotations are data; a Helm chart's repository is not
        ("helmCharts[0].repo", "https://charts.example.com"),
        ("helmCharts[0].valuesFile", "v.yaml"),
    ]


def test_an_unreadable_kustomization_is_an_error_naming_it(tmp_path: Path) -> None:
    kustomization(tmp_path, "resources: [a\n")
    with pytest.raises(KustomizeError, match=r"kustomization.yaml: cannot be read: invalid YAML"):
        check_kustomization(tmp_path, KustomizeSettings())
    kustomization(tmp_path, "- a list\n")
    with pytest.raises(KustomizeError, match="not a kustomization"):
        check_kustomization(tmp_path, KustomizeSettings())


def test_a_remote_entry_anywhere_below_is_refused_naming_its_file(tmp_path: Path) -> None:
    kustomization(tmp_path / "base", "resources:\n  - https://example.com/x.yaml\n")
    kustomization(tmp_path / "middle", "resources: [../base]\n", name="Kustomization")
    overlay = kustomization(tmp_path / "overlay", "components:\n  - ../middle\n")
    with pytest.raises(KustomizeError) as refused:
        check_kustomization(overlay, KustomizeSettings())
    assert str(refused.value) == (
        f"{tmp_path / 'base' / 'kustomization.yaml'}: resources[0] entry "
        "'https://example.com/x.yaml' is remote (kustomize would fetch it from the network); "
        "--kustomize-allow-remote allows it"
    )
    check_kustomization(overlay, KustomizeSettings(allow_remote=True))


def test_with_git_an_entry_outside_the_checkout_is_refused(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    kustomization(tmp_path / "shared", "resources: []\n")
    kustomization(checkout / "base", "resources: []\n")
    inside = kustomization(checkout / "apps", "resources: [../base]\n")
    check_kustomization(inside, KustomizeSettings(confined_to=str(checkout)))
    outside = kustomization(checkout / "escape", "resources:\n  - ../base\n  - ../../shared\n")
    confined = KustomizeSettings(confined_to=str(checkout))
    with pytest.raises(KustomizeError) as refused:
        check_kustomization(outside, confined)
    assert str(refused.value).startswith(
        "escape/kustomization.yaml: resources[1] entry '../../shared' resolves outside the "
        "repository"
    )
    check_kustomization(outside, KustomizeSettings())  # without --git: the user's own disk
    # a link is followed to where it points
    (checkout / "link").symlink_to(tmp_path / "shared")
    linked = kustomization(checkout / "linked", "resources: [../link]\n")
    with pytest.raises(KustomizeError, match="resolves outside"):
        check_kustomization(linked, confined)


def test_only_the_roots_of_a_walk_are_rendered(tmp_path: Path) -> None:
    base = kustomization(tmp_path / "base", "resources: [cm.yaml]\n")
    middle = kustomization(tmp_path / "middle", "resources: [../base]\n")
    prod = kustomization(tmp_path / "prod", "resources: [../middle]\n")
    other = kustomization(tmp_path / "other", "resources: [x.yaml]\n")
    broken = kustomization(tmp_path / "broken", "resources: [\n")
    found = [base, middle, prod, other, broken]
    assert kustomization_roots(found) == [prod, other, broken]
    # two that reach each other are both kept: kustomize names the cycle
    a = kustomization(tmp_path / "a", "resources: [../b]\n")
    b = kustomization(tmp_path / "b", "resources: [../a]\n")
    assert kustomization_roots([a, b]) == [a, b]


def test_the_units_of_a_path(tmp_path: Path) -> None:
    (tmp_path / "plain.yaml").write_text("{}\n")
    (tmp_path / ".hidden.yaml").write_text("{}\n")
    kustomization(tmp_path / "apps" / "base", "resources: []\n")
    kustomization(tmp_path / "apps" / "overlay", "resources: [../base]\n")
    (tmp_path / "apps" / "overlay" / "patch.yaml").write_text("{}\n")  # the overlay's own
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "x.json").write_text("{}\n")

    def units(path: Path, recursive: bool) -> list[tuple[str, SourceKind]]:
        return [(s.label_within(path), s.kind) for s in manifest_sources(path, recursive)]

    assert units(tmp_path, False) == [("plain.yaml", SourceKind.FILE)]
    assert units(tmp_path, True) == [
        ("apps/overlay", SourceKind.KUSTOMIZATION),
        ("more/x.json", SourceKind.FILE),
        ("plain.yaml", SourceKind.FILE),
    ]
    overlay = tmp_path / "apps" / "overlay"
    assert units(overlay, False) == [(str(overlay), SourceKind.KUSTOMIZATION)]
    assert units(Path("-"), False) == [("(standard input)", SourceKind.STANDARD_INPUT)]
    with pytest.raises(FileNotFoundError):
        manifest_sources(tmp_path / "missing")


def test_where_hooks_of_each_unit_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert ManifestSource(tmp_path / "c.yaml", SourceKind.FILE).home == tmp_path.resolve()
    directory = tmp_path / "overlay"
    assert ManifestSource(directory, SourceKind.KUSTOMIZATION).home == directory.resolve()
    assert ManifestSource(Path("-"), SourceKind.STANDARD_INPUT).home == tmp_path.resolve()


def test_rendered_documents_are_labelled_by_their_directory() -> None:
    text = "kind: A\n---\n---\n- a\n---\nkind: List\nitems: [{kind: B}, 3]\n"
    documents, problems = parse_documents(text, "apps/overlay", rendered_by="kustomize")
    assert [d.label for d in documents] == [
        "apps/overlay (kustomize, document 1)",
        "apps/overlay (kustomize, document 4, item 1)",
    ]
    assert [p for _, p in problems] == [
        "apps/overlay (kustomize, document 3): not a mapping but a YAML list",
        "apps/overlay (kustomize, document 4, item 2): not a mapping but a YAML number",
    ]


def test_kubectls_error_on_one_line() -> None:
    stderr = (
        "# Warning: 'bases' is deprecated. Please use 'resources' instead.\n"
        'E1126 11:37:08.019724   15532 run.go:72] "command failed" err=<\n'
        "\taccumulating resources: accumulation err='accumulating resources from "
        "'../missing': not a directory'\n"
        "\t: exit status 1\n"
        " >\n"
    )
    assert failure_reason(stderr, 1) == (
        "accumulating resources: accumulation err='accumulating resources from "
        "'../missing': not a directory' : exit status 1"
    )


def test_kustomizes_error_on_one_line_bounded_and_printable() -> None:
    assert failure_reason("Error: no such \x1b[31mthing\n", 1) == "no such \\x1b[31mthing"
    long = failure_reason("Error: " + "x" * 5000, 1)
    assert len(long) == MESSAGE_LIMIT and long.endswith("…")
    assert failure_reason("", 3) == "exited with status 3"


def fake_stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))


def test_standard_input_is_read_once_per_run(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_stdin(monkeypatch, "kind: A\n")
    source = ManifestSource(Path("-"), SourceKind.STANDARD_INPUT)
    with reading_inputs(KustomizeSettings()):
        first, _ = source.documents()
        second, _ = source.documents()
    assert [d.obj for d in first] == [d.obj for d in second] == [{"kind": "A"}]
    assert first[0].label == "(standard input) (document 1)"
    fake_stdin(monkeypatch, "kind: A\n")
    assert [d.obj for d in source.documents()[0]] == [{"kind": "A"}]
    assert source.documents()[0] == []  # outside a run nothing is kept: the input is used up


def test_a_kustomization_is_rendered_once_per_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[Path, KustomizeSettings]] = []

    def render(directory: Path, settings: KustomizeSettings, budget: object) -> str:
        calls.append((directory, settings))
        return "kind: A\n"

    monkeypatch.setattr(inputs_module, "render", render)
    directory = kustomization(tmp_path / "overlay", "resources: []\n")
    settings = KustomizeSettings(allow_remote=True)
    with reading_inputs(settings):
        for path in (directory, tmp_path / "overlay" / ".." / "overlay"):
            (source,) = manifest_sources(path)
            assert [d.obj for d in source.documents()[0]] == [{"kind": "A"}]
        with reading_inputs(settings):  # a part of the run opening it again: the same reading
            source.documents()
    assert calls == [(directory, settings)]


def test_two_options_reading_standard_input_are_a_usage_error() -> None:
    with pytest.raises(typer.BadParameter, match="--local and --manifests both read standard"):
        check_standard_input({"--controllers": ["x"], "--local": ["-"], "--manifests": ["-"]})
    with pytest.raises(typer.BadParameter, match=r"--controllers names standard input \(-\) more"):
        check_standard_input({"--controllers": ["-", "-"], "--local": [], "--manifests": []})
    check_standard_input({"--controllers": ["-", "a"], "--local": ["b"], "--manifests": []})


def test_the_image_pins_kustomize_by_checksum() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert re.search(r"ARG KUSTOMIZE_VERSION=v5\.\d+\.\d+\n", dockerfile)
    assert re.search(r"ARG KUSTOMIZE_SHA256=[0-9a-f]{64}\n", dockerfile)
    assert 'echo "${KUSTOMIZE_SHA256}  /tmp/kustomize.tar.gz" | sha256sum -c -' in dockerfile
    assert "COPY --from=kustomize /usr/local/bin/kustomize /usr/local/bin/kustomize" in dockerfile

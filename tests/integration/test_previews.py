"""Previews that do not lie and errors that name the cause, through the real command on both
backends: what the API server refuses in `--manifests` (annotations over 256 KiB, invalid
labels) fails the dry run and the run alike before any write; an object defined twice is named
with both places; an unwritable `--metrics-file` and an `--output-dir` overlapping an input are
found before the run; terminal escape sequences in free text are shown, not obeyed."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.cli import reconcile
from tests.support.manifest_target import Target, make_target


@pytest.fixture(params=["memory", pytest.param("live", marks=pytest.mark.controlplane)])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Target]:
    yield from make_target(request, tmp_path)


def configmap(name: str, namespace: str | None, **meta: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, **meta}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": {"k": "v"}}


def text_of(done: subprocess.CompletedProcess[str]) -> str:
    return done.stdout + done.stderr


def refused_everywhere(target: Target, apps: Path, *phrases: str) -> None:
    """The dry run and the run both exit 1 naming the cause, and nothing is written."""
    before = target.objects()
    for extra in (("--dry-run",), (), ("--prune",)):
        done = target.run(apps, *extra)
        assert done.returncode == 1, text_of(done)[-3000:]
        for phrase in phrases:
            assert phrase in text_of(done), (phrase, text_of(done)[-3000:])
        assert "Traceback" not in text_of(done)
    assert target.objects() == before


@pytest.mark.parametrize(
    "annotations",
    [
        {"big": "x" * (300 * 1024)},
        {f"part-{i}": "y" * (40 * 1024) for i in range(7)},
    ],
    ids=["one-300KiB-value", "seven-40KiB-values"],
)
def test_annotations_the_server_refuses_fail_the_preview_too(
    target: Target, annotations: dict[str, str]
) -> None:
    name = f"big-{target.suffix}"
    apps = target.directory / "apps"
    apps.mkdir()
    (apps / "big.yaml").write_text(
        yaml.safe_dump(configmap(name, target.namespace, annotations=annotations))
    )
    refused_everywhere(
        target,
        apps,
        "big.yaml (document 1): metadata.annotations",
        "must have at most 262144 bytes",
    )


@pytest.mark.parametrize(
    ("meta", "field"),
    [
        ({"labels": {"app": "-bad-"}}, "metadata.labels"),
        ({"labels": {"bad key!": "x"}}, "metadata.labels"),
        ({"annotations": {"/nokey": "x"}}, "metadata.annotations"),
    ],
    ids=["label-value", "label-key", "annotation-key"],
)
def test_metadata_the_server_refuses_fails_the_preview_too(
    target: Target, meta: dict[str, Any], field: str
) -> None:
    apps = target.directory / "apps"
    apps.mkdir()
    obj = configmap(f"odd-{target.suffix}", target.namespace, **meta)
    (apps / "odd.yaml").write_text(yaml.safe_dump(obj))
    refused_everywhere(target, apps, f"odd.yaml (document 1): {field}")


def test_an_object_defined_twice_is_named_with_both_places(target: Target) -> None:
    name = f"twice-{target.suffix}"
    apps = target.directory / "apps"
    apps.mkdir()
    (apps / "a.yaml").write_text(yaml.safe_dump(configmap(name, target.namespace)))
    (apps / "b.yaml").write_text(
        yaml.safe_dump_all(
            [
                configmap(f"once-{target.suffix}", target.namespace),
                configmap(name, target.namespace),
            ]
        )
    )
    refused_everywhere(
        target,
        apps,
        f"ConfigMap {target.namespace}/{name} is defined more than once",
        "a.yaml (document 1)",
        "b.yaml (document 2)",
    )


def test_an_object_defined_twice_once_by_its_default_namespace(target: Target) -> None:
    name = f"twice-{target.suffix}"
    apps = target.directory / "apps"
    apps.mkdir()
    (apps / "all.yaml").write_text(
        yaml.safe_dump_all([configmap(name, None), configmap(name, "default")])
    )
    refused_everywhere(target, apps, f"ConfigMap default/{name} is defined more than once")


@pytest.mark.parametrize("where", ["a-directory", "under-a-file", "read-only"])
def test_an_unwritable_metrics_file_is_found_before_the_run(tmp_path: Path, where: str) -> None:
    (tmp_path / "a-directory").mkdir()
    (tmp_path / "a-file").write_text("")
    path = {
        "a-directory": tmp_path / "a-directory",
        "under-a-file": tmp_path / "a-file" / "metrics.prom",
        "read-only": Path("/proc/reconcile-metrics.prom"),
    }[where]
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (inputs / "cm.yaml").write_text(yaml.safe_dump(configmap("a", "default")))
    out = tmp_path / "out"
    done = reconcile(
        "--local",
        str(inputs),
        "--metrics-file",
        str(path),
        "--output-dir",
        str(out),
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr
    assert f"--metrics-file {path}" in done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists(), "the run went ahead"


@pytest.mark.parametrize("relation", ["same", "inside", "contains"])
def test_an_output_dir_overlapping_the_manifests_is_refused(tmp_path: Path, relation: str) -> None:
    apps = tmp_path / "apps"
    apps.mkdir()
    (apps / "cm.yaml").write_text(yaml.safe_dump(configmap("a", "default")))
    state = tmp_path / "state"
    state.mkdir()
    (state / "ns.yaml").write_text(
        yaml.safe_dump({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}})
    )
    out = {"same": apps, "inside": apps / "out", "contains": tmp_path}[relation]
    before = sorted(p.name for p in apps.rglob("*"))
    done = reconcile(
        "--local", str(state), "--manifests", str(apps), "--output-dir", str(out), cwd=tmp_path
    )
    assert done.returncode == 1, done.stderr
    assert f"--output-dir {out}" in done.stderr and "input" in done.stderr
    assert sorted(p.name for p in apps.rglob("*")) == before


ESCAPES = "\x1b]0;owned\x07\x1b[2J\x1b[31mred\rover\u202egnp.exe"


def test_terminal_escapes_in_a_commit_subject_are_shown_not_obeyed(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "apps").mkdir(parents=True)
    (repo / "apps" / "cm.yaml").write_text(yaml.safe_dump(configmap("a", "default")))

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
            check=True,
            capture_output=True,
        )

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-qm", f"subject {ESCAPES}")
    for report in ("text", "markdown"):
        done = reconcile(
            "--git",
            f"file://{repo}",
            "--git-cache",
            str(tmp_path / "cache"),
            "--local",
            "apps",
            "--report-format",
            report,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        for where, text in (("report", done.stdout), ("log", done.stderr)):
            assert "subject " in text, where
            for control in ("\x1b", "\x07", "\r", "\u202e"):
                assert control not in text, f"{control!r} reached the {where} raw"
        assert "owned" in done.stdout
        if report == "text":
            assert "\\x1b]0;owned\\x07" in done.stdout


LIST_FILES = {
    "list": "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: "
    "{name: l1}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: l2}}\n",
    "typed-list": "apiVersion: v1\nkind: ConfigMapList\nitems:\n- {apiVersion: v1, kind: "
    "ConfigMap, metadata: {name: t1}}\n",
    "scalar-second": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s1}\n---\n# empty\n"
    "---\njust words\n",
    "item-not-an-object": "apiVersion: v1\nkind: ConfigMapList\nitems:\n- {apiVersion: v1, "
    "kind: ConfigMap, metadata: {name: i1}}\n- 42\n",
    "items-not-a-list": "apiVersion: v1\nkind: List\nitems: {a: b}\n",
}


@pytest.mark.parametrize("variant", LIST_FILES)
def test_local_and_manifests_read_a_file_alike(tmp_path: Path, variant: str) -> None:
    """The same file gives the same verdict, naming the same document, through --local and
    --manifests; List and typed lists stand for their items, as kubectl reads them."""
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    (inputs / "x.yaml").write_text(LIST_FILES[variant])
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "ns.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: e}\n")
    outputs = {}
    for option, args in (
        ("--local", ["--local", str(inputs)]),
        ("--manifests", ["--local", str(empty), "--manifests", str(inputs)]),
    ):
        out = tmp_path / f"out{option}"
        done = reconcile(*args, "--output-dir", str(out), cwd=tmp_path)
        names = sorted(p.stem for p in (out / "default" / "configmaps").glob("*.yaml"))
        problem = [line for line in done.stderr.splitlines() if "x.yaml (document" in line]
        outputs[option] = (done.returncode, [n for n in names if n != "reconcile"], problem)
    (local_code, local_names, local_problem), (code, names, problem) = outputs.values()
    assert local_code == code, outputs
    assert local_names == names, outputs
    if code == 0:
        assert names, outputs
    else:
        assert local_problem and problem, outputs
        where = local_problem[0].split("x.yaml (document", 1)[1].split(")", 1)[0]
        assert f"x.yaml (document{where})" in problem[0], outputs

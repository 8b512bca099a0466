"""The one YAML reader: alias bombs and recursive aliases refused quickly with bounded memory,
ordinary anchors accepted, timestamps kept as strings, through both readers (manifests and
controller files) and the real command."""

from __future__ import annotations

import itertools
import os
import subprocess
import threading
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from reconcile.cluster.memory import MemoryCluster
from reconcile.files.seed import ManifestError, load_manifests
from reconcile.objects.yamltext import MAX_EXPANDED_VALUES, YamlError, load_documents
from reconcile.runner.sources import yaml_documents
from tests.support.cli import measured_command
from tests.support.examples import EXAMPLES

MIB = 1024 * 1024


def billion_laughs(levels: int = 9, width: int = 9) -> str:
    """`a: &a [x, x, ...]`, `b: &b [*a, *a, ...]`, ...: a few hundred bytes, width**levels
    values once expanded."""
    names = "abcdefghijklmnopqrstuvwxyz"
    lines = [f"a: &a [{', '.join(['lol'] * width)}]"]
    for previous, name in itertools.pairwise(names[:levels]):
        lines.append(f"{name}: &{name} [{', '.join([f'*{previous}'] * width)}]")
    return "\n".join(lines) + "\n"


def merge_bomb(levels: int = 40) -> str:
    """Merge keys double each level; PyYAML expands them while constructing."""
    lines = ["m0: &m0 {x: 1, y: 2}"]
    lines += [f"m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}], k{i}: 1}}" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def measured(load: Callable[[], Any]) -> tuple[BaseException | None, float, int]:
    """(what `load` raised, seconds, peak bytes traced)."""
    tracemalloc.start()
    started = time.monotonic()
    raised: BaseException | None = None
    try:
        load()
    except Exception as exc:
        raised = exc
    seconds = time.monotonic() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return raised, seconds, peak


@pytest.mark.parametrize("bomb", [billion_laughs(), merge_bomb()], ids=["aliases", "merge keys"])
def test_an_alias_bomb_is_refused_quickly_with_bounded_memory(bomb: str) -> None:
    assert len(bomb) < 1500
    raised, seconds, peak = measured(lambda: load_documents(bomb, "bomb.yaml"))
    assert isinstance(raised, YamlError) and isinstance(raised, ValueError)
    assert str(raised) == (
        f"bomb.yaml: document 1: expands to more than {MAX_EXPANDED_VALUES} values "
        "through YAML aliases"
    )
    assert seconds < 2
    assert peak < 100 * MIB


def test_the_bomb_is_found_in_the_document_that_holds_it() -> None:
    text = "kind: ConfigMap\n---\n" + billion_laughs()
    with pytest.raises(YamlError, match=r"^x\.yaml: document 2: expands"):
        load_documents(text, "x.yaml")


def test_expansion_counts_every_value_each_time_an_alias_reaches_it() -> None:
    def shared(copies: int) -> str:
        return f"a: &a [{', '.join(['1'] * 999)}]\nb: [{', '.join(['*a'] * copies)}]\n"

    # the mapping, its two keys, `a` (1 + 999 values) and `b` (1 + copies * 1000)
    under = (MAX_EXPANDED_VALUES - 1004) // 1000
    assert len(load_documents(shared(under), "x")[0]["b"]) == under
    with pytest.raises(YamlError, match="expands to more than"):
        load_documents(shared(under + 1), "x")


@pytest.mark.parametrize(
    "text",
    ["a: &a [1, *a]\n", "a: &a {self: *a}\n", "a: &a [{deeper: [*a]}]\n"],
    ids=["list", "mapping", "nested"],
)
def test_a_recursive_alias_is_refused(text: str) -> None:
    raised, seconds, _ = measured(lambda: load_documents(text, "loop.yaml"))
    assert isinstance(raised, YamlError)
    assert str(raised).startswith("loop.yaml: document 1: ")
    assert "recursive alias" in str(raised)
    assert seconds < 1


def test_ordinary_anchors_and_aliases_are_accepted() -> None:
    text = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: &labels {app: web, tier: front}
spec:
  selector: {matchLabels: *labels}
  template:
    metadata: {labels: *labels}
    spec:
      containers:
        - &container
          name: web
          image: nginx
          env: &env [{name: A, value: "1"}, {name: B, value: "2"}]
        - <<: *container
          name: sidecar
          env: *env
---
apiVersion: v1
kind: ConfigMap
metadata: {name: empty}
---
"""
    deployment, config_map, empty = load_documents(text, "web.yaml")
    spec = deployment["spec"]
    assert spec["selector"]["matchLabels"] == {"app": "web", "tier": "front"}
    assert spec["template"]["metadata"]["labels"] == deployment["metadata"]["labels"]
    sidecar = spec["template"]["spec"]["containers"][1]
    assert sidecar == {"name": "sidecar", "image": "nginx", "env": sidecar["env"]}
    assert sidecar["env"][1] == {"name": "B", "value": "2"}
    assert config_map["kind"] == "ConfigMap"
    assert empty is None


TIMESTAMPS = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: release
  annotations: {released: 2024-01-01}
data:
  RELEASE: 2024-01-01
  STAMP: 2001-12-14t21:59:43.10-05:00
  PLAIN: 2001-12-14 21:59:43.10 -5
"""


def test_timestamps_and_dates_stay_strings() -> None:
    (doc,) = load_documents(TIMESTAMPS, "release.yaml")
    assert doc["data"] == {
        "RELEASE": "2024-01-01",
        "STAMP": "2001-12-14t21:59:43.10-05:00",
        "PLAIN": "2001-12-14 21:59:43.10 -5",
    }
    assert doc["metadata"]["annotations"] == {"released": "2024-01-01"}


def test_both_readers_keep_timestamps_as_strings(tmp_path: Path) -> None:
    (tmp_path / "release.yaml").write_text(TIMESTAMPS)
    cluster = MemoryCluster()
    (loaded,) = load_manifests(cluster, tmp_path)
    assert loaded["data"]["RELEASE"] == "2024-01-01"
    assert loaded["metadata"]["annotations"] == {"released": "2024-01-01"}
    ((_, _, obj),) = yaml_documents(tmp_path)
    assert obj["data"]["STAMP"] == "2001-12-14t21:59:43.10-05:00"
    assert obj["metadata"]["annotations"] == {"released": "2024-01-01"}


def test_both_readers_refuse_the_bomb_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "bomb.yaml").write_text(billion_laughs())
    with pytest.raises(ManifestError) as error:
        load_manifests(MemoryCluster(), tmp_path)
    assert error.value.failures == [
        f"bomb.yaml: cannot be read: document 1: expands to more than {MAX_EXPANDED_VALUES} "
        "values through YAML aliases"
    ]
    with pytest.raises(YamlError, match=r"bomb\.yaml: document 1: expands"):
        yaml_documents(tmp_path)


def test_invalid_yaml_names_the_source_and_line() -> None:
    with pytest.raises(YamlError) as error:
        load_documents("kind: ConfigMap\ndata: [unclosed\n", "broken.yaml")
    assert str(error.value).startswith("broken.yaml: invalid YAML: ")
    assert "line 3" in str(error.value) and "\n" not in str(error.value)
    assert "unicode string" not in str(error.value)


# -- through the command ----------------------------------------------------------------------


@dataclass
class Finished:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    peak_rss: int  # bytes: the program's own peak (VmHWM)


def run_child(*args: str | Path, cwd: Path) -> Finished:
    """The real command, with its own resource usage (killed after a minute)."""
    out, err, figure = cwd / "stdout.txt", cwd / "stderr.txt", cwd / "peak-kib"
    started = time.monotonic()
    with out.open("w") as stdout, err.open("w") as stderr:
        child = subprocess.Popen(
            measured_command(figure, *map(str, args)),
            stdout=stdout,
            stderr=stderr,
            cwd=cwd,
        )
    watchdog = threading.Timer(60, child.kill)
    watchdog.start()
    try:
        _, status, _ = os.wait4(child.pid, 0)
    finally:
        watchdog.cancel()
    return Finished(
        returncode=os.waitstatus_to_exitcode(status),
        stdout=out.read_text(),
        stderr=err.read_text(),
        seconds=time.monotonic() - started,
        peak_rss=int(figure.read_text()) * 1024 if figure.exists() else 0,
    )


@pytest.mark.parametrize("option", ["--local", "--controllers"])
def test_the_command_refuses_a_bomb_with_one_line_naming_the_file(
    tmp_path: Path, option: str
) -> None:
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    bomb = inputs / "bomb.yaml"
    bomb.write_text(billion_laughs())
    if option == "--local":
        args: tuple[str | Path, ...] = ("--local", inputs)
    else:
        args = ("--local", EXAMPLES / "hello-world", "--controllers", bomb)
    done = run_child(*args, "--dry-run", cwd=tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "Traceback" not in output
    assert [
        line
        for line in done.stderr.splitlines()
        if "bomb.yaml" in line and "expands to more than" in line
    ], done.stderr
    assert done.seconds < 30
    assert done.peak_rss < 400 * MIB, done.peak_rss

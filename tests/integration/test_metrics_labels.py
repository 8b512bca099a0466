"""Metrics as Prometheus reads them: each hook's `controller_type` is its controller's kind, a
shard's metrics are its own (a `shard` label in the text file, a `shard` grouping key on the
Pushgateway, so two shards never overwrite each other), and no `_created` series."""

from __future__ import annotations

import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from tests.support.cli import reconcile
from tests.support.examples import EXAMPLES

# one controller of each kind, with command hooks, in the in-process cluster
KINDS = {
    "hello-controller": ("hello-world", "CompositeController"),
    "bucket-quota": ("bucket-quota", "DecoratorController"),
    "configmap-transform": ("configmap-transform", "MapController"),
}


def local_args() -> list[str]:
    return [arg for example, _ in KINDS.values() for arg in ("--local", str(EXAMPLES / example))]


def hook_types(text: str) -> dict[str, set[str]]:
    """controller_name -> the controller_type labels of its hook samples."""
    out: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if "controller_type" in sample.labels:
                name = sample.labels["controller_name"]
                out.setdefault(name, set()).add(sample.labels["controller_type"])
    return out


def sample_names(text: str) -> set[str]:
    return {s.name for f in text_string_to_metric_families(text) for s in f.samples}


def test_every_kind_is_labelled_as_itself(tmp_path: Path) -> None:
    metrics = tmp_path / "reconcile.prom"
    done = reconcile(*local_args(), "--metrics-file", str(metrics), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    text = metrics.read_text()
    types = hook_types(text)
    for controller, (_, kind) in KINDS.items():
        assert types.get(controller) == {kind}, (controller, types)
    assert not [n for n in sample_names(text) if n.endswith("_created")]
    assert "shard" not in text  # an unsharded run's series are as they were


def test_two_shards_keep_their_own_metrics(tmp_path: Path, pushgateway: str) -> None:
    texts = {}
    for index in (0, 1):
        metrics = tmp_path / f"shard-{index}.prom"
        done = reconcile(
            *local_args(),
            "--shard",
            f"{index}/2",
            "--metrics-file",
            str(metrics),
            "--metrics-pushgateway",
            pushgateway,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        texts[index] = metrics.read_text()
    for index, text in texts.items():
        shards = {
            s.labels.get("shard") for f in text_string_to_metric_families(text) for s in f.samples
        }
        assert shards == {f"{index}/2"}
    # both files on one node: the textfile collector sees no duplicate series
    merged = [
        (s.name, tuple(sorted(s.labels.items())))
        for text in texts.values()
        for f in text_string_to_metric_families(text)
        for s in f.samples
    ]
    assert len(merged) == len(set(merged))

    gateway = urllib.request.urlopen(f"{pushgateway}/metrics", timeout=5).read().decode()
    exit_codes = {
        s.labels.get("shard"): s.value
        for f in text_string_to_metric_families(gateway)
        for s in f.samples
        if s.name == "reconcile_run_exit_code"
    }
    assert exit_codes == {"0/2": 0.0, "1/2": 0.0}  # two groups, neither overwritten
    successes = [
        str(s.labels.get("shard"))
        for f in text_string_to_metric_families(gateway)
        for s in f.samples
        if s.name == "reconcile_last_success_timestamp_seconds"
    ]
    assert sorted(successes) == ["0/2", "1/2"]
    assert not [n for n in sample_names(gateway) if n.endswith("_created")]

"""The report's spool (reconcile.report.spool): once a parent is done, its actions' diffs wait
on disk and the actions keep their objects' identities only; every report reads the same."""

from __future__ import annotations

import copy
import logging
import os
import zlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from reconcile.report import ReportFormat, render
from reconcile.report.diff import action_diff
from reconcile.report.spool import (
    BATCH,
    PARTS_KEPT,
    DiffSpool,
    ForgetContent,
    SpooledDiff,
    identity_only,
    without_content,
)
from reconcile.results import ActionResult, RunResult, StowedList
from tests.unit.test_report import (
    SECRET_NEEDLES,
    configmap_update,
    empty_run,
    pod_create,
    sample,
    secret_update,
    service_delete,
    two_pass_run,
)

RUNS = {
    "dry run": sample,
    "applied": lambda: sample(dry_run=False),
    "two passes": two_pass_run,
    "nothing to do": empty_run,
}
FORMATS: list[dict[str, Any]] = [
    {"fmt": ReportFormat.JSON},
    {"fmt": ReportFormat.TEXT},
    {"fmt": ReportFormat.TEXT, "verbose": True},
    {"fmt": ReportFormat.TEXT, "color": True},
    {"fmt": ReportFormat.MARKDOWN},
]


def stow_all(result: RunResult, spool: DiffSpool) -> None:
    for pass_ in result.passes:
        for parent in pass_.parents():
            spool.stow(parent)


@pytest.mark.parametrize("run", RUNS)
def test_a_stowed_run_reports_the_same_bytes(run: str) -> None:
    whole = {str(options): render(RUNS[run](), **options) for options in FORMATS}
    stowed = RUNS[run]()
    with DiffSpool() as spool:
        stow_all(stowed, spool)
        for options in FORMATS:
            assert render(stowed, **options) == whole[str(options)]


def test_stowed_actions_keep_only_their_objects_identities() -> None:
    result = sample(dry_run=False)
    parent = result.passes[0].parents()[0]
    originals = [a.action for a in parent.actions]
    with DiffSpool() as spool:
        spool.stow(parent)
        assert spool.size > 0
        # stowed once: a second stow leaves them as they are
        size = spool.size
        spool.stow(parent)
        assert spool.size == size
        for stowed, original in zip(parent.actions, originals, strict=True):
            assert stowed.stowed is not None
            assert stowed.stowed.load() == action_diff(original)
            action = stowed.action
            assert (action.kind, action.resource, action.reason) == (
                original.kind,
                original.resource,
                original.reason,
            )
            assert action.describe() == original.describe()
            assert (action.name, action.namespace, action.uid) == (
                original.name,
                original.namespace,
                original.uid,
            )
            assert action.target == identity_only(original.target)
            assert (action.before, action.after, action.apply_config) == (None, None, None)


def test_identity_only() -> None:
    update = configmap_update()
    assert identity_only(update.before) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "frontend-config",
            "namespace": "default",
            "uid": "uid-frontend-config",
        },
    }
    assert identity_only(None) is None
    assert identity_only({"kind": "Thing"}) == {"kind": "Thing"}


def test_without_content_names_the_same_object() -> None:
    for original in (configmap_update(), pod_create(), service_delete(), secret_update()):
        slim = without_content(original)
        assert slim.target == identity_only(original.target)
        assert (slim.name, slim.namespace, slim.uid) == (
            original.name,
            original.namespace,
            original.uid,
        )
        assert slim.describe() == original.describe()
        assert (slim.kind, slim.resource, slim.reason, slim.group) == (
            original.kind,
            original.resource,
            original.reason,
            original.group,
        )
        assert (slim.before, slim.after, slim.apply_config) == (None, None, None)


def spooled(spool: DiffSpool) -> bytes:
    """Everything in the spool's file, decompressed (its records one after the other)."""
    file = spool._file  # the file has no name to open it by
    assert file is not None
    file.flush()
    data, out = os.pread(file.fileno(), spool.size, 0), b""
    while data:
        record = zlib.decompressobj()
        out += record.decompress(data)
        data = record.unused_data
    return out


def test_the_spool_holds_no_secret_value(tmp_path: Path) -> None:
    """What is on disk is the redacted diff, never the Secret's values (parked results hold
    only the objects' identities)."""
    result = sample(dry_run=False)
    with DiffSpool(str(tmp_path)) as spool:
        stow_all(result, spool)
        spool.park(result.passes[0].controllers)
        written = spooled(spool)
        assert b"<redacted" in written
        for needle in SECRET_NEEDLES:
            assert needle.encode() not in written
        assert list(tmp_path.iterdir()) == []  # the file has no name


def test_a_spool_that_cannot_be_written_keeps_the_actions_whole(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    whole = render(sample(dry_run=False), ReportFormat.JSON)
    result = sample(dry_run=False)
    with caplog.at_level(logging.WARNING), DiffSpool(str(tmp_path / "missing")) as spool:
        stow_all(result, spool)
        stow_all(result, spool)
        for parent in result.passes[0].parents():
            assert all(a.stowed is None for a in parent.actions)
        assert render(result, ReportFormat.JSON) == whole
    warnings = [r for r in caplog.records if "temporary file" in r.getMessage()]
    assert len(warnings) == 1  # said once


def test_a_closed_spool_is_not_read() -> None:
    result = sample(dry_run=False)
    with DiffSpool() as spool:
        stow_all(result, spool)
    with pytest.raises(ValueError, match="closed"):
        render(result, ReportFormat.JSON)


def test_a_run_without_report_keeps_no_diff() -> None:
    result = sample(dry_run=False)
    parent = result.passes[0].parents()[0]
    names = [a.action.describe() for a in parent.actions]
    ForgetContent().stow(parent)
    assert [a.action.describe() for a in parent.actions] == names
    assert all(a.action.after is None and a.action.before is None for a in parent.actions)
    stowed = parent.actions[0].stowed
    assert stowed is not None
    with pytest.raises(LookupError):
        stowed.load()


def test_secret_actions_are_stowed_redacted() -> None:
    secret = secret_update()
    result = sample(dry_run=False)
    parent = result.passes[0].parents()[0]
    with DiffSpool() as spool:
        spool.stow(parent)
        stowed = next(a for a in parent.actions if a.action.resource.kind == "Secret")
        assert stowed.stowed is not None
        assert stowed.stowed.load() == action_diff(secret)


@pytest.mark.parametrize("run", RUNS)
def test_parked_passes_come_back_as_they_were(run: str) -> None:
    whole = {str(options): render(RUNS[run](), **options) for options in FORMATS}
    result = RUNS[run]()
    with DiffSpool() as spool:
        for pass_ in result.passes:
            for parent in pass_.parents():
                spool.stow(parent)
            spool.park(pass_.controllers)
            assert pass_.parents() == []
        spool.restore()
        for options in FORMATS:
            assert render(result, **options) == whole[str(options)]
        spool.restore()  # nothing parked: nothing changes
        for options in FORMATS:
            assert render(result, **options) == whole[str(options)]


def test_a_parent_with_many_actions_is_read_back_in_batches() -> None:
    result = sample(dry_run=False)
    parent = result.passes[0].parents()[0]
    parent.actions = [
        ActionResult(replace(pod_create(), after=pod(i)), applied=True)
        for i in range(2 * BATCH + 3)
    ]
    expected = [action_diff(a.action) for a in parent.actions]
    with DiffSpool() as spool:
        spool.stow(parent)
        batches = {a.stowed.offset for a in parent.actions if isinstance(a.stowed, SpooledDiff)}
        assert len(batches) == 3
        # in any order, each diff is its own
        for i in reversed(range(len(expected))):
            stowed = parent.actions[i].stowed
            assert stowed is not None
            assert stowed.load() == expected[i]


def pod(index: int) -> dict[str, Any]:
    obj = copy.deepcopy(pod_create().after)
    assert obj is not None
    obj["metadata"]["name"] = f"frontend-{index}"
    return obj


def test_a_stowed_parent_keeps_its_counts_and_reads_its_actions_back_on_each_use() -> None:
    result = sample(dry_run=False)
    parent = result.passes[0].parents()[0]
    parent.actions[0].transient = True
    parent.actions[0].error = "the API server did not answer"
    counts = (parent.writes, parent.pending, parent.first_transient)
    hooks, names = list(parent.hooks), [a.action.describe() for a in parent.actions]
    assert counts[2] == f"{names[0]}: the API server did not answer"
    with DiffSpool() as spool:
        spool.stow(parent)
        assert isinstance(parent.actions, StowedList) and isinstance(parent.hooks, StowedList)
        assert parent.stowed is not None
        assert list.__len__(parent.actions) == 0  # nothing held
        assert (parent.writes, parent.pending, parent.first_transient) == counts
        assert [a.action.describe() for a in parent.actions] == names
        assert parent.hooks == hooks and len(parent.hooks) == len(hooks) and parent.hooks[0]
        with pytest.raises(TypeError):
            parent.actions.append(parent.actions[0])
        size = spool.size
        spool.stow(parent)  # once
        assert spool.size == size
        spool.park(result.passes[0].controllers)  # parked as it is: still stowed
        assert result.passes[0].parents() == []
        spool.restore()
        parent = result.passes[0].parents()[0]
        assert parent.stowed is not None
        assert [a.action.describe() for a in parent.actions] == names
        assert parent.hooks == hooks
        assert (parent.writes, parent.pending, parent.first_transient) == counts


def test_the_last_few_parents_read_back_are_kept() -> None:
    result = sample(dry_run=False)
    (template,) = [p for p in result.passes[0].parents() if p.actions][:1]
    parents = [replace(template, parent=f"p{i}", actions=list(template.actions)) for i in range(12)]
    with DiffSpool() as spool:
        for parent in parents:
            spool.stow(parent)
        first = list(parents[0].actions)
        assert next(iter(parents[0].actions)) is first[0]  # kept: read once
        for parent in parents[1 : PARTS_KEPT + 1]:
            assert list(parent.actions) == first
        again = list(parents[0].actions)
        assert again == first and again[0] is not first[0]  # no longer kept: read again

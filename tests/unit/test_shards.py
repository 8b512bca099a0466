"""`--shard INDEX/COUNT`: parents split by a stable hash of their uid, every parent in exactly
one shard; the option's forms and errors."""

from __future__ import annotations

import uuid
from collections import Counter

import pytest

from reconcile.config import Shard, parse_shard
from reconcile.runner.lock import shard_lock_name


def parent(uid: str) -> dict[str, object]:
    return {"metadata": {"name": "p", "namespace": "ns", "uid": uid}}


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7])
def test_every_parent_is_in_exactly_one_shard_and_they_are_even(count: int) -> None:
    parents = [parent(str(uuid.UUID(int=n * 7919 + 1))) for n in range(2000)]
    owners = Counter(sum(1 for i in range(count) if Shard(i, count).owns(p)) for p in parents)
    assert owners == {1: len(parents)}
    sizes = [sum(1 for p in parents if Shard(i, count).owns(p)) for i in range(count)]
    assert min(sizes) > len(parents) / count * 0.85


def test_the_choice_is_stable_and_depends_on_the_uid_only() -> None:
    a = {"metadata": {"name": "x", "namespace": "a", "uid": "u-1"}}
    b = {"metadata": {"name": "y", "namespace": "b", "uid": "u-1"}}
    assert [Shard(i, 5).owns(a) for i in range(5)] == [Shard(i, 5).owns(b) for i in range(5)]
    no_uid = {"metadata": {"name": "new", "namespace": "ns"}}  # a dry run's new parent
    assert sum(Shard(i, 3).owns(no_uid) for i in range(3)) == 1


@pytest.mark.parametrize(
    ("text", "job_index", "expected"),
    [("0/4", None, Shard(0, 4)), ("3/4", None, Shard(3, 4)), ("auto/4", "2", Shard(2, 4))],
)
def test_forms(text: str, job_index: str | None, expected: Shard) -> None:
    assert parse_shard(text, job_index) == expected


@pytest.mark.parametrize(
    ("text", "job_index", "problem"),
    [
        ("4/4", None, "INDEX must be 0 to COUNT-1"),
        ("1", None, "is not INDEX/COUNT"),
        ("1/0", None, "COUNT must be a whole number >= 1"),
        ("x/2", None, "INDEX must be a whole number or auto"),
        ("auto/2", None, "JOB_COMPLETION_INDEX"),
        ("auto/2", "5", "INDEX must be 0 to COUNT-1"),
    ],
)
def test_errors(text: str, job_index: str | None, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_shard(text, job_index)


def test_each_shard_holds_its_own_lock() -> None:
    assert shard_lock_name("ops/reconcile", Shard()) == "ops/reconcile"
    assert shard_lock_name("ops/reconcile", Shard(2, 4)) == "ops/reconcile-2-of-4"


def test_the_cli_reads_the_job_index_and_names_the_option(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from typer.testing import CliRunner

    from reconcile.cli.run import app

    monkeypatch.delenv("JOB_COMPLETION_INDEX", raising=False)
    result = CliRunner().invoke(app, ["--shard", "auto/3", "--local", "examples/hello-world"])
    assert result.exit_code == 1
    assert "--shard" in result.output and "JOB_COMPLETION_INDEX" in result.output
    bad = CliRunner().invoke(app, ["--target-label-selector", "a in (", "--local", "x"])
    assert bad.exit_code == 1 and "--target-label-selector" in bad.output

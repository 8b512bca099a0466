"""`update_for`: the same decision as `apply` + `needs_update`, with unchanged children
recognised without the full merge (the steady pass's common case)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any, cast

import pytest

from reconcile.engine import apply as apply_module
from reconcile.engine.apply import apply, needs_update, prepare_desired, update_for
from reconcile.objects.meta import Obj
from tests.unit.test_apply import IDEMPOTENCE_CASES, desired_pod
from tests.unit.test_apply import as_stored as pod_as_stored
from tests.unit.test_apply_semantic import ZOO
from tests.unit.test_apply_semantic import as_stored as zoo_as_stored


def expected_update(observed: Obj, desired: Obj) -> Obj | None:
    merged = apply(observed, desired)
    return merged if needs_update(observed, merged) else None


def converged_cases() -> Iterator[Any]:
    for case in ZOO:
        written, stored = cast(tuple[Obj, Obj], case.values)
        yield pytest.param(zoo_as_stored(stored, written), written, id=f"zoo-{case.id}")
    yield pytest.param(pod_as_stored(prepare_desired(desired_pod())), desired_pod(), id="pod")
    for case in IDEMPOTENCE_CASES:
        observed, desired = cast(tuple[Obj, Obj], case.values)
        yield pytest.param(apply(observed, desired), desired, id=f"applied-{case.id}")


CONVERGED = list(converged_cases())


@pytest.mark.parametrize(("observed", "desired"), CONVERGED)
def test_a_converged_child_is_recognised_without_the_full_merge(
    observed: Obj, desired: Obj, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_full_merge(*_: Any) -> Obj:
        raise AssertionError("the full merge ran for an unchanged child")

    monkeypatch.setattr(apply_module, "apply", no_full_merge)
    before = copy.deepcopy((observed, desired))
    assert update_for(observed, desired) is None
    assert (observed, desired) == before


def variants(value: Any) -> Iterator[Any]:
    """Copies of `value` each changed in one place: every leaf changed (to another value and
    type), every map key removed, a key added to every map, every list item removed, and a
    list item appended."""
    if isinstance(value, dict):
        for key in value:
            without = {k: v for k, v in value.items() if k != key}
            yield without
            for changed in variants(value[key]):
                yield {**value, key: changed}
        yield {**value, "added": "x"}
    elif isinstance(value, list):
        for i in range(len(value)):
            yield value[:i] + value[i + 1 :]
            for changed in variants(value[i]):
                yield [*value[:i], changed, *value[i + 1 :]]
        yield [*value, {"name": "added"}]
    else:
        yield "changed" if value != "changed" else "other"
        yield None if value is not None else 0
        if isinstance(value, int | float) and not isinstance(value, bool):
            yield float(value) + 0.5


@pytest.mark.parametrize(("observed", "desired"), CONVERGED)
def test_every_change_to_either_side_gets_the_full_merge_s_answer(
    observed: Obj, desired: Obj
) -> None:
    for changed in variants(observed):
        if isinstance(changed, dict):
            assert update_for(changed, desired) == expected_update(changed, desired)
    for changed in variants(desired):
        if isinstance(changed, dict) and isinstance(changed.get("metadata"), dict):
            assert update_for(observed, changed) == expected_update(observed, changed)


def test_a_secret_with_string_data_takes_the_full_path() -> None:
    desired = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s"},
        "stringData": {"k": "v"},
    }
    observed = prepare_desired(desired)  # stored as data: {k: dg==}
    assert update_for(observed, desired) is None
    for changed in variants(observed):
        if isinstance(changed, dict):
            assert update_for(changed, desired) == expected_update(changed, desired)

"""Bounds on decoded input, pure: values counted before decoding, depth found iteratively."""

from __future__ import annotations

import json

import pytest

from reconcile.objects.bounds import (
    MAX_DEPTH,
    BoundError,
    depth_problem,
    depth_problem_in,
    loads_bounded,
    value_count_problem,
)


def nested(depth: int) -> object:
    """`depth` levels of objects and arrays, alternating, around a string."""
    value: object = "leaf"
    for level in range(depth):
        value = [value] if level % 2 else {"a": value}
    return value


def test_real_sized_answers_pass_the_value_count() -> None:
    children = [
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"}} for i in range(5000)
    ]
    assert value_count_problem(json.dumps({"children": children}).encode()) is None


def test_a_flood_of_empty_values_is_refused_before_decoding() -> None:
    for item in (b"{}", b"[]", b"0", b'"ab"', b"null"):
        data = b'{"children":[' + b",".join([item] * 600_000) + b"]}"
        problem = value_count_problem(data)
        assert problem is not None and "more than 500000 values" in problem


def test_marks_inside_strings_do_not_count() -> None:
    text = json.dumps({"data": {"csv": ",:[" * 400_000}}).encode()
    assert value_count_problem(text) is None


@pytest.mark.parametrize("depth", [0, 1, MAX_DEPTH - 1, MAX_DEPTH])
def test_depth_within_the_bound_passes(depth: int) -> None:
    assert depth_problem(nested(depth)) is None


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 600, 50_000])
def test_depth_beyond_the_bound_names_where(depth: int) -> None:
    problem = depth_problem({"status": nested(depth - 1)})
    assert problem is not None
    assert problem.startswith(f"nested deeper than {MAX_DEPTH} levels (at status")


def test_loads_bounded_refuses_what_json_would_recurse_on() -> None:
    with pytest.raises(BoundError, match="nested deeper than"):
        loads_bounded("[" * 100_000 + "]" * 100_000)
    with pytest.raises(BoundError, match="nested deeper than"):
        loads_bounded(json.dumps(nested(300)))
    assert loads_bounded('{"a": [1, 2]}') == {"a": [1, 2]}


def test_marks_inside_strings_do_not_count_however_the_strings_are_escaped() -> None:
    # 5 marks outside strings (3 colons, 2 commas); inside them, marks after escaped quotes
    # and backslashes
    text = b'{"a\\"[,":1,"b\\\\":"c,[:","d":"\\"x:"}'
    assert value_count_problem(text, limit=6) is None
    assert value_count_problem(text, limit=5) is not None


def test_millions_of_short_strings_are_counted_without_a_step_each() -> None:
    # 6 MiB of `"ab",`: 1.26 million values, refused; the same strings holding commas hold
    # fewer values than marks, and pass
    flood = b'{"children":[' + b",".join([b'"ab"'] * 1_260_000) + b"]}"
    assert value_count_problem(flood) is not None
    commas = b"[" + b",".join([b'"a,b,c"'] * 300_000) + b"]"
    assert value_count_problem(commas) is None


@pytest.mark.parametrize("depth", [0, 1, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 600])
def test_depth_from_the_text_agrees_with_the_walk(depth: int) -> None:
    """Text with few brackets is not walked; the answer is the walk's either way, for bytes
    and for text, brackets inside strings included."""
    value = {"status": nested(depth), "note": "[{" * (MAX_DEPTH + 1)}
    text = json.dumps(value)
    expected = depth_problem(value)
    assert depth_problem_in(text, value) == expected
    assert depth_problem_in(text.encode(), value) == expected
    shallow = {"status": nested(depth)}
    assert depth_problem_in(json.dumps(shallow), shallow) == depth_problem(shallow)

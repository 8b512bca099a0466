"""A hook's answer as its author can write it: in any encoding JSON's reader takes (UTF-8,
UTF-16, UTF-32), with lone surrogates, Secrets nested deep, broken JSON around a Secret, a
Secret's value on stderr. Every check reads the text the decoder reads, and no value of a
Secret the answer holds reaches a message, an excerpt or a log."""

from __future__ import annotations

import json
import logging
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from reconcile.hooks import HookCaller, HookError
from reconcile.hooks.parse import parse_object
from reconcile.objects.bounds import MAX_VALUES, value_count_problem
from reconcile.secret_values import scrub
from reconcile.specs.hooks import CommandProtocol, CommandSpec, HookSpec, WebhookSpec

HOOK = HookSpec("sync", "CompositeController c", webhook=WebhookSpec("http://hooks.example/"))
VALUE = "hunter2-secret-value"
ENCODINGS = ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32"]


def answer_with_a_secret(**extra: Any) -> dict[str, Any]:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}
    return {
        "children": [{**secret, "stringData": {"password": VALUE}}],
        "status": {"note": f"copied: {VALUE}"},
        **extra,
    }


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_secret_in_any_encoding_is_remembered(encoding: str) -> None:
    data = json.dumps(answer_with_a_secret()).encode(encoding)
    assert parse_object(HOOK, data, "response body")["status"]["note"].endswith(VALUE)
    assert VALUE not in scrub(f"the status said {VALUE}")


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("broken", ['{"trailing": 1', "not json {", '{"a": 1} and more'])
def test_broken_output_holding_a_secret_is_not_quoted(encoding: str, broken: str) -> None:
    text = json.dumps(answer_with_a_secret()) + broken
    with pytest.raises(HookError) as raised:
        parse_object(HOOK, text.encode(encoding), "stdout")
    assert raised.value.reason == "bad-json"
    assert VALUE not in str(raised.value)
    assert VALUE not in (raised.value.excerpt or "")


def test_broken_output_without_a_secret_is_quoted() -> None:
    with pytest.raises(HookError) as raised:
        parse_object(HOOK, b'{"status": {"ready": tru}}', "stdout")
    assert '{"status": {"ready": tru}}' in str(raised.value)


@pytest.mark.parametrize(
    "data",
    [
        b'{"status": {"note": "\xed\xa0\x80"}}',  # the UTF-8 bytes of a lone surrogate
        '{"status": {"note": "\\ud800"}}'.encode("utf-16"),  # its escape, in UTF-16
        '{"status": {"note": "\\udc00"}}'.encode("utf-32"),
    ],
)
def test_a_lone_surrogate_is_refused_however_it_is_written(data: bytes) -> None:
    with pytest.raises(HookError, match="lone UTF-16 surrogate") as raised:
        parse_object(HOOK, data, "response body")
    assert raised.value.reason == "bad-json"


def test_the_value_count_reads_the_text_not_its_encoding() -> None:
    """In UTF-16, `Ģ` (U+0122) is the bytes 22 01: a quote to a reader of bytes, which would
    then take the values after it for a string's content."""
    items = ",".join(["{}"] * (MAX_VALUES + 10))
    text = '{"status": {"a": "Ģ", "b": [' + items + '], "c": "x"}}'
    for encoding in ("utf-8", "utf-16-le", "utf-32"):
        with pytest.raises(HookError) as raised:
            parse_object(HOOK, text.encode(encoding), "response body")
        assert raised.value.reason == "too-large", encoding


def test_one_long_string_of_marks_is_counted_in_little_memory() -> None:
    data = b'{"a": "' + b"[" * (MAX_VALUES + 4_000_000) + b'"}'
    tracemalloc.start()
    try:
        assert value_count_problem(data) is None
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20 * 1024 * 1024  # the regular expression kept a state per character: 470 MB


def test_a_secret_nested_as_deep_as_an_answer_may_nest_is_remembered() -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "stringData": {"k": VALUE}}
    nested: Any = secret
    for _ in range(95):
        nested = {"a": nested}
    parse_object(HOOK, json.dumps({"status": nested}).encode(), "response body")
    assert VALUE not in scrub(f"a copy: {VALUE}")


def command_hook(code: str, directory: Path, protocol: CommandProtocol) -> HookSpec:
    """A command running `code`, which finds an answer holding a Secret (to print) as `answer`,
    read from a file in `directory` (so that the Secret's value is in no message naming the
    command), and the Secret's value as `value`."""
    answer = directory / "answer.json"
    answer.write_text(json.dumps(answer_with_a_secret()))
    prelude = (
        "import json, sys\n"
        f"answer = open({str(answer)!r}).read()\n"
        "value = json.loads(answer)['children'][0]['stringData']['password']\n"
    )
    argv = (sys.executable, "-c", prelude + code)
    return HookSpec("sync", "CompositeController c", command=CommandSpec(argv, protocol=protocol))


def debug_log_of(hook: HookSpec, caplog: pytest.LogCaptureFixture) -> str:
    """What one call of `hook` logs, at debug level."""
    with caplog.at_level(logging.DEBUG, logger="reconcile"), HookCaller() as caller:
        caller.call(hook, {"parent": {}})
    return caplog.text


@pytest.mark.parametrize("protocol", [CommandProtocol.EXEC, CommandProtocol.LINES])
def test_stderr_is_logged_once_the_answer_s_secrets_are_known(
    protocol: CommandProtocol, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    code = "sys.stderr.write('debugging: ' + value + '\\n'); sys.stderr.flush()\nprint(answer)\n"
    logged = debug_log_of(command_hook(code, tmp_path, protocol), caplog)
    assert "debugging:" in logged
    assert VALUE not in logged


def test_a_failed_command_s_utf16_answer_keeps_its_secret_out_of_stderr_s_tail(
    tmp_path: Path,
) -> None:
    code = (
        "sys.stdout.buffer.write(answer.encode('utf-16'))\n"
        "sys.stderr.write('failed with ' + value + '\\n')\n"
        "sys.exit(3)\n"
    )
    hook = command_hook(code, tmp_path, CommandProtocol.EXEC)
    with HookCaller() as caller, pytest.raises(HookError) as raised:
        caller.call(hook, {"parent": {}})
    assert raised.value.reason == "exit-status"
    assert "failed with" in str(raised.value)
    assert VALUE not in str(raised.value)
    assert VALUE not in (raised.value.excerpt or "")


def broken_secret_json() -> str:
    return json.dumps(answer_with_a_secret())[:-1] + ",}"


@pytest.mark.parametrize(
    "data",
    [
        b"\xef\xbb\xbf" + broken_secret_json().encode("utf-16-le"),  # a UTF-8 mark, UTF-16 text
        b"\xff\xfe" + broken_secret_json().encode("utf-8"),  # a UTF-16 mark, UTF-8 text
        b"{\x00" + broken_secret_json().encode("utf-8"),  # read as UTF-16 for its NUL
        broken_secret_json().encode("utf-32-be"),
    ],
)
def test_broken_output_in_a_disguising_encoding_is_not_quoted(data: bytes) -> None:
    with pytest.raises(HookError) as raised:
        parse_object(HOOK, data, "stdout")
    assert "not quoted: it may hold a Secret's value" in str(raised.value)
    assert raised.value.excerpt == ""


def test_a_known_value_copied_with_json_s_escapes_is_not_quoted() -> None:
    parse_object(HOOK, json.dumps(answer_with_a_secret()).encode(), "response body")
    slashed = VALUE.replace("-", "/")
    answer = json.dumps(answer_with_a_secret()).replace(VALUE, slashed)
    parse_object(HOOK, answer.encode(), "response body")
    for copy in ("\\u0068unter2-secret-value", slashed.replace("/", "\\/")):
        with pytest.raises(HookError) as raised:
            parse_object(HOOK, b'{"status": {"note": "%s"},}' % copy.encode(), "stdout")
        assert raised.value.excerpt == "" and "hunter2" not in str(raised.value), copy
    # and wherever else a value is quoted, `\/` is one of its forms
    assert "hunter2" not in scrub(f"stderr: {slashed.replace('/', chr(92) + '/')}")


def test_broken_output_with_escapes_and_no_secret_is_quoted_read() -> None:
    with pytest.raises(HookError) as raised:
        parse_object(HOOK, b'{"status": {"msg": "a \\u003c b"},}', "stdout")
    assert '{"status": {"msg": "a < b"},}' in str(raised.value)


def test_a_secret_on_an_extra_line_is_known_before_stderr_is_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    code = (
        "sys.stderr.write('extra: ' + value + '\\n'); sys.stderr.flush()\n"
        "print(json.dumps({'status': {}}) + '\\n' + answer, flush=True)\n"
    )
    logged = debug_log_of(command_hook(code, tmp_path, CommandProtocol.LINES), caplog)
    assert "extra:" in logged
    assert VALUE not in logged

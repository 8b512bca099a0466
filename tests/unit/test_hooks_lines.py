"""Long-lived command hooks (`protocol: lines`) with a real program: one request line in, one
response line out; a crash, a hang, a line that is not JSON or one over the size limit kills
the process group and the next call starts another; stderr is kept per call; the environment
is curated; nothing survives `close()` or the end of the budget."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from reconcile.budget import Budget, BudgetExhausted
from reconcile.hooks import HookCaller, HookError
from reconcile.hooks.errors import MAX_RESPONSE_BYTES
from reconcile.specs.errors import SpecError
from reconcile.specs.fields import Fields
from reconcile.specs.hooks import CommandProtocol, CommandSpec, HookSpec
from reconcile.specs.hooks_parse import parse_hook

# Answers by the request's "do": each line is one call; the process keeps a call counter.
PROGRAM = r"""
import json, os, subprocess, sys, time
calls = 0
for line in sys.stdin:
    calls += 1
    request = json.loads(line)
    do = request.get("do")
    if do == "crash":
        sys.stderr.write("boom on call %d\n" % calls); sys.stderr.flush(); os._exit(3)
    if do == "hang":
        time.sleep(60)
    if do == "garbage":
        print("this is not json", flush=True); continue
    if do == "huge":
        sys.stdout.write("x" * (%(limit)d + 10)); sys.stdout.flush(); time.sleep(60)
    if do == "note":
        sys.stderr.write("note for %s\n" % request["n"]); sys.stderr.flush()
    if do == "child":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        request["child"] = child.pid
    answer = {"pid": os.getpid(), "calls": calls, "got": request, "env": dict(os.environ)}
    print(json.dumps(answer), flush=True)
""".replace("%(limit)d", str(MAX_RESPONSE_BYTES))


@pytest.fixture
def program(tmp_path: Path) -> Path:
    path = tmp_path / "lines_hook.py"
    path.write_text(PROGRAM)
    return path


@pytest.fixture
def caller(tmp_path: Path) -> Iterator[HookCaller]:
    with HookCaller(base_dir=tmp_path, workers=2) as hook_caller:
        yield hook_caller


def lines_hook(program: Path, *, timeout: float = 5.0, **env: str) -> HookSpec:
    return HookSpec(
        name="sync",
        owner="CompositeController lines",
        command=CommandSpec(
            argv=(sys.executable, str(program)),
            timeout=timeout,
            env=tuple(env.items()),
            protocol=CommandProtocol.LINES,
        ),
    )


def call(caller: HookCaller, hook: HookSpec, **request: Any) -> dict[str, Any]:
    return caller.call(hook, request).response


def running(pid: int) -> bool:
    """Running, and not a zombie left for a parent that is gone."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError, ProcessLookupError):
        return False
    return state != "Z"


def gone(*pids: int) -> bool:
    """All of `pids` ended (a killed process takes a moment to die)."""
    deadline = time.monotonic() + 3
    while any(running(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_one_process_answers_call_after_call(caller: HookCaller, program: Path) -> None:
    hook = lines_hook(program)
    first = call(caller, hook, n=1, text="a\nb \u2028 é")
    second = call(caller, hook, n=2)
    assert first["got"] == {"n": 1, "text": "a\nb \u2028 é"}
    assert first["pid"] == second["pid"]
    assert (first["calls"], second["calls"]) == (1, 2)


def test_at_most_workers_processes_per_hook(caller: HookCaller, program: Path) -> None:
    hook = lines_hook(program)
    pids: set[int] = set()
    lock = threading.Lock()

    def work(n: int) -> None:
        pid = call(caller, hook, n=n)["pid"]
        with lock:
            pids.add(pid)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert 1 <= len(pids) <= 2


def test_a_crash_fails_the_call_and_the_next_call_works(caller: HookCaller, program: Path) -> None:
    hook = lines_hook(program)
    before = call(caller, hook, n=1)["pid"]
    with pytest.raises(HookError) as failed:
        call(caller, hook, do="crash")
    error = failed.value
    assert error.reason == "exit-status" and error.status == 3
    assert "CompositeController lines: sync hook" in str(error)
    assert "exited with status 3 without answering: boom on call 2" in str(error)
    after = call(caller, hook, n=3)
    assert after["pid"] != before and after["calls"] == 1
    assert gone(before)


def test_a_hang_is_killed_at_the_timeout_and_restarted(caller: HookCaller, program: Path) -> None:
    hook = lines_hook(program, timeout=0.5)
    hung = call(caller, hook, n=1)["pid"]
    started = time.monotonic()
    with pytest.raises(HookError) as failed:
        call(caller, hook, do="hang")
    assert time.monotonic() - started < 3
    assert failed.value.reason == "timeout"
    assert "did not answer within the 0.5s timeout (process group killed)" in str(failed.value)
    assert gone(hung)
    assert call(caller, hook, n=2)["calls"] == 1


def test_a_line_that_is_not_json_fails_the_call_and_restarts(
    caller: HookCaller, program: Path
) -> None:
    hook = lines_hook(program)
    before = call(caller, hook, n=1)["pid"]
    with pytest.raises(HookError) as failed:
        call(caller, hook, do="garbage")
    assert failed.value.reason == "bad-json"
    assert "response line is not valid JSON" in str(failed.value)
    assert "this is not json" in str(failed.value)
    assert gone(before)
    assert call(caller, hook, n=2)["calls"] == 1


def test_a_response_over_the_limit_fails_the_call_and_restarts(
    caller: HookCaller, program: Path
) -> None:
    hook = lines_hook(program, timeout=20)
    before = call(caller, hook, n=1)["pid"]
    with pytest.raises(HookError) as failed:
        call(caller, hook, do="huge")
    assert failed.value.reason == "too-large"
    assert "over the 16 MiB limit" in str(failed.value)
    assert gone(before)
    assert call(caller, hook, n=2)["calls"] == 1


def test_stderr_is_kept_per_call(
    caller: HookCaller, program: Path, caplog: pytest.LogCaptureFixture
) -> None:
    hook = lines_hook(program)
    with caplog.at_level("DEBUG", logger="reconcile.hooks"):
        call(caller, hook, do="note", n="first")
        caplog.clear()
        call(caller, hook, do="note", n="second")
    logged = caplog.text
    assert "note for second" in logged and "note for first" not in logged
    with pytest.raises(HookError) as failed:
        call(caller, hook, do="crash")
    assert "note for" not in failed.value.excerpt


def test_the_environment_is_curated(
    caller: HookCaller, program: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECONFIG", "/secret/kubeconfig")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_not_for_hooks")
    env = call(caller, lines_hook(program, GREETING="hello"), n=1)["env"]
    assert env["GREETING"] == "hello"
    assert "KUBECONFIG" not in env and "GITHUB_TOKEN" not in env
    assert set(env) - {"GREETING", "LC_CTYPE"} <= {
        "PATH",
        "HOME",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TMPDIR",
        *(name for name in env if name.startswith("LC_")),
    }


def test_close_kills_every_process_group(program: Path, tmp_path: Path) -> None:
    caller = HookCaller(base_dir=tmp_path, workers=2)
    answer = call(caller, lines_hook(program), do="child", n=1)
    pid, child = answer["pid"], answer["got"]["child"]
    assert running(pid) and running(child)
    caller.close()
    assert gone(pid, child)


def test_the_end_of_the_budget_kills_the_call_and_close_the_rest(
    program: Path, tmp_path: Path
) -> None:
    caller = HookCaller(base_dir=tmp_path, budget=Budget(1.5), workers=2)
    idle = call(caller, lines_hook(program, timeout=30), do="child", n=1)
    started = time.monotonic()
    with pytest.raises(BudgetExhausted) as stopped:
        call(caller, lines_hook(program, timeout=30), do="hang")
    assert "process group killed" in str(stopped.value)
    assert time.monotonic() - started < 3
    caller.stop_processes()
    assert gone(idle["pid"], idle["got"]["child"])


def test_the_run_ends_every_process(program: Path, tmp_path: Path) -> None:
    """After stop_processes, a later call starts a process again (a caller may serve runs)."""
    caller = HookCaller(base_dir=tmp_path)
    first = call(caller, lines_hook(program), n=1)["pid"]
    caller.stop_processes()
    assert gone(first)
    assert call(caller, lines_hook(program), n=2)["calls"] == 1
    caller.close()


def test_an_unknown_protocol_is_refused_naming_the_field() -> None:
    def parse(protocol: str) -> HookSpec:
        spec = {"command": {"argv": ["python3", "hooks.py"], "protocol": protocol}}
        fields = Fields("CompositeController x", "spec.hooks.sync", spec)
        return parse_hook(fields, "sync", "CompositeController x")

    with pytest.raises(SpecError) as refused:
        parse("stream")
    assert "spec.hooks.sync.command.protocol" in str(refused.value)
    assert "must be exec or lines, not 'stream'" in str(refused.value)
    exec_command, lines_command = parse("exec").command, parse("lines").command
    assert exec_command is not None and lines_command is not None
    assert exec_command == replace(lines_command, protocol=CommandProtocol.EXEC)
    parsed = parse("lines")
    assert parsed.command is not None and parsed.command.protocol is CommandProtocol.LINES


def test_a_request_line_is_ascii_and_whole(caller: HookCaller, program: Path) -> None:
    got = call(caller, lines_hook(program), text="line\nbreak\r\u2028\u0085")["got"]
    assert json.dumps(got) == json.dumps({"text": "line\nbreak\r\u2028\u0085"})
    assert os.linesep not in json.dumps(got, separators=(",", ":"))

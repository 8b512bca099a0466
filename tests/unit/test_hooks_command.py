"""Local command hooks with real programs: small Python scripts run with this interpreter and
`/bin/sh -c` strings. stdin, env, working directory, argv[0] resolution, exit statuses, output
errors and the process-group kill on timeout."""

from __future__ import annotations

import json
import logging
import os
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reconcile.hooks import HookCaller, HookError
from reconcile.specs.hooks import CommandSpec, HookSpec

PY = sys.executable
REQUEST: dict[str, Any] = {"controller": {"name": "hello"}, "parent": {"spec": {"n": 1}}}

ECHO = """
import json, sys
request = json.load(sys.stdin)
json.dump({"got": request}, sys.stdout)
"""


@pytest.fixture
def caller(tmp_path: Path) -> Iterator[HookCaller]:
    with HookCaller(base_dir=tmp_path) as hook_caller:
        yield hook_caller


def hook(*argv: str, timeout: float = 5.0, working_dir: str | None = None, **env: str) -> HookSpec:
    return HookSpec(
        name="sync",
        owner="CompositeController hello",
        command=CommandSpec(
            argv=argv, timeout=timeout, working_dir=working_dir, env=tuple(env.items())
        ),
    )


def sh(script: str, **kwargs: Any) -> HookSpec:
    return hook("/bin/sh", "-c", script, **kwargs)


def write(path: Path, code: str, *, executable: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if executable:
        code = f"#!{PY}\n{code}"
    path.write_text(code)
    if executable:
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def fail(caller: HookCaller, spec: HookSpec, request: dict[str, Any] = REQUEST) -> HookError:
    with pytest.raises(HookError) as caught:
        caller.call(spec, request)
    return caught.value


# -- success ---------------------------------------------------------------------------------


def test_stdin_receives_the_request_and_stdout_is_the_response(
    caller: HookCaller, tmp_path: Path
) -> None:
    script = write(tmp_path / "echo.py", ECHO)
    result = caller.call(hook(PY, str(script)), REQUEST)
    assert result.response == {"got": REQUEST}
    assert not result.cached and result.attempts == 1
    assert 0 < result.duration < 2


def test_large_requests_and_responses(caller: HookCaller, tmp_path: Path) -> None:
    script = write(tmp_path / "echo.py", ECHO)
    big = {"items": ["x" * 100] * 5000}  # well beyond a pipe buffer both ways
    assert caller.call(hook(PY, str(script)), big).response == {"got": big}


def test_a_command_that_ignores_stdin(caller: HookCaller) -> None:
    big = {"items": ["x" * 100] * 5000}
    assert caller.call(sh("echo '{\"ok\": true}'"), big).response == {"ok": True}


def test_env_is_a_small_base_plus_the_hooks_own(
    caller: HookCaller, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's environment is not inherited: only the base (PATH, HOME, locale, TZ,
    TMPDIR), what the hook declares, and what it names in inheritEnv."""
    monkeypatch.setenv("RECONCILE_TEST_PARENT", "from-parent")
    monkeypatch.setenv("LC_TIME", "C")
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    monkeypatch.setenv("NOT_ASKED", "x")
    script = write(
        tmp_path / "env.py",
        "import json, os\nprint(json.dumps(dict(os.environ)))",
    )
    spec = HookSpec(
        name="sync",
        owner="CompositeController hello",
        command=CommandSpec(
            argv=(PY, str(script)),
            env=(("FOO", "bar"), ("PATH", os.environ["PATH"])),
            inherit_env=("HTTPS_PROXY", "ABSENT"),
        ),
    )
    got = caller.call(spec, REQUEST).response
    assert got.pop("FOO") == "bar" and got.pop("HTTPS_PROXY") == "http://proxy:3128"
    assert got.pop("LC_TIME") == "C" and got.pop("TZ") == "UTC"
    assert "RECONCILE_TEST_PARENT" not in got and "NOT_ASKED" not in got and "ABSENT" not in got
    # what a Python interpreter adds on its own start is all that is left besides the base
    assert set(got) - {"PATH", "HOME", "LANG", "LANGUAGE", "TMPDIR", "LC_CTYPE"} == set(), got


CWD = "import json, os; print(json.dumps({'cwd': os.getcwd()}))"


def test_relative_working_dir_is_resolved_against_base_dir(
    caller: HookCaller, tmp_path: Path
) -> None:
    (tmp_path / "ctl" / "work").mkdir(parents=True)
    result = caller.call(hook(PY, "-c", CWD, working_dir="ctl/work"), REQUEST)
    assert Path(result.response["cwd"]) == (tmp_path / "ctl" / "work").resolve()


def test_absolute_working_dir(caller: HookCaller, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    result = caller.call(hook(PY, "-c", CWD, working_dir=str(other)), REQUEST)
    assert Path(result.response["cwd"]) == other.resolve()


def test_working_dir_defaults_to_base_dir(caller: HookCaller, tmp_path: Path) -> None:
    result = caller.call(hook(PY, "-c", CWD), REQUEST)
    assert Path(result.response["cwd"]) == tmp_path.resolve()


def test_working_dir_defaults_to_the_current_directory_without_base_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with HookCaller() as plain:
        result = plain.call(hook(PY, "-c", CWD), REQUEST)
    assert Path(result.response["cwd"]) == tmp_path.resolve()


def test_missing_working_dir_is_spawn(caller: HookCaller) -> None:
    error = fail(caller, hook(PY, "-c", CWD, working_dir="nowhere"))
    assert error.reason == "spawn" and "nowhere" in error.message


# -- argv[0] ---------------------------------------------------------------------------------


def test_relative_argv0_with_a_slash_is_relative_to_the_working_dir(
    caller: HookCaller, tmp_path: Path
) -> None:
    write(tmp_path / "ctl" / "bin" / "hook", ECHO, executable=True)
    result = caller.call(hook("bin/hook", working_dir="ctl"), REQUEST)
    assert result.response == {"got": REQUEST}
    assert caller.call(hook("./bin/hook", working_dir="ctl"), REQUEST).response == {"got": REQUEST}


def test_bare_argv0_is_looked_up_on_path(caller: HookCaller, tmp_path: Path) -> None:
    write(tmp_path / "tools" / "myhook", ECHO, executable=True)
    spec = hook("myhook", PATH=f"/nonexistent:{tmp_path / 'tools'}")
    assert caller.call(spec, REQUEST).response == {"got": REQUEST}


def test_relative_path_entries_are_relative_to_the_working_dir(
    caller: HookCaller, tmp_path: Path
) -> None:
    write(tmp_path / "ctl" / "tools" / "myhook", ECHO, executable=True)
    spec = hook("myhook", working_dir="ctl", PATH="tools")
    assert caller.call(spec, REQUEST).response == {"got": REQUEST}


def test_bare_argv0_is_not_looked_up_in_the_working_dir(caller: HookCaller, tmp_path: Path) -> None:
    write(tmp_path / "myhook", ECHO, executable=True)
    error = fail(caller, hook("myhook", PATH="/nonexistent"))
    assert error.reason == "spawn" and "not found on PATH" in error.message


@pytest.mark.parametrize(
    "argv0", ["reconcile-no-such-program", "./no-such-file", "/no/such/program"]
)
def test_not_found_is_spawn(caller: HookCaller, argv0: str) -> None:
    error = fail(caller, hook(argv0))
    assert (error.reason, error.status) == ("spawn", None)
    assert "CompositeController hello" in error.message and "sync" in error.message
    assert argv0 in error.message


def test_not_executable_is_spawn(caller: HookCaller, tmp_path: Path) -> None:
    write(tmp_path / "plain.py", ECHO)
    error = fail(caller, hook("./plain.py"))
    assert error.reason == "spawn" and "ermission denied" in error.message


def test_empty_argv_is_spawn(caller: HookCaller) -> None:
    assert fail(caller, hook()).reason == "spawn"


# -- failures --------------------------------------------------------------------------------


def test_non_zero_exit_carries_status_and_stderr_tail(caller: HookCaller) -> None:
    error = fail(caller, sh("echo first >&2; echo 'the real problem' >&2; exit 3"))
    assert (error.reason, error.status) == ("exit-status", 3)
    assert error.excerpt == "first\nthe real problem"
    assert "exited with status 3: the real problem" in error.message
    assert "/bin/sh -c" in error.message


def test_stderr_tail_is_at_most_1000_chars(caller: HookCaller) -> None:
    error = fail(
        caller, hook(PY, "-c", "import sys; sys.stderr.write('x' * 5000 + 'END'); exit(1)")
    )
    assert error.excerpt.endswith("xxxEND") and len(error.excerpt) <= 1000


def test_killed_by_a_signal(caller: HookCaller) -> None:
    error = fail(caller, sh("kill -TERM $$"))
    assert (error.reason, error.status) == ("exit-status", -15)
    assert "SIGTERM" in error.message


def test_stdout_that_is_not_json_is_bad_json(caller: HookCaller) -> None:
    error = fail(caller, sh("echo 'hello  there'; echo '{'"))
    assert (error.reason, error.status) == ("bad-json", None)
    assert error.excerpt == "hello there {"
    assert "stdout" in error.message


def test_empty_stdout_is_bad_json(caller: HookCaller) -> None:
    assert fail(caller, sh("true")).reason == "bad-json"


def test_stdout_json_non_object_is_not_an_object(caller: HookCaller) -> None:
    error = fail(caller, sh("echo '[1, 2]'"))
    assert error.reason == "not-an-object" and "JSON array" in error.message


def _group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes in process group `pgid`."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        state, pgrp = fields[0], int(fields[2])
        if pgrp == pgid and state != "Z":
            members.append(int(entry.name))
    return members


def _group_gone(pgid: int) -> bool:
    if Path("/proc/self/stat").exists():
        return not _group_members(pgid)
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


def test_timeout_kills_the_whole_process_group(caller: HookCaller, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    script = f"sleep 30 & echo $! > {pids}.tmp; echo $$ >> {pids}.tmp; mv {pids}.tmp {pids}; wait"
    started = time.monotonic()
    error = fail(caller, sh(script, timeout=0.3))
    assert time.monotonic() - started < 1.5
    assert (error.reason, error.status) == ("timeout", None)
    assert "0.3s" in error.message
    child, leader = (int(line) for line in pids.read_text().split())
    deadline = time.monotonic() + 1.0
    while not _group_gone(leader) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _group_gone(leader), f"left running: {_group_members(leader)} (sleep was {child})"


def test_timeout_with_a_descendant_holding_the_pipes(caller: HookCaller, tmp_path: Path) -> None:
    # The leader answers and exits, but a grandchild in its group keeps stdout open: still a
    # timeout, and the grandchild is killed with the group.
    pid_file = tmp_path / "pid"
    error = fail(caller, sh(f"sleep 30 & echo $! > {pid_file}; echo '{{}}'", timeout=0.3))
    assert error.reason == "timeout"
    sleeper = int(pid_file.read_text())
    deadline = time.monotonic() + 1.0
    while _alive(sleeper) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(sleeper)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


# -- logging and counting --------------------------------------------------------------------


def test_stderr_of_a_success_is_logged_at_debug_without_bodies(
    caller: HookCaller, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    script = write(
        tmp_path / "hook.py",
        "import json, sys\n"
        "request = json.load(sys.stdin)\n"
        "print('progress note', file=sys.stderr)\n"
        "json.dump(request['parent'], sys.stdout)\n",
    )
    secret = {"data": {"password": "hunter2"}}
    with caplog.at_level(logging.DEBUG, logger="reconcile.hooks"):
        result = caller.call(hook(PY, str(script)), {"parent": secret})
    assert result.response == secret
    notes = [r for r in caplog.records if "progress note" in r.getMessage()]
    assert notes and all(r.levelno == logging.DEBUG for r in notes)
    assert "hunter2" not in caplog.text


def test_nothing_is_logged_at_info_on_success(
    caller: HookCaller, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="reconcile.hooks"):
        caller.call(sh("echo '{}' ; echo noise >&2"), REQUEST)
    assert caplog.records == []


def test_calls_counts_every_call(caller: HookCaller) -> None:
    assert caller.calls == 0
    caller.call(sh("echo '{}'"), REQUEST)
    caller.call(sh("echo '{}'"), REQUEST)
    fail(caller, sh("exit 1"))
    fail(caller, hook("reconcile-no-such-program"))
    assert caller.calls == 4


def test_a_hook_without_transport_is_a_programming_error(caller: HookCaller) -> None:
    with pytest.raises(ValueError, match="neither"):
        caller.call(HookSpec(name="sync", owner="x"), REQUEST)


def test_hook_error_pickles(caller: HookCaller) -> None:
    import pickle

    error = fail(caller, sh("echo oops >&2; exit 2"))
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.reason, copy.status, copy.excerpt, copy.message, copy.hook) == (
        error.reason,
        error.status,
        error.excerpt,
        error.message,
        error.hook,
    )
    assert str(copy) == str(error)


def test_concurrent_calls(caller: HookCaller, tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    script = write(tmp_path / "echo.py", ECHO)
    spec = hook(PY, str(script))
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda n: caller.call(spec, {"n": n}), range(16)))
    assert [r.response for r in results] == [{"got": {"n": n}} for n in range(16)]
    assert caller.calls == 16
    assert json.dumps(results[0].response)

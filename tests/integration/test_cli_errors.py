"""Every error path we know through the real command: exit 1 (never 2, which means "changes
pending"), a one-line error naming the option or path, and never a traceback."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import reconcile
from tests.support.examples import EXAMPLES

HELLO = str(EXAMPLES / "hello-world")


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["--no-such-option"], "--no-such-option"),
        (["--report-format", "yaml"], "--report-format"),
        (["--log-level", "shout"], "--log-level"),
        (["--output-dir", "out", "--no-local"], "--output-dir"),
        (["--report-file", "pdf:x.pdf"], "--report-file"),
        (["--max-duration", "nan"], "--max-duration"),
        (["--max-duration", "inf"], "--max-duration"),
        (["--max-duration", "-5"], "--max-duration"),
        (["--max-duration", "0"], "--max-duration"),
        (["--max-duration", "10x"], "--max-duration"),
        (["--max-duration", "8761h"], "--max-duration"),
        (["--max-duration", "100000000h"], "--max-duration"),
        (["--max-duration", "1e12"], "--max-duration"),
        (["--poll-interval", "9000h"], "--poll-interval"),
        (["--request-timeout", "1e15"], "--request-timeout"),
        (["--poll-interval", "-1"], "--poll-interval"),
        (["--poll-interval", "nan"], "--poll-interval"),
        (["--request-timeout", "0"], "--request-timeout"),
        (["--request-timeout", "-1"], "--request-timeout"),
        (["--qps", "-1"], "--qps"),
        (["--qps", "nan"], "--qps"),
        (["--burst", "0"], "--burst"),
        (["--burst", "-3"], "--burst"),
        (["--workers", "0"], "--workers"),
        (["--kubernetes-version", "1.19"], "--kubernetes-version"),
        (["--kubernetes-version", "latest"], "--kubernetes-version"),
        (["--kubernetes-version", "1.37", "--no-local"], "--kubernetes-version"),
        (["--allowed-hook-hosts", "https://hooks.example.com"], "--allowed-hook-hosts"),
        (["--allowed-hook-hosts", "*"], "--allowed-hook-hosts"),
    ],
)
def test_usage_errors_exit_1(args: list[str], names: str, tmp_path: Path) -> None:
    local = [] if "--no-local" in args else ["--local", HELLO]
    args = [a for a in args if a != "--no-local"]
    done = reconcile(*local, *args, cwd=tmp_path)
    assert done.returncode == 1, (args, done.returncode, done.stderr)
    assert names in done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert not (tmp_path / "out").exists()


# fractions and milliseconds, long enough for the hook on a loaded machine
@pytest.mark.parametrize("value", ["90", "90s", "1m30s", "1h", "4.5", "4500ms", "8760h"])
def test_durations_read_as_kubernetes_users_write_them(value: str, tmp_path: Path) -> None:
    done = reconcile("--local", HELLO, "--dry-run", "--max-duration", value, cwd=tmp_path)
    assert done.returncode == 2, done.stderr  # changes pending: the run itself went fine


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A TCP port that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    try:
        yield server.getsockname()[1]
    finally:
        server.close()


def kubeconfig(server: str) -> str:
    return (
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters: [{{name: k, cluster: {{server: '{server}', "
        "insecure-skip-tls-verify: true}}]\n"
        "users: [{name: u, user: {token: abc}}]\n"
        "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
    )


def error_paths(tmp_path: Path, silent_port: int) -> dict[str, tuple[list[str], str]]:
    """name -> (arguments, a text the error must contain)."""
    (tmp_path / "garbage.yaml").write_text("{this is: [not, valid yaml")
    (tmp_path / "list.yaml").write_text("- just\n- a list\n")
    (tmp_path / "empty.yaml").write_text("")
    (tmp_path / "noclusters.yaml").write_text("apiVersion: v1\nkind: Config\ncurrent-context: x\n")
    (tmp_path / "silent.yaml").write_text(kubeconfig(f"https://127.0.0.1:{silent_port}"))
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "bad-local").mkdir()
    (tmp_path / "bad-local" / "broken.yaml").write_text("kind: [unclosed\n")
    missing = str(tmp_path / "missing")
    return {
        "kubeconfig missing": (["--kubeconfig", missing], missing),
        "KUBECONFIG missing": (["--kubeconfig", missing + ":" + missing + "2"], "missing"),
        "kubeconfig garbage": (["--kubeconfig", str(tmp_path / "garbage.yaml")], "garbage.yaml"),
        "kubeconfig a list": (["--kubeconfig", str(tmp_path / "list.yaml")], "list.yaml"),
        "kubeconfig empty": (["--kubeconfig", str(tmp_path / "empty.yaml")], "empty.yaml"),
        "kubeconfig no clusters": (
            ["--kubeconfig", str(tmp_path / "noclusters.yaml")],
            "noclusters.yaml",
        ),
        "kubeconfig a directory": (["--kubeconfig", str(tmp_path)], str(tmp_path)),
        "unknown context": (
            ["--kubeconfig", str(tmp_path / "silent.yaml"), "--context", "nope"],
            "nope",
        ),
        "server never answers": (
            ["--kubeconfig", str(tmp_path / "silent.yaml"), "--max-duration", "3"],
            "cluster",
        ),
        "report file in a file": (
            ["--local", HELLO, "--report-file", str(tmp_path / "a-file" / "r.json")],
            "a-file",
        ),
        "report file a directory": (
            ["--local", HELLO, "--report-file", str(tmp_path)],
            "directory",
        ),
        "output dir a file": (
            ["--local", HELLO, "--output-dir", str(tmp_path / "a-file")],
            "a-file",
        ),
        "local missing": (["--local", missing], "missing"),
        "local broken yaml": (["--local", str(tmp_path / "bad-local")], "broken.yaml"),
        "controllers missing": (["--local", HELLO, "--controllers", missing], "missing"),
        "controllers broken yaml": (
            ["--local", HELLO, "--controllers", str(tmp_path / "bad-local")],
            "broken.yaml",
        ),
        "controller not found": (["--local", HELLO, "--controller", "nobody"], "nobody"),
    }


@pytest.mark.long
def test_no_error_path_prints_a_traceback(tmp_path: Path, silent_port: int) -> None:
    failures = []
    for name, (args, expected) in error_paths(tmp_path, silent_port).items():
        done = reconcile(*args, cwd=tmp_path, timeout=60)
        output = done.stdout + done.stderr
        if done.returncode != 1 or "Traceback" in output or expected not in done.stderr:
            failures.append(f"{name}: exit {done.returncode}\n{output[-1500:]}")
    assert not failures, "\n\n".join(failures)


def test_options_come_from_the_environment_too(tmp_path: Path) -> None:
    """RECONCILE_<OPTION>, as a CronJob's ConfigMap sets them; a bad value is the same usage
    error as on the command line."""
    env = {"RECONCILE_LOCAL": HELLO, "RECONCILE_DRY_RUN": "true", "RECONCILE_REPORT_FORMAT": "json"}
    done = reconcile(cwd=tmp_path, env=env)
    assert done.returncode == 2, done.stderr  # the dry run found changes
    assert '"dryRun":true' in done.stdout
    bad = reconcile(cwd=tmp_path, env={**env, "RECONCILE_MAX_DURATION": "soon"})
    assert bad.returncode == 1 and "--max-duration" in bad.stderr
    shown = reconcile("--version", cwd=tmp_path, env={"RECONCILE_VERSION": "1.2.3"})
    assert shown.stdout.startswith("reconcile ")
    not_shown = reconcile(cwd=tmp_path, env={**env, "RECONCILE_SHOW_VERSION": "1"})
    assert not_shown.returncode == 2  # the version flag never comes from the environment


def test_repeatable_paths_from_the_environment_split_on_whitespace(tmp_path: Path) -> None:
    """`RECONCILE_LOCAL="a b"` is two paths, as the documentation says of every repeatable option;
    a colon is part of a path, not a separator."""
    extra = tmp_path / "with:colon"
    extra.mkdir()
    (extra / "second.yaml").write_text(
        "apiVersion: example.com/v1\nkind: HelloWorld\n"
        "metadata: {name: second-parent, namespace: hello}\nspec: {who: there}\n"
    )
    env = {
        "RECONCILE_LOCAL": f"{HELLO}  {extra}",
        "RECONCILE_DRY_RUN": "true",
        "RECONCILE_REPORT_FORMAT": "json",
    }
    done = reconcile(cwd=tmp_path, env=env)
    assert done.returncode == 2, done.stderr  # both read: the controller found both parents
    assert "your-name" in done.stdout and "second-parent" in done.stdout
    one_path = reconcile(cwd=tmp_path, env={**env, "RECONCILE_LOCAL": f"{HELLO}:{extra}"})
    assert one_path.returncode == 1 and f"{HELLO}:{extra}" in one_path.stderr

"""Git that runs nothing, through the real command: values that git would read as options or
transports that run commands are refused before git runs; the tree is read as committed
(`.gitattributes` cannot hide or rewrite a manifest); symbolic links out of the repository and
submodules under a path the run reads are errors naming them, elsewhere harmless; runs sharing
a cache all succeed; the checkout is inside the budget and the signal handling; a password in
an scp-like URL shows nowhere."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.cli import command_env, reconcile
from tests.support.gitrepo import git


def configmap(name: str, **data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": data or {"k": "v"},
    }


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    (path / "apps").mkdir(parents=True)
    (path / "apps" / "a.yaml").write_text(yaml.safe_dump(configmap("a")))
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "first")
    return path


def run_git(
    tmp_path: Path, url: str, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return reconcile(
        "--git", url, "--git-cache", str(tmp_path / "cache"), *extra, cwd=tmp_path, env=env
    )


def dumped(out: Path) -> dict[str, dict[str, Any]]:
    """The ConfigMaps an --output-dir holds, by name."""
    found = {}
    for path in (out / "default" / "configmaps").glob("*.yaml"):
        obj = yaml.safe_load(path.read_text())
        found[obj["metadata"]["name"]] = obj
    return found


# -- values that git would read as options, or that run commands --------------------------------


def hostile_values(marker: Path, repo: Path) -> list[tuple[str, list[str], str]]:
    """(--git, extra arguments, the option the error names)."""
    touch = f"touch {marker}"
    return [
        (f"--upload-pack={touch};", [], "--git"),
        ("-u" + touch, [], "--git"),
        (f"--config=core.sshCommand={touch}", [], "--git"),
        (f"ext::sh -c {touch.replace(' ', '% ')}", [], "--git"),
        (f"fd::0,1/{marker}", [], "--git"),
        (f"file://{repo}\n--upload-pack={touch}", [], "--git"),
        (f"file://{repo}", ["--git-ref", f"--upload-pack={touch}"], "--git-ref"),
        (f"file://{repo}", ["--git-ref", "main\n--upload-pack=x"], "--git-ref"),
        (f"file://{repo}", ["--git-ref", "main..other"], "--git-ref"),
        ("gopher://example.com/repo", [], "--git"),
    ]


def test_values_git_would_run_are_refused_before_git_runs(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    for url, extra, option in hostile_values(marker, repo):
        done = run_git(tmp_path, url, *extra, "--local", "apps")
        assert done.returncode == 1, (url, extra, done.stderr[-1500:])
        assert f"{option}" in done.stderr, (url, extra, done.stderr[-1500:])
        assert "Traceback" not in done.stderr
        assert not marker.exists(), f"{url!r} {extra} ran a command"


def test_inherited_git_variables_run_nothing(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    env = {
        "GIT_SSH_COMMAND": f"touch {marker}",
        "GIT_SSH": str(tmp_path / "evil-ssh"),
        "GIT_CONFIG_PARAMETERS": f"'core.sshCommand=touch {marker}'",
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "protocol.ext.allow",
        "GIT_CONFIG_VALUE_0": "always",
        "GIT_DIR": str(tmp_path / "elsewhere"),
    }
    (tmp_path / "evil-ssh").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (tmp_path / "evil-ssh").chmod(0o755)
    done = run_git(tmp_path, "ssh://127.0.0.1:1/team/repo.git", "--local", "apps", env=env)
    assert done.returncode == 1
    assert not marker.exists(), "an inherited GIT_* variable ran a command"
    works = run_git(tmp_path, f"file://{repo}", "--local", "apps", env=env)
    assert works.returncode == 0, works.stderr[-1500:]


def test_variables_gitpython_reads_neither_run_nor_redirect_anything(
    repo: Path, tmp_path: Path
) -> None:
    """GitPython runs GIT_PYTHON_GIT_EXECUTABLE when it is imported, and opens the repository
    GIT_COMMON_DIR / GIT_OBJECT_DIRECTORY name: a run reads its own cache whatever they say."""
    marker = tmp_path / "ran"
    evil = tmp_path / "evil-git"
    evil.write_text(f'#!/bin/sh\ntouch {marker}\nexec git "$@"\n')
    evil.chmod(0o755)
    other = tmp_path / "other"
    (other / "apps").mkdir(parents=True)
    (other / "apps" / "other.yaml").write_text(yaml.safe_dump(configmap("other")))
    git(other, "init", "-q", "-b", "main")
    git(other, "add", "-A")
    git(other, "commit", "-qm", "another repository")
    env = {
        "GIT_PYTHON_GIT_EXECUTABLE": str(evil),
        "GIT_PYTHON_REFRESH": "quiet",
        "GIT_PYTHON_TRACE": "full",
        "GIT_COMMON_DIR": str(other / ".git"),
        "GIT_OBJECT_DIRECTORY": str(other / ".git" / "objects"),
        "GIT_WORK_TREE": str(other),
    }
    out = tmp_path / "out"
    done = run_git(tmp_path, f"file://{repo}", "--local", "apps", "--output-dir", str(out), env=env)
    assert done.returncode == 0, done.stderr[-1500:]
    assert not marker.exists(), "GIT_PYTHON_GIT_EXECUTABLE was run"
    assert set(dumped(out)) == {"a"}, "another repository was read"
    assert "cmdline" not in done.stderr  # no GitPython trace


# -- the tree as committed ----------------------------------------------------------------------


def test_gitattributes_neither_hide_nor_rewrite_manifests(repo: Path, tmp_path: Path) -> None:
    (repo / "apps" / "hidden.yaml").write_text(yaml.safe_dump(configmap("hidden")))
    (repo / "apps" / "subst.yaml").write_text(
        yaml.safe_dump(configmap("subst", commit="$Format:%H$", ident="$Id$"))
    )
    (repo / ".gitattributes").write_text(
        "apps/hidden.yaml export-ignore\napps/subst.yaml export-subst ident\n*.yaml text eol=crlf\n"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "attributes")
    out = tmp_path / "out"
    done = run_git(tmp_path, f"file://{repo}", "--local", "apps", "--output-dir", str(out))
    assert done.returncode == 0, done.stderr[-1500:]
    found = dumped(out)
    assert {"a", "hidden", "subst"} <= set(found)
    assert found["subst"]["data"] == {"commit": "$Format:%H$", "ident": "$Id$"}


# -- symbolic links and submodules ---------------------------------------------------------------

LINKS = {
    "absolute-file": ("apps/passwd.yaml", "/etc/passwd"),
    "relative-out": ("apps/host.yaml", "../../../../../../etc/hostname"),
    "absolute-directory": ("apps/etc", "/etc"),
    "chain-out": ("apps/chain.yaml", "step.yaml"),
    "dangling": ("apps/gone.yaml", "nowhere.yaml"),
}


@pytest.mark.parametrize("variant", LINKS)
def test_a_link_out_of_the_repository_under_a_read_path_is_an_error_naming_it(
    repo: Path, tmp_path: Path, variant: str
) -> None:
    link, target = LINKS[variant]
    if variant == "chain-out":
        os.symlink("/etc/hostname", repo / "apps" / "step.yaml")
    os.symlink(target, repo / link)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", f"link {variant}")
    for option in ("--local", "--controllers", "--manifests"):
        extra = [option, "apps"] if option == "--local" else ["--local", "apps", option, "apps"]
        done = run_git(tmp_path, f"file://{repo}", *extra)
        assert done.returncode == 1, (option, done.stderr[-1500:])
        assert "symbolic link" in done.stderr and "not read" in done.stderr
        assert "Traceback" not in done.stdout + done.stderr
        report = done.stdout
        assert "Errors" in report or "error" in report


def test_links_elsewhere_are_harmless_and_links_inside_work(repo: Path, tmp_path: Path) -> None:
    (repo / "shared").mkdir()
    (repo / "shared" / "b.yaml").write_text(yaml.safe_dump(configmap("b")))
    os.symlink("../shared/b.yaml", repo / "apps" / "b.yaml")
    (repo / "docs").mkdir()
    os.symlink("/etc/passwd", repo / "docs" / "passwd")
    os.symlink("/etc", repo / "etc")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "links")
    out = tmp_path / "out"
    done = run_git(tmp_path, f"file://{repo}", "--local", "apps", "--output-dir", str(out))
    assert done.returncode == 0, done.stderr[-1500:]
    assert {"a", "b"} <= set(dumped(out))


def test_a_submodule_under_a_read_path_is_an_error_naming_it(repo: Path, tmp_path: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head},apps/vendor")
    git(repo, "commit", "-qm", "a submodule")
    done = run_git(tmp_path, f"file://{repo}", "--local", "apps/vendor")
    assert done.returncode == 1, done.stderr[-1500:]
    assert "apps/vendor in the repository is a git submodule" in done.stderr
    done = run_git(tmp_path, f"file://{repo}", "--local", "apps")
    assert done.returncode == 1 and "git submodule" in done.stderr


# -- a shared cache ------------------------------------------------------------------------------


@pytest.mark.parametrize("corrupt", [False, True], ids=["fresh", "corrupt-cache"])
def test_runs_sharing_a_cache_all_succeed(repo: Path, tmp_path: Path, corrupt: bool) -> None:
    cache = tmp_path / "cache"
    first = run_git(tmp_path, f"file://{repo}", "--local", "apps")
    assert first.returncode == 0, first.stderr[-1500:]
    if corrupt:
        (store,) = cache.glob("*/repo.git")
        (store / "HEAD").write_text("garbage\n")
    (repo / "apps" / "c.yaml").write_text(yaml.safe_dump(configmap("c")))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "more")
    runs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "reconcile",
                "--git",
                f"file://{repo}",
                "--git-cache",
                str(cache),
                "--local",
                "apps",
                "--report-format",
                "json",
            ],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=command_env(),
        )
        for _ in range(4)
    ]
    for process in runs:
        stdout, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stderr[-1500:]
        assert json.loads(stdout)["source"]["subject"] == "more"
    assert list((cache / "runs").iterdir()) == [], "a run left its tree behind"


def test_a_stale_tree_in_the_cache_is_never_read(repo: Path, tmp_path: Path) -> None:
    """Trees are written per run: one left by an older version (files lost) is not trusted."""
    cache = tmp_path / "cache"
    assert run_git(tmp_path, f"file://{repo}", "--local", "apps").returncode == 0
    (root,) = [p for p in cache.iterdir() if (p / "repo.git").is_dir()]
    stale = root / "trees" / git(repo, "rev-parse", "HEAD") / "apps"
    stale.mkdir(parents=True)
    out = tmp_path / "out"
    done = run_git(tmp_path, f"file://{repo}", "--local", "apps", "--output-dir", str(out))
    assert done.returncode == 0, done.stderr[-1500:]
    assert "a" in dumped(out)


# -- the budget and signals ----------------------------------------------------------------------


@dataclass
class SilentServer:
    url: str
    connected: threading.Event


@pytest.fixture
def silent_server() -> Iterator[SilentServer]:
    """An HTTP server that accepts connections and never answers."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()
    connected = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
                held.append(conn)
                connected.set()
            except TimeoutError:
                continue
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield SilentServer(f"http://127.0.0.1:{listener.getsockname()[1]}/team/repo.git", connected)
    finally:
        stop.set()
        thread.join(5)
        for conn in held:
            conn.close()
        listener.close()


def test_a_silent_git_server_ends_at_the_budget_with_a_report(
    silent_server: SilentServer, tmp_path: Path
) -> None:
    report = tmp_path / "report.json"
    started = time.monotonic()
    done = run_git(
        tmp_path,
        silent_server.url,
        "--local",
        "apps",
        "--max-duration",
        "3s",
        "--report-file",
        f"json:{report}",
    )
    elapsed = time.monotonic() - started
    assert elapsed < 3 + 8, f"a 3 s run took {elapsed:.1f} s"
    assert done.returncode == 1, done.stderr[-1500:]
    assert "time budget" in json.loads(report.read_text())["loadErrors"][0]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_checkout_and_leaves_the_report(
    silent_server: SilentServer, tmp_path: Path, sig: signal.Signals
) -> None:
    report = tmp_path / "report.json"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "reconcile",
            "--git",
            silent_server.url,
            "--git-cache",
            str(tmp_path / "cache"),
            "--local",
            "apps",
            "--report-file",
            f"json:{report}",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=command_env(),
    )
    assert silent_server.connected.wait(60), "git never connected"  # waiting on the server
    sent = time.monotonic()
    process.send_signal(sig)
    _, stderr = process.communicate(timeout=60)
    assert time.monotonic() - sent < 10, "the checkout did not stop promptly"
    assert process.returncode == 128 + sig.value, stderr[-1500:]
    assert json.loads(report.read_text())["interrupted"] == sig.name


# -- credentials ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "deploy:hunter2-S3CRET-pw@127.0.0.1:team/repo.git",
        "deploy:hunter2-S3CRET-pw@git.example.com:team/repo.git",
    ],
)
def test_a_password_in_an_scp_like_url_shows_nowhere(tmp_path: Path, url: str) -> None:
    report = tmp_path / "report.json"
    done = run_git(tmp_path, url, "--local", "apps", "--report-file", f"json:{report}")
    assert done.returncode == 1
    for where, text in (
        ("stdout", done.stdout),
        ("log", done.stderr),
        ("report", report.read_text()),
    ):
        assert "hunter2" not in text, where
    assert "scp-like URL is not supported" in done.stderr

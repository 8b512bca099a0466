# ruff: noqa: RUF001 (full-width and other non-ASCII digits are what these tests refuse)
"""Inputs read as named, through the command: `-` alone is standard input and any other
spelling a path (`./-` is the file named `-`, with or without `--git`); `reconcile diff` refuses
standard input, which its two sides would both read; a `--git-cache` that is not a directory is
a usage error, not a traceback; and every option's value is read as written (ASCII digits in
counts, durations and shards, names as the API server reads them, no empty paths) and refused
with a usage error naming the option, before any work, as are options that mean nothing
together (`--force-conflicts` without server-side apply, among others)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner, Result

from reconcile.cli.run import app
from reconcile.gitsource import GitSourceError, checkout
from tests.support.cli import command_env
from tests.support.gitrepo import git


def configmap(name: str) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default"},
        }
    )


def command(
    *args: str, cwd: Path, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reconcile", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
        env=command_env(**(env or {})),
    )


def written(out: Path) -> set[str]:
    return {
        p.stem
        for p in (out / "default" / "configmaps").glob("*.yaml")
        if p.stem != "kube-root-ca.crt"
    }


@pytest.fixture
def here(tmp_path: Path) -> Path:
    """A directory holding a file named `-`, and a directory named `-` holding a file."""
    (tmp_path / "-").write_text(configmap("from-the-file"))
    return tmp_path


@pytest.mark.parametrize("spelling", ["./-", ".//-", "ABSOLUTE"])
def test_a_path_spelt_as_dash_is_the_file(here: Path, spelling: str) -> None:
    spelling = str(here / "-") if spelling == "ABSOLUTE" else spelling
    out = here / "out"
    done = command(
        "--local", spelling, "--output-dir", str(out), cwd=here, stdin=configmap("from-stdin")
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert written(out) == {"from-the-file"}


@pytest.mark.parametrize("spelling", ["-/", "./-/", "./-"])
def test_a_directory_named_dash_is_the_directory(tmp_path: Path, spelling: str) -> None:
    (tmp_path / "-").mkdir()
    (tmp_path / "-" / "a.yaml").write_text(configmap("from-the-directory"))
    out = tmp_path / "out"
    done = command(
        "--local", spelling, "--output-dir", str(out), cwd=tmp_path, stdin=configmap("piped")
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert written(out) == {"from-the-directory"}


def test_dash_alone_is_standard_input(here: Path) -> None:
    out = here / "out"
    done = command("--local", "-", "--output-dir", str(out), cwd=here, stdin=configmap("piped"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert written(out) == {"piped"}


def test_controllers_and_manifests_name_the_file_too(here: Path) -> None:
    """`--controllers ./-` and `--local ./-` together: two paths, no standard input (which
    would be a usage error: two options reading it)."""
    out = here / "out"
    done = command(
        *("--local", "./-", "--controllers", "./-", "--output-dir", str(out)),
        cwd=here,
        stdin=configmap("from-stdin"),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert written(out) == {"from-the-file"}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    (path / "-").write_text(configmap("from-the-repository"))
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "a file named -")
    return path


def test_with_git_dot_slash_dash_is_the_repositorys_file(repo: Path, tmp_path: Path) -> None:
    source = ("--git", f"file://{repo}", "--git-cache", str(tmp_path / "cache"))
    for spelling, expected in (("./-", "from-the-repository"), ("-", "piped")):
        out = tmp_path / f"out{len(spelling)}"
        done = command(
            *source,
            *("--local", spelling, "--output-dir", str(out)),
            cwd=tmp_path,
            stdin=configmap("piped"),
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert written(out) == {expected}, spelling


def one_line(result: Result) -> str:
    return " ".join(result.output.replace("│", " ").split())


def diff(*args: str, stdin: str | None = None) -> Result:
    from reconcile.cli.diff import app as diff_app

    return CliRunner().invoke(diff_app, list(args), input=stdin)


@pytest.mark.parametrize(
    "args",
    [
        ["main", "main", "--local", "-"],
        ["main", "main", "--controllers", "-"],
        ["main", "main", "--local", "apps", "--manifests", "-"],
    ],
)
def test_diff_refuses_standard_input_both_sides_would_read(
    repo: Path, tmp_path: Path, args: list[str]
) -> None:
    cache = tmp_path / "cache"
    done = diff("--git", f"file://{repo}", "--git-cache", str(cache), *args, stdin=configmap("a"))
    assert done.exit_code == 1
    said = one_line(done)
    assert "would be read by both sides" in said and ("--local" in said or "--controllers" in said)
    assert not cache.exists()  # refused before any work
    plain = diff(str(tmp_path), str(tmp_path), *args[2:], stdin=configmap("a"))
    assert plain.exit_code == 1 and "would be read by both sides" in one_line(plain)


def test_diff_reads_a_file_named_dash_on_each_side(repo: Path, tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")
    done = diff("--git", f"file://{repo}", "--git-cache", cache, "main", "main", "--local", "./-")
    assert done.exit_code == 0, done.output[-2000:]


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(app, list(args), env=env)


@pytest.mark.parametrize("inside", [False, True])
def test_a_git_cache_that_is_a_file_is_a_usage_error(
    repo: Path, tmp_path: Path, inside: bool
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("not a directory")
    cache = afile / "sub" if inside else afile
    done = invoke("--git", f"file://{repo}", "--git-cache", str(cache), "--local", "./-")
    assert done.exit_code == 1
    said = one_line(done)
    assert "--git-cache" in said and "not a directory" in said, said
    assert "Traceback" not in said and "FileExistsError" not in said
    refused = diff("--git", f"file://{repo}", "--git-cache", str(cache), "main", "main")
    assert refused.exit_code == 1 and "--git-cache" in one_line(refused)


def test_a_cache_that_cannot_be_used_is_reported_not_raised(repo: Path, tmp_path: Path) -> None:
    """Below the command's check (a cache made a file between it and the run): an error of
    the git source, which a run reports."""
    afile = tmp_path / "afile"
    afile.write_text("")
    with pytest.raises(GitSourceError, match=r"the cache .*afile cannot be used"):
        checkout(f"file://{repo}", None, afile)


USAGE_ERRORS: list[tuple[list[str], dict[str, str], str]] = [
    # digits: ASCII only, nothing around them
    (["--shard", "１/2"], {}, "--shard"),
    (["--shard", "0/２"], {}, "--shard"),
    (["--shard", "auto/2"], {"JOB_COMPLETION_INDEX": "１"}, "--shard"),
    (["--shard", " 0/2"], {}, "--shard"),
    (["--workers", "８"], {}, "--workers"),
    (["--workers", "1_0"], {}, "--workers"),
    (["--workers", " 8"], {}, "--workers"),
    (["--workers", "+8"], {}, "--workers"),
    ([], {"RECONCILE_WORKERS": "٣"}, "--workers"),  # ARABIC-INDIC DIGIT THREE
    (["--burst", "0"], {}, "--burst"),
    (["--qps", "１"], {}, "--qps"),
    (["--qps", "nan"], {}, "--qps"),
    (["--qps", "-1"], {}, "--qps"),
    # durations
    (["--max-duration", "１０s"], {}, "--max-duration"),
    (["--max-duration", "１０"], {}, "--max-duration"),
    (["--max-duration", "5m "], {}, "--max-duration"),
    (["--poll-interval", "1_0"], {}, "--poll-interval"),
    (["--request-timeout", "-5s"], {}, "--request-timeout"),
    ([], {"RECONCILE_PROGRESS_INTERVAL": "１s"}, "--progress-interval"),
    # names
    (["--applyset", "default/name\n", "--manifests", "."], {}, "--applyset"),
    (["--lock", "ns/Name"], {}, "--lock"),
    (["--run-record", "Bad/Name!"], {}, "--run-record"),
    (["--lock", "ns/" + "a" * 254], {}, "--lock"),
    (["--controller", "Bad_Name"], {}, "--controller"),
    (["--context", " ctx"], {}, "--context"),
    (["--kubernetes-version", "１.37"], {}, "--kubernetes-version"),
    (["--kubernetes-version", " 1.37"], {}, "--kubernetes-version"),
    (["--allowed-hook-hosts", "hooks.example.com:８０"], {}, "--allowed-hook-hosts"),
    (["--allowed-hook-hosts", "hooks.example.com:70000"], {}, "--allowed-hook-hosts"),
    # paths
    (["--manifests", ""], {}, "--manifests"),
    (["--controllers", " "], {}, "--controllers"),
    (["--local", "a", "--output-dir", ""], {}, "--output-dir"),  # "" reads as "."
    (["--metrics-file", ""], {}, "--metrics-file"),
    (["--report-file", "json:"], {}, "--report-file"),
    (["--kubeconfig", ""], {}, "--kubeconfig"),
    (["--git", "file:///r", "--git-cache", "", "--local", "a"], {}, "--git-cache"),
    # git values
    (["--git", "-upload-pack=x", "--local", "a"], {}, "--git"),
    (["--git", "file:///r", "--git-ref", "a..b", "--local", "a"], {}, "--git-ref"),
    # combinations that mean nothing
    (["--force-conflicts"], {}, "--force-conflicts"),
    ([], {"RECONCILE_FORCE_CONFLICTS": "true"}, "--force-conflicts"),
    (["--force-conflicts", "--apply-strategy", "client-side"], {}, "--force-conflicts"),
    (["--applyset", "ops/set"], {}, "--applyset"),
    (["-R"], {}, "--recursive"),
    (["--git", "file:///r"], {}, "--git"),
    (["--kubeconfig", "k", "--local", "a"], {}, "--kubeconfig"),
    (["--context", "c", "--local", "a"], {}, "--context"),
    (["--run-record", "default/rec", "--local", "a"], {}, "--run-record"),
    (["--run-record", "/rec"], {}, "--run-record"),
    (["--lock", "ops/a..b"], {}, "--lock"),
    (["--manifests", "m.yaml", "--applyset", "ops/a.-b"], {}, "--applyset"),
    (["--local", "a"], {"RECONCILE_RUN_RECORD": "default/rec"}, "--run-record"),
    (
        ["--kustomize-isolation", "seccomp", "--kustomize-allow-remote", "--local", "a"],
        {},
        "--kustomize-isolation",
    ),
    (["--git-cache", "c"], {}, "--git-cache"),
]


@pytest.mark.parametrize(
    ("args", "env", "option"), USAGE_ERRORS, ids=[repr(e[0] or e[1]) for e in USAGE_ERRORS]
)
def test_each_option_is_read_as_written_and_refused_naming_it(
    tmp_path: Path, args: list[str], env: dict[str, str], option: str
) -> None:
    """Refused as a usage error naming the option, before any work: the command's run is
    never reached (it would read `--local`, which does not exist here)."""
    done = CliRunner().invoke(app, args, env=env)
    assert done.exit_code == 1, done.output
    said = one_line(done)
    assert "Usage:" in done.output and option in said, said
    assert "Traceback" not in said


@pytest.mark.parametrize(
    "args",
    [
        ["--force-conflicts", "--apply-strategy", "server-side"],
        ["--workers", "08", "--shard", "1/2", "--qps", "2.5", "--max-duration", "1m30s"],
        ["--kustomize-isolation", "none", "--local", "-"],
        ["--kustomize-allow-remote", "--kustomize-isolation", "auto", "--local", "-"],
        ["--applyset", "ops/set", "--manifests", "-"],
        ["-R", "--local", "-"],
    ],
)
def test_what_means_something_still_runs(args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import reconcile.job.app

    captured: list[object] = []

    def job(config: object) -> tuple[None, int]:
        captured.append(config)
        return None, 0

    monkeypatch.setattr(reconcile.job.app, "main_job", job)
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    assert captured

"""kustomize stays off the network unless `--kustomize-allow-remote`: through the command, a
loopback server that records every request is named in every field of a kustomization that
takes a path or URL (and in fields no list names: a plugin configuration inline, in a file, or
rendered by a kustomization that a transformer entry names); each run fails naming the file and
the field, and the server sees no request. A kustomize that itself tries to connect (a shim on
PATH) reaches nothing, in a network namespace or under the seccomp filter, and through no proxy
or git transport; it reaches the server only with `--kustomize-allow-remote`, which still
fetches and applies a remote patch."""

from __future__ import annotations

import base64
import os
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner, Result

from reconcile.cli.run import app
from reconcile.files import offline
from tests.support.backends import Backend
from tests.support.controllers import run
from tests.support.gitrepo import git

CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: base\ndata:\n  from: base\n"
PATCH = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: base\ndata:\n  from: remote\n"


class Recorder(ThreadingHTTPServer):
    """Answers every GET with a ConfigMap patch and records the path asked for."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.hits: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: Recorder

    def do_GET(self) -> None:
        self.server.hits.append(self.path)
        body = PATCH.encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/yaml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[Recorder]:
    recorder = Recorder()
    thread = threading.Thread(target=recorder.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield recorder
    finally:
        recorder.shutdown()
        recorder.server_close()
        thread.join(5)


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(app, [*args, "--report-format", "text"], env=env)


def one_line(result: Result) -> str:
    return " ".join(result.output.replace("│", " ").split())


def overlay(root: Path, text: str, **files: str) -> Path:
    """A kustomization (its text with URL filled in later), a ConfigMap it may name, and
    `files` beside it."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "cm.yaml").write_text(CONFIGMAP)
    (root / "kustomization.yaml").write_text(text)
    for name, content in files.items():
        path = root / name.replace("__", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return root


TRANSFORMER = "apiVersion: builtin\nkind: PatchTransformer\nmetadata: {name: p}\npath: URL/t\n"

# (kustomization, the field the error names, the file it names, other files); URL is the
# server's, and every one of these fields is one kustomize fetches from (it is checked in
# test_each_field_fetches_when_allowed for the fields of kustomization itself)
FIELDS: list[tuple[str, str, str, dict[str, str]]] = [
    ("resources: [cm.yaml, URL/r]", "resources[1]", "kustomization.yaml", {}),
    ("bases: [URL/b]", "bases[0]", "kustomization.yaml", {}),
    ("resources: [cm.yaml]\ncomponents: [URL/c]", "components[0]", "kustomization.yaml", {}),
    ("resources: [cm.yaml]\npatches: [{path: URL/p}]", "patches[0].path", "kustomization.yaml", {}),
    (
        "resources: [cm.yaml]\npatchesStrategicMerge: [URL/psm]",
        "patchesStrategicMerge[0]",
        "kustomization.yaml",
        {},
    ),
    (
        "resources: [cm.yaml]\npatchesJson6902:\n"
        "- {path: URL/j, target: {version: v1, kind: ConfigMap, name: base}}",
        "patchesJson6902[0].path",
        "kustomization.yaml",
        {},
    ),
    (
        "configMapGenerator: [{name: g, files: [URL/f]}]",
        "configMapGenerator[0].files[0]",
        "kustomization.yaml",
        {},
    ),
    (
        "configMapGenerator: [{name: g, files: [key=URL/fk]}]",
        "configMapGenerator[0].files[0]",
        "kustomization.yaml",
        {},
    ),
    (
        "configMapGenerator: [{name: g, envs: [URL/e]}]",
        "configMapGenerator[0].envs[0]",
        "kustomization.yaml",
        {},
    ),
    (
        "secretGenerator: [{name: s, env: URL/se}]",
        "secretGenerator[0].env",
        "kustomization.yaml",
        {},
    ),
    (
        "secretGenerator: [{name: s, files: [URL/sf]}]",
        "secretGenerator[0].files[0]",
        "kustomization.yaml",
        {},
    ),
    ("resources: [cm.yaml]\nopenapi: {path: URL/o}", "openapi.path", "kustomization.yaml", {}),
    (
        "resources: [cm.yaml]\nreplacements: [{path: URL/rp}]",
        "replacements[0].path",
        "kustomization.yaml",
        {},
    ),
    (
        "resources: [cm.yaml]\nconfigurations: [URL/conf]",
        "configurations[0]",
        "kustomization.yaml",
        {},
    ),
    ("resources: [cm.yaml]\ncrds: [URL/crd]", "crds[0]", "kustomization.yaml", {}),
    ("resources: [cm.yaml]\ngenerators: [URL/g]", "generators[0]", "kustomization.yaml", {}),
    ("resources: [cm.yaml]\ntransformers: [URL/t]", "transformers[0]", "kustomization.yaml", {}),
    ("resources: [cm.yaml]\nvalidators: [URL/v]", "validators[0]", "kustomization.yaml", {}),
    # fields no list of kustomize's names: Helm's, a field kustomize does not know, and plugin
    # configurations inline, in a file, and rendered by a kustomization a transformer names
    (
        "helmCharts: [{name: c, valuesFile: URL/hv}]",
        "helmCharts[0].valuesFile",
        "kustomization.yaml",
        {},
    ),
    ("helmGlobals: {chartHome: URL/hh}", "helmGlobals.chartHome", "kustomization.yaml", {}),
    (
        "resources: [cm.yaml]\nsomeFutureField: {deep: [URL/x]}",
        "someFutureField.deep[0]",
        "kustomization.yaml",
        {},
    ),
    (
        "resources: [cm.yaml]\ntransformers:\n- |\n  " + TRANSFORMER.replace("\n", "\n  "),
        "transformers[0].path",
        "kustomization.yaml",
        {},
    ),
    (
        "resources: [cm.yaml]\ntransformers: [t.yaml]",
        "path",
        "t.yaml (transformers[0] of ",
        {"t.yaml": TRANSFORMER},
    ),
    (
        "resources: [cm.yaml]\ntransformers: [plugins]",
        "path",
        "plugins/t.yaml (resources[0] of ",
        {"plugins__kustomization.yaml": "resources: [t.yaml]\n", "plugins__t.yaml": TRANSFORMER},
    ),
    (
        "resources: [cm.yaml, base]",
        "patches[0].path",
        "base/kustomization.yaml",
        {"base__kustomization.yaml": "patches: [{path: URL/deep}]\n"},
    ),
]


@pytest.mark.parametrize(
    ("text", "field", "file", "files"), FIELDS, ids=[f[1] + "-" + f[2][:6] for f in FIELDS]
)
def test_a_remote_entry_in_any_field_is_refused_naming_file_and_field(
    tmp_path: Path, server: Recorder, text: str, field: str, file: str, files: dict[str, str]
) -> None:
    filled = {k: v.replace("URL", server.url) for k, v in files.items()}
    directory = overlay(tmp_path / "k", text.replace("URL", server.url) + "\n", **filled)
    done = invoke("--local", str(directory))
    assert done.exit_code == 1
    said = one_line(done)
    assert f"{directory}/{file}" in said and f"{field} entry '{server.url}/" in said, said
    assert "is remote (kustomize would fetch it from the network)" in said
    assert server.hits == []


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("resources: [cm.yaml]\npatches: [{path: URL/p}]", "patches"),
        ("resources: [cm.yaml]\npatchesStrategicMerge: [URL/psm]", "patchesStrategicMerge"),
        ("configMapGenerator: [{name: g, files: [URL/f]}]", "configMapGenerator"),
        ("resources: [cm.yaml]\nopenapi: {path: URL/o}", "openapi"),
        ("resources: [cm.yaml]\ncrds: [URL/crd]", "crds"),
    ],
)
def test_each_field_fetches_when_allowed(
    tmp_path: Path, server: Recorder, text: str, field: str
) -> None:
    """What the check refuses is what kustomize fetches: allowed, the server is asked."""
    directory = overlay(tmp_path / "k", text.replace("URL", server.url) + "\n")
    invoke("--local", str(directory), "--kustomize-allow-remote")
    assert server.hits, field


def test_allowed_a_remote_patch_is_fetched_and_applied(tmp_path: Path, server: Recorder) -> None:
    directory = overlay(
        tmp_path / "k", f"resources: [cm.yaml]\npatches: [{{path: {server.url}/patch.yaml}}]\n"
    )
    out = tmp_path / "out"
    done = invoke("--local", str(directory), "--kustomize-allow-remote", "--output-dir", str(out))
    assert done.exit_code == 0, done.output[-2000:]
    assert server.hits == ["/patch.yaml"]
    written = yaml.safe_load((out / "default" / "configmaps" / "base.yaml").read_text())
    assert written["data"] == {"from": "remote"}


# A kustomize that tries the network itself before rendering, whatever the kustomization says:
# a direct connection to the server, the same through the environment's proxies, and git.
SHIM = """#!/bin/sh
{python} - <<'EOF' >> {log} 2>&1
import socket, subprocess, urllib.request
try:
    with socket.create_connection(("127.0.0.1", {port}), timeout=5) as s:
        s.sendall(b"GET /direct HTTP/1.0\\r\\n\\r\\n")
        s.recv(10)
    print("direct: reached")
except OSError as exc:
    print("direct: refused", exc)
try:
    urllib.request.urlopen("http://127.0.0.1:{port}/proxied", timeout=5).read()
    print("proxied: reached")
except OSError as exc:
    print("proxied: refused", exc)
done = subprocess.run(["git", "ls-remote", "file://{repo}"], capture_output=True, text=True)
print("git:", "reached" if done.returncode == 0 else "refused " + done.stderr.strip())
EOF
exec kubectl kustomize "$2"
"""


@pytest.fixture
def shim(tmp_path: Path, server: Recorder) -> tuple[Path, Path]:
    """A directory holding that kustomize, and the file it writes what it reached to."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "commit", "-q", "--allow-empty", "-m", "x")
    directory = tmp_path / "shim"
    directory.mkdir()
    log = tmp_path / "reached"
    script = directory / "kustomize"
    port = server.server_address[1]
    script.write_text(SHIM.format(python=sys.executable, log=log, port=port, repo=repo))
    script.chmod(0o755)
    return directory, log


def with_path(*first: Path) -> dict[str, str]:
    return {"PATH": os.pathsep.join([*map(str, first), os.environ["PATH"]])}


@pytest.mark.parametrize(
    "mode", [[], ["--kustomize-isolation", "namespace"], ["--kustomize-isolation", "seccomp"]]
)
def test_kustomize_itself_reaches_nothing(
    tmp_path: Path, server: Recorder, shim: tuple[Path, Path], mode: list[str]
) -> None:
    directory, log = shim
    clean = overlay(tmp_path / "k", "resources: [cm.yaml]\n")
    done = invoke("--local", str(clean), *mode, env=with_path(directory))
    assert done.exit_code == 0, done.output[-2000:]
    reached = log.read_text()
    assert "direct: refused" in reached and "proxied: refused" in reached, reached
    assert "git: refused" in reached, reached
    assert server.hits == []


def test_without_isolation_proxies_point_nowhere_and_git_has_no_transport(
    tmp_path: Path, server: Recorder, shim: tuple[Path, Path]
) -> None:
    directory, log = shim
    clean = overlay(tmp_path / "k", "resources: [cm.yaml]\n")
    done = invoke("--local", str(clean), "--kustomize-isolation", "none", env=with_path(directory))
    assert done.exit_code == 0, done.output[-2000:]
    reached = log.read_text()
    assert "direct: reached" in reached  # the operator's choice: on the network...
    assert "proxied: refused" in reached and "git: refused" in reached, reached  # ...but no further
    assert server.hits == ["/direct"]


def test_allowed_remote_kustomize_reaches_the_network(
    tmp_path: Path, server: Recorder, shim: tuple[Path, Path]
) -> None:
    directory, log = shim
    clean = overlay(tmp_path / "k", "resources: [cm.yaml]\n")
    done = invoke("--local", str(clean), "--kustomize-allow-remote", env=with_path(directory))
    assert done.exit_code == 0, done.output[-2000:]
    assert "direct: reached" in log.read_text()
    assert "/direct" in server.hits


def failing_unshare(tmp_path: Path) -> Path:
    directory = tmp_path / "nons"
    directory.mkdir()
    script = directory / "unshare"
    script.write_text(
        "#!/bin/sh\necho 'unshare: unshare failed: Operation not permitted' >&2\nexit 1\n"
    )
    script.chmod(0o755)
    return directory


def test_without_namespaces_the_seccomp_filter_keeps_it_offline(
    tmp_path: Path, server: Recorder, shim: tuple[Path, Path]
) -> None:
    directory, log = shim
    clean = overlay(tmp_path / "k", "resources: [cm.yaml]\n")
    env = with_path(failing_unshare(tmp_path), directory)
    done = invoke("--local", str(clean), "--log-level", "debug", env=env)
    assert done.exit_code == 0, done.output[-2000:]
    assert "off the network (seccomp)" in done.output
    assert "direct: refused" in log.read_text()
    assert server.hits == []

    required = invoke("--local", str(clean), "--kustomize-isolation", "namespace", env=env)
    assert required.exit_code == 1
    said = one_line(required)
    assert f"kustomize build {clean}: not run, since it cannot be cut off from the network" in said
    assert "Operation not permitted" in said and "--kustomize-isolation none" in said, said
    assert server.hits == []


def test_where_no_isolation_can_be_had_kustomize_is_not_run_unless_the_operator_says(
    tmp_path: Path, server: Recorder, shim: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No namespace (unshare refused) and no seccomp filter (its helper missing, as on an
    architecture it has no filter for): refused by default, run on the network with `none`."""
    directory, log = shim
    monkeypatch.setattr(offline, "_HELPER", tmp_path / "missing.py")
    monkeypatch.setattr(offline, "_found", {})
    clean = overlay(tmp_path / "k", "resources: [cm.yaml]\n")
    env = with_path(failing_unshare(tmp_path), directory)
    refused = invoke("--local", str(clean), env=env)
    assert refused.exit_code == 1
    said = one_line(refused)
    assert "not run, since it cannot be cut off from the network here: no network namespace" in said
    assert "no seccomp filter" in said, said
    assert not log.exists() and server.hits == []
    allowed = invoke("--local", str(clean), env={**env, "RECONCILE_KUSTOMIZE_ISOLATION": "none"})
    assert allowed.exit_code == 0, allowed.output[-2000:]
    assert server.hits == ["/direct"]


def test_git_a_pull_requests_kustomization_fetches_nothing(
    tmp_path: Path, server: Recorder
) -> None:
    """The same from a repository: a remote patch in a base two levels down, read from a
    commit; refused naming the file within the repository."""
    repo = tmp_path / "repo"
    overlay(
        repo / "apps",
        "resources: [cm.yaml, ../base]\n",
        **{"..__base__kustomization.yaml": f"patchesStrategicMerge: [{server.url}/psm]\n"},
    )
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "apps")
    source = ("--git", f"file://{repo}", "--git-cache", str(tmp_path / "cache"))
    done = invoke(*source, "--local", "apps")
    assert done.exit_code == 1
    assert (
        f"base/kustomization.yaml: patchesStrategicMerge[0] entry '{server.url}/psm' is remote"
        in one_line(done)
    ), done.output
    assert server.hits == []


def test_a_url_written_as_binary_yaml_is_read_as_kustomize_reads_it(
    tmp_path: Path, server: Recorder
) -> None:
    """`!!binary`: base64 to Python's YAML reader, a string to kustomize's; checked as one."""
    encoded = base64.b64encode(f"{server.url}/binary".encode()).decode()
    directory = overlay(
        tmp_path / "k", f"resources: [cm.yaml]\npatches: [{{path: !!binary {encoded}}}]\n"
    )
    done = invoke("--local", str(directory))
    assert done.exit_code == 1
    assert f"patches[0].path entry '{server.url}/binary' is remote" in one_line(done)
    assert server.hits == []


def test_a_plugin_configuration_outside_the_kustomization_is_not_read(tmp_path: Path) -> None:
    """kustomize reads a plugin configuration only within the kustomization's directory; so
    does the check (a file elsewhere, such as one of the system's, is never parsed, nor any
    of it quoted): kustomize then refuses it."""
    secret = tmp_path / "secret.yaml"
    secret.write_text("password: [hunter2\n")  # would be an invalid-YAML error quoting it
    directory = overlay(tmp_path / "k", f"resources: [cm.yaml]\ntransformers: [{secret}]\n")
    done = invoke("--local", str(directory))
    assert done.exit_code == 1
    assert "hunter2" not in done.output
    assert "secret.yaml" in done.output  # kustomize's refusal names it


def test_what_the_check_reads_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from reconcile.files import kustomize_check

    monkeypatch.setattr(kustomize_check, "MAX_TEXT_BYTES", 4096)
    transformers = "\n".join(f"- t{i}.yaml" for i in range(40))
    files = {f"t{i}.yaml": TRANSFORMER.replace("URL/t", f"p{i}.yaml") for i in range(40)}
    directory = overlay(tmp_path / "k", f"resources: [cm.yaml]\ntransformers:\n{transformers}\n")
    for name, content in files.items():
        (directory / name).write_text(content + "# " + "x" * 200 + "\n")
    done = invoke("--local", str(directory))
    assert done.exit_code == 1
    assert "hold more than" in one_line(done)


def test_manifests_with_a_remote_patch_apply_nothing_on_either_backend(
    backend: Backend, namespace: str, tmp_path: Path, server: Recorder
) -> None:
    """`--manifests` of an overlay whose patch is remote: refused before anything is applied,
    on the in-process cluster and on the real API server alike, and nothing fetched."""
    text = CONFIGMAP.replace("name: base", f"name: base\n  namespace: {namespace}")
    directory = overlay(
        tmp_path / "k",
        f"resources: [cm.yaml]\npatchesStrategicMerge: [{server.url}/psm]\n",
        **{"cm.yaml": text},
    )
    mark = backend.mark()
    result = run(backend, apply_paths=(str(directory),), applyset=f"default/kz-{namespace}")
    said = " ".join(result.load_errors + result.errors)
    assert f"patchesStrategicMerge[0] entry '{server.url}/psm' is remote" in said, said
    assert backend.mutations_since(mark) == {}
    assert server.hits == []

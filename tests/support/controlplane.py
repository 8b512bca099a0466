"""A real control plane for the tests: etcd + kube-apiserver + kube-controller-manager, of
one of two Kubernetes releases:

- `CURRENT_RELEASE` (1.37): built from the Go module proxy by
  `scripts/build-control-plane-current.sh`; the whole suite runs on it.
- `OLDEST_RELEASE` (1.20): built from Debian's source package with Go 1.19 by
  `scripts/build-control-plane.sh`; tests that hold where the oldest release behaves
  differently (removed and beta APIs, missing features) say so and run on it too.

Both are cached outside the checkout. `ControlPlane.start()` gives each component its own free
loopback ports, writes a kubeconfig with two token users, and waits until the API server is
ready:

- `admin`: what the tests use to set things up and to play the kubelet;
- `reconcile`: what the code under test uses, so the audit log can tell its requests apart.

Run by hand: `python -m tests.support.controlplane [1.20|1.37]` starts one and prints its
kubeconfig.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CURRENT_RELEASE = "1.37"
OLDEST_RELEASE = "1.20"
RELEASES = (CURRENT_RELEASE, OLDEST_RELEASE)
BUILD_SCRIPTS = {
    CURRENT_RELEASE: ROOT / "scripts" / "build-control-plane-current.sh",
    OLDEST_RELEASE: ROOT / "scripts" / "build-control-plane.sh",
}
ADMIN_USER = "admin"
TESTED_USER = "reconcile"
_PR_SET_PDEATHSIG = 1  # linux/prctl.h
# loaded here, not between fork and exec, where loading a library could deadlock
_LIBC = ctypes.CDLL(None) if sys.platform == "linux" else None
# The ServiceAccount of manifests/preview-rbac, audited too: what a preview read, and that it
# was refused nothing (tests/integration/test_preview_rbac.py).
PREVIEW_USER = "system:serviceaccount:reconcile:reconcile-preview"

AUDIT_POLICY = f"""\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: Metadata
    users: ["{TESTED_USER}", "{PREVIEW_USER}"]
  - level: None
"""


class ControlPlaneError(RuntimeError):
    """The control plane could not be built or started; the message says why."""


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the test process dies, however it dies (a
    killed pytest or xdist worker must not leave an API server running and loading the
    machine)."""
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def build(release: str = CURRENT_RELEASE) -> Path:
    """Build (or find cached) binaries of `release`; returns the directory holding them."""
    script = BUILD_SCRIPTS.get(release)
    if script is None:
        raise ControlPlaneError(f"no control plane of release {release!r}; have {RELEASES}")
    if not script.exists():
        raise ControlPlaneError(f"{script} is missing")
    result = subprocess.run(["bash", str(script)], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise ControlPlaneError(
            f"building the {release} control plane failed (exit {result.returncode}):\n"
            + result.stderr[-4000:]
        )
    return Path(result.stdout.strip().splitlines()[-1]) / "bin"


@dataclass
class ControlPlane:
    bin_dir: Path
    release: str = CURRENT_RELEASE
    workdir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="reconcile-cp-")))
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    apiserver_port: int = 0
    tokens: dict[str, str] = field(default_factory=dict)
    # The audit log read so far: tests mark and count it hundreds of times in a session, so
    # each read parses only the lines written since the last one.
    _audit_read: int = 0
    _audit_events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.apiserver_port}"

    @property
    def kubeconfig(self) -> Path:
        return self.workdir / "kubeconfig"

    @property
    def audit_log(self) -> Path:
        return self.workdir / "audit.log"

    def start(self, timeout: float = 90.0) -> None:
        try:
            self._start(timeout)
        except BaseException:
            self.stop()
            raise

    def _start(self, timeout: float) -> None:
        for binary in ("etcd", "kube-apiserver", "kube-controller-manager"):
            if not (self.bin_dir / binary).exists():
                raise ControlPlaneError(f"{self.bin_dir / binary} is missing")
        etcd_client, etcd_peer = free_port(), free_port()
        self.apiserver_port = free_port()
        self._write_credentials()
        # etcd's data on tmpfs when there is one: fsync on disk is what makes etcd slow.
        shm = Path("/dev/shm")
        etcd_data = Path(
            tempfile.mkdtemp(prefix="reconcile-etcd-", dir=shm if shm.is_dir() else None)
        )
        self._spawn(
            "etcd",
            [
                str(self.bin_dir / "etcd"),
                "--name=default",
                f"--data-dir={etcd_data}",
                f"--listen-client-urls=http://127.0.0.1:{etcd_client}",
                f"--advertise-client-urls=http://127.0.0.1:{etcd_client}",
                f"--listen-peer-urls=http://127.0.0.1:{etcd_peer}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{etcd_peer}",
                f"--initial-cluster=default=http://127.0.0.1:{etcd_peer}",
                "--log-level=warn",
            ],
        )
        (self.workdir / "etcd-data").write_text(str(etcd_data))
        w = self.workdir
        self._spawn(
            "kube-apiserver",
            [
                str(self.bin_dir / "kube-apiserver"),
                f"--etcd-servers=http://127.0.0.1:{etcd_client}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={self.apiserver_port}",
                *self._oldest_only("--insecure-port=0"),
                # later releases refuse to publish a loopback address as the `kubernetes`
                # Service's endpoint; nothing here reaches the API server through it
                *self._current_only("--endpoint-reconciler-type=none"),
                f"--cert-dir={w / 'certs'}",
                f"--token-auth-file={w / 'tokens.csv'}",
                "--authorization-mode=RBAC",
                f"--service-account-key-file={w / 'sa.key'}",
                f"--service-account-signing-key-file={w / 'sa.key'}",
                "--service-account-issuer=https://kubernetes.default.svc",
                "--service-cluster-ip-range=10.0.0.0/24",
                # No kubelet or token controller runs: Pods must not wait for service accounts.
                "--disable-admission-plugins=ServiceAccount",
                f"--audit-policy-file={w / 'audit-policy.yaml'}",
                f"--audit-log-path={self.audit_log}",
                "--audit-log-mode=blocking",
                "--v=0",
            ],
        )
        self._wait_ready(timeout)
        self._spawn(
            "kube-controller-manager",
            [
                str(self.bin_dir / "kube-controller-manager"),
                f"--kubeconfig={w / 'controller-manager.kubeconfig'}",
                # pvc-protection: without it a deleted PVC keeps its finalizer, and its
                # namespace stays Terminating, swept again and again by the namespace controller.
                "--controllers=garbagecollector,namespace,clusterrole-aggregation,statefulset,"
                "pvc-protection",
                *self._oldest_only("--port=0"),
                "--secure-port=0",
                "--leader-elect=false",
                "--concurrent-gc-syncs=10",
                "--v=0",
            ],
        )

    def _oldest_only(self, flag: str) -> tuple[str, ...]:
        """A flag 1.20 needs (to close an insecure port it opens by default) and later
        releases removed along with that port."""
        return (flag,) if self.release == OLDEST_RELEASE else ()

    def _current_only(self, flag: str) -> tuple[str, ...]:
        return () if self.release == OLDEST_RELEASE else (flag,)

    @contextlib.contextmanager
    def more_controllers(self, *names: str) -> Iterator[None]:
        """kube-controller-manager's `names` controllers (replicaset, daemonset, job, ...) run
        too while the block runs: a test that needs a workload controller starts it, so no
        other test meets one."""
        key = "kube-controller-manager-" + "-".join(names)
        self._spawn(
            key,
            [
                str(self.bin_dir / "kube-controller-manager"),
                f"--kubeconfig={self.workdir / 'controller-manager.kubeconfig'}",
                f"--controllers={','.join(names)}",
                *self._oldest_only("--port=0"),
                "--secure-port=0",
                "--leader-elect=false",
                "--v=0",
            ],
        )
        try:
            yield
        finally:
            process = self.processes.pop(key)
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def _write_credentials(self) -> None:
        w = self.workdir
        w.mkdir(parents=True, exist_ok=True)
        self.tokens = {
            ADMIN_USER: secrets.token_hex(16),
            TESTED_USER: secrets.token_hex(16),
            "controller-manager": secrets.token_hex(16),
        }
        lines = [f'{token},{user},{user},"system:masters"' for user, token in self.tokens.items()]
        (w / "tokens.csv").write_text("\n".join(lines) + "\n")
        (w / "audit-policy.yaml").write_text(AUDIT_POLICY)
        subprocess.run(
            ["openssl", "genrsa", "-out", str(w / "sa.key"), "2048"],
            check=True,
            capture_output=True,
        )
        self._write_kubeconfig(self.kubeconfig, [ADMIN_USER, TESTED_USER], TESTED_USER)
        self._write_kubeconfig(
            w / "controller-manager.kubeconfig", ["controller-manager"], "controller-manager"
        )

    def _write_kubeconfig(self, path: Path, users: list[str], current: str) -> None:
        # JSON is YAML.
        path.write_text(json.dumps(self._kubeconfig_dict(users, current), indent=2))

    def _kubeconfig_dict(self, users: list[str], current: str) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "test",
                    "cluster": {
                        "server": self.server,
                        "insecure-skip-tls-verify": True,
                    },
                }
            ],
            "users": [{"name": u, "user": {"token": self.tokens[u]}} for u in users],
            "contexts": [{"name": u, "context": {"cluster": "test", "user": u}} for u in users],
            "current-context": current,
        }

    def _spawn(self, name: str, argv: list[str]) -> None:
        log = (self.workdir / f"{name}.log").open("wb")
        self.processes[name] = subprocess.Popen(
            argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            # only prctl runs between fork and exec: no lock a thread could hold
            preexec_fn=_die_with_parent,  # noqa: PLW1509
        )

    def _wait_ready(self, timeout: float) -> None:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        deadline = time.monotonic() + timeout
        last = "no answer yet"
        while time.monotonic() < deadline:
            for name, process in self.processes.items():
                if process.poll() is not None:
                    raise ControlPlaneError(
                        f"{name} exited with {process.returncode}:\n{self.log_tail(name)}"
                    )
            if (
                self.request("/readyz", context) == 200
                and self.request("/api/v1/namespaces/default", context) == 200
            ):
                return
            last = f"readyz not 200 after {timeout - (deadline - time.monotonic()):.0f}s"
            time.sleep(0.2)
        raise ControlPlaneError(
            f"kube-apiserver not ready: {last}\n{self.log_tail('kube-apiserver')}"
        )

    def request(self, path: str, context: ssl.SSLContext) -> int:
        req = urllib.request.Request(
            self.server + path, headers={"Authorization": f"Bearer {self.tokens[ADMIN_USER]}"}
        )
        try:
            with urllib.request.urlopen(req, context=context, timeout=5) as response:
                return int(response.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)
        except (urllib.error.URLError, OSError):
            return 0

    def log_tail(self, name: str, lines: int = 30) -> str:
        path = self.workdir / f"{name}.log"
        if not path.exists():
            return "(no log)"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        for name in ("kube-controller-manager", "kube-apiserver", "etcd"):
            process = self.processes.pop(name, None)
            if process is None or process.poll() is not None:
                continue
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        etcd_data = self.workdir / "etcd-data"
        if etcd_data.exists():
            shutil.rmtree(etcd_data.read_text(), ignore_errors=True)
        if not os.environ.get("RECONCILE_KEEP_CONTROL_PLANE_DIR"):
            shutil.rmtree(self.workdir, ignore_errors=True)

    # -- audit -------------------------------------------------------------------------------

    def audit_events(self, user: str = TESTED_USER) -> list[dict[str, Any]]:
        self._read_audit_log()
        return [e for e in self._audit_events if e.get("user", {}).get("username") == user]

    def _read_audit_log(self) -> None:
        if not self.audit_log.exists():
            return
        with self.audit_log.open("rb") as log:
            log.seek(self._audit_read)
            written = log.read()
        complete = written[: written.rfind(b"\n") + 1]  # a line still being written waits
        self._audit_read += len(complete)
        for line in complete.splitlines():
            try:
                self._audit_events.append(json.loads(line))
            except ValueError:
                continue

    def audit_verbs(self, user: str = TESTED_USER, since: int = 0) -> Counter[str]:
        """Verbs the user sent, counting events after the first `since` ones."""
        return Counter(str(e.get("verb")) for e in self.audit_events(user)[since:])


def main() -> int:
    release = sys.argv[1] if len(sys.argv) > 1 else CURRENT_RELEASE
    plane = ControlPlane(build(release), release)
    plane.start()
    print(f"export KUBECONFIG={plane.kubeconfig}  # contexts: {ADMIN_USER}, {TESTED_USER}")
    print("Ctrl-C stops it.", flush=True)
    try:
        signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        plane.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Connection settings the way kubectl users expect them (live backend only).

Order: `--kubeconfig`, then `$KUBECONFIG` (colon-separated list, merged), then `~/.kube/config`
when it exists, then the in-cluster service account when running in a Pod.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from reconcile.cluster import in_cluster, kubeconfig_files
from reconcile.cluster.errors import ApiError
from reconcile.cluster.kubeconfig_files import KubeconfigError
from reconcile.cluster.tls_files import apply_settings
from reconcile.records import dataclass

if TYPE_CHECKING:
    from kubernetes.client import Configuration


class NoConfiguration(ApiError):
    """No usable cluster configuration (not an HTTP error: status 0)."""

    status = 0
    default_reason = "NoConfiguration"


def enter_client_package() -> None:
    """Let the client's modules be imported without running the `kubernetes` package's
    `__init__`, which imports every part of the client: dynamic (jsonschema, attrs,
    referencing), stream (websocket), watch, informer, leaderelection, utils, about a tenth of
    a live run's start-up, for parts the run never uses. The package module stands in empty
    (its `__path__` finds `kubernetes.client` and `kubernetes.config`); the first use of
    anything else in it runs its `__init__` after all, so whoever imports `kubernetes` later
    finds the whole package. Nothing to do once it is imported."""
    if "kubernetes" in sys.modules:
        return
    spec = importlib.util.find_spec("kubernetes")
    if spec is None or spec.loader is None:
        return  # not installed: the import that follows says so
    loader = spec.loader
    package = importlib.util.module_from_spec(spec)

    def complete(name: str) -> Any:
        delattr(package, "__getattr__")
        loader.exec_module(package)
        return getattr(package, name)

    setattr(package, "__getattr__", complete)  # noqa: B010 (a module's own __getattr__)
    sys.modules["kubernetes"] = package


@dataclass(frozen=True)
class Connection:
    configuration: Configuration
    source: str  # where the settings came from, for logs: a path or "in-cluster"
    context: str | None


SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


def _in_cluster(service_account_dir: Path) -> bool:
    return (
        bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and (service_account_dir / "token").exists()
    )


def load_connection(
    kubeconfig: str | None = None,
    context: str | None = None,
    *,
    service_account_dir: Path = SERVICE_ACCOUNT_DIR,
) -> Connection:
    env_paths = os.environ.get("KUBECONFIG", "")
    default_path = Path("~/.kube/config").expanduser()
    source: str | None = None
    if kubeconfig:
        source = kubeconfig
    elif env_paths.strip():
        source = env_paths
    elif default_path.exists():
        source = str(default_path)
    if source is not None:
        _check_files(source, explicit=bool(kubeconfig))
    elif not os.environ.get("KUBERNETES_SERVICE_HOST"):
        raise _nothing_found()  # as below, without loading the client to say so
    enter_client_package()
    # Imported here (the client is the live backend's alone, and a run that cannot connect
    # does not need it), and without `from kubernetes import ...`: that would ask the
    # package for its parts, and so load them all.
    from kubernetes.client.configuration import Configuration

    configuration = Configuration()
    try:
        if source is not None:
            _from_files(configuration, source, context)
        elif _in_cluster(service_account_dir):
            if context:
                raise NoConfiguration(
                    f"--context {context!r} needs a kubeconfig; none was found and the "
                    "in-cluster service account has no contexts"
                )
            in_cluster.configure(configuration, service_account_dir)
            source = "in-cluster"
        else:
            raise _nothing_found()
    except NoConfiguration:
        raise
    except KubeconfigError as exc:
        raise NoConfiguration(f"kubeconfig {source or 'in-cluster'}: {exc}") from None
    except OSError as exc:
        raise NoConfiguration(f"kubeconfig {source}: {exc.strerror or exc}") from None
    except Exception as exc:  # the client reports what it refuses with whatever it hit
        raise NoConfiguration(
            f"kubeconfig {source or 'in-cluster'}: cannot be read: {type(exc).__name__}: "
            f"{_one_line(exc)}"
        ) from None
    # Retries are ours (reads only, honouring Retry-After); urllib3 must not retry on its own.
    configuration.retries = False
    # The proxy the environment gives for this server, fixed now: with a token, the client
    # sets the host again before every request, and with it read the whole environment for
    # the proxy again (about a third of a millisecond of CPU a request).
    configuration.proxy = configuration.proxy
    return Connection(configuration=configuration, source=source, context=context)


def _from_files(configuration: Configuration, source: str, context: str | None) -> None:
    """Token, certificate and password users are read here; `exec` and `auth-provider`
    users go to the client's loader (it runs their plugins), given the same merged view.
    The client's loader costs a tenth of a second of start-up (requests, oauthlib,
    pydantic, dateutil) that the common kubeconfig does not need."""
    documents = []
    for path in source.split(os.pathsep):
        target = Path(path).expanduser() if path.strip() else None
        if target is None or not target.is_file():
            continue  # missing files in a list are skipped, as kubectl skips them
        with target.open(encoding="utf-8") as stream:
            document = yaml.safe_load(stream)
        if document is None:
            raise KubeconfigError(f"{path} is empty")
        # the directory as named, links not followed: kubectl resolves a relative path
        # beside the file as the user named it (a linked ~/.kube/config included)
        documents.append((Path(os.path.abspath(target)).parent, document))
    merged = kubeconfig_files.merge(documents)
    if kubeconfig_files.needs_client(merged, context):
        from kubernetes.config.kube_config import load_kube_config_from_dict

        load_kube_config_from_dict(
            kubeconfig_files.single_document(merged, context),
            client_configuration=configuration,
            persist_config=False,
        )
        return
    apply_settings(configuration, kubeconfig_files.settings(merged, context))


def _nothing_found() -> NoConfiguration:
    return NoConfiguration(
        "no cluster configuration: pass --kubeconfig, set KUBECONFIG, create "
        "~/.kube/config, or run in a Pod with a service account"
    )


def _check_files(source: str, *, explicit: bool) -> None:
    """A missing file named by --kubeconfig is an error naming it; in a $KUBECONFIG list,
    missing files are skipped as kubectl skips them, unless none exists."""
    paths = [p for p in source.split(os.pathsep) if p.strip()]
    existing = [p for p in paths if Path(p).expanduser().is_file()]
    if explicit or not existing:
        for path in paths:
            target = Path(path).expanduser()
            if not target.exists():
                where = "--kubeconfig" if explicit else "KUBECONFIG"
                raise NoConfiguration(f"{where} {path}: no such file")
            if not target.is_file():
                raise NoConfiguration(f"kubeconfig {path}: not a file")


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]

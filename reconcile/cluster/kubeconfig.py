"""Connection settings the way kubectl users expect them (live backend only).

Order: `--kubeconfig`, then `$KUBECONFIG` (colon-separated list, merged), then `~/.kube/config`
when it exists, then the in-cluster service account when running in a Pod.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reconcile.cluster.errors import ApiError

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
    from kubernetes.client import Configuration
    from kubernetes.config import ConfigException, load_kube_config
    from kubernetes.config.incluster_config import InClusterConfigLoader

    configuration = Configuration()
    try:
        if source is not None:
            load_kube_config(
                config_file=source,
                context=context,
                client_configuration=configuration,
                persist_config=False,
            )
        elif _in_cluster(service_account_dir):
            if context:
                raise NoConfiguration(
                    f"--context {context!r} needs a kubeconfig; none was found and the "
                    "in-cluster service account has no contexts"
                )
            InClusterConfigLoader(
                token_filename=str(service_account_dir / "token"),
                cert_filename=str(service_account_dir / "ca.crt"),
            ).load_and_set(configuration)
            source = "in-cluster"
        else:
            raise _nothing_found()
    except NoConfiguration:
        raise
    except ConfigException as exc:
        raise NoConfiguration(f"kubeconfig {source or 'in-cluster'}: {_one_line(exc)}") from None
    except OSError as exc:
        raise NoConfiguration(f"kubeconfig {source}: {exc.strerror or exc}") from None
    except Exception as exc:  # the client reports malformed files with whatever it hit
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

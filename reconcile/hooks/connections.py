"""Where webhook connections come from: urllib3 pool managers, one per (proxy, TLS settings),
each keeping `pool_size` connections per host alive for the whole run.

A hook's URL is parsed once (`specs.hook_url`), and the connection pool is given the scheme,
host and port of that parse, never the URL's text to read again its own way: the host the
allow-list approved is the host connected to (or, through a proxy, the host the proxy is asked
for, in a URL rebuilt from the same parts).

The environment is read once per hook URL, as curl and requests read it:
`HTTP(S)_PROXY` / `ALL_PROXY` unless `NO_PROXY` names the host (a suffix, `*`, a host:port, an
IP or a CIDR range), and `REQUESTS_CA_BUNDLE` / `CURL_CA_BUNDLE` for the CAs to trust, else
certifi's bundle. A webhook's own CA (its `caBundle`) replaces them.
"""

from __future__ import annotations

import base64
import contextlib
import ipaddress
import os
import threading
import urllib.request
from dataclasses import dataclass
from typing import Any

from urllib3 import BaseHTTPResponse, PoolManager, ProxyManager

from reconcile.hooks.deadline import WATCHED_POOLS
from reconcile.objects.redact import split_userinfo
from reconcile.secret_values import remember_credential
from reconcile.specs.hook_url import HookUrl, parse_hook_url

#: A pool manager's settings: proxy, CA file, client certificate and key files.
_ManagerKey = tuple[str | None, str | None, tuple[str, str] | None]


@dataclass(frozen=True)
class Route:
    """How one URL is reached: the URL as parsed once (`endpoint`), through which proxy (None:
    directly), trusting which CAs, and the basic authorization the user and password in the URL
    make (None: there are none)."""

    endpoint: HookUrl
    proxy: str | None
    ca_file: str | None
    authorization: str | None

    @property
    def url(self) -> str:
        """The URL without its user and password, rebuilt from the parsed parts."""
        return self.endpoint.url


class HookConnections:
    """Thread-safe."""

    def __init__(self, pool_size: int) -> None:
        self._pool_size = pool_size
        self._lock = threading.Lock()
        self._routes: dict[str, Route] = {}
        self._managers: dict[_ManagerKey, PoolManager] = {}

    def route(self, url: str) -> Route:
        """How `url` is reached, worked out once per URL. Raises HookUrlError (a ValueError)
        when it is no webhook URL."""
        with self._lock:
            found = self._routes.get(url)
        if found is None:
            found = _route(url)
            with self._lock:
                self._routes[url] = found
        return found

    def manager(
        self, route: Route, ca_file: str | None, client_cert: tuple[str, str] | None
    ) -> PoolManager:
        """The pool manager for `route`: `ca_file` (the hook's own CA) and `client_cert` (its
        client certificate and key files) as the hook's TLS settings resolved them."""
        key = (route.proxy, ca_file or route.ca_file, client_cert)
        with self._lock:
            found = self._managers.get(key)
            if found is None:
                found = self._managers[key] = self._new_manager(*key)
            return found

    def post(self, manager: PoolManager, route: Route, **request: Any) -> BaseHTTPResponse:
        """POST on `manager`'s pool for exactly the route's scheme, host and port; `request`:
        urllib3's urlopen arguments (body, headers, timeout, ...)."""
        endpoint = route.endpoint
        pool = manager.connection_from_host(
            endpoint.host_for_url, port=endpoint.port, scheme=endpoint.scheme
        )
        target = endpoint.target
        if isinstance(manager, ProxyManager) and endpoint.scheme == "http":
            # an HTTP proxy forwards plain http: it is asked for the absolute URL, rebuilt from
            # the parts checked (an https hook goes through a tunnel to its host and port)
            target = endpoint.url
            request["headers"] = {"Host": endpoint.netloc, **request.get("headers", {})}
        response: BaseHTTPResponse = pool.urlopen(
            "POST", target, assert_same_host=False, redirect=False, **request
        )
        return response

    def close(self) -> None:
        with self._lock:
            for manager in self._managers.values():
                manager.clear()
            self._managers.clear()

    def _new_manager(
        self, proxy: str | None, ca_file: str | None, client_cert: tuple[str, str] | None
    ) -> PoolManager:
        settings: dict[str, object] = {
            "num_pools": 32,
            "maxsize": self._pool_size,
            "block": False,
            "cert_reqs": "CERT_REQUIRED",
            "ca_certs": ca_file,
        }
        if client_cert is not None:
            settings["cert_file"], settings["key_file"] = client_cert
        if proxy:
            proxy, authorization = _without_credentials(proxy)
            headers = {"Proxy-Authorization": authorization} if authorization else None
            manager: PoolManager = ProxyManager(proxy, proxy_headers=headers, **settings)  # type: ignore[arg-type]
        else:
            manager = PoolManager(**settings)  # type: ignore[arg-type]
        # Connections a CallWatcher can cut (deadline.py), proxied ones too
        manager.pool_classes_by_scheme = WATCHED_POOLS
        return manager


def _without_credentials(url: str) -> tuple[str, str | None]:
    """`url` without its user and password, and the basic authorization they make (None:
    there are none), as curl and requests send them."""
    bare, user, password = split_userinfo(url)
    if not (user or password):
        return bare, None
    encoded = base64.b64encode(f"{user}:{password}".encode()).decode()
    remember_credential(password)
    remember_credential(encoded)
    return bare, f"Basic {encoded}"


def _route(url: str) -> Route:
    endpoint = parse_hook_url(url)
    authorization = None
    if endpoint.has_userinfo:
        encoded = base64.b64encode(f"{endpoint.user}:{endpoint.password}".encode()).decode()
        remember_credential(endpoint.password)
        remember_credential(encoded)
        authorization = f"Basic {encoded}"
    return Route(
        endpoint=endpoint,
        proxy=proxy_for(endpoint.scheme, endpoint.host, endpoint.port),
        ca_file=default_ca_file(),
        authorization=authorization,
    )


def proxy_for(scheme: str, host: str, port: int | None) -> str | None:
    """The proxy the environment gives for this scheme and host, or None."""
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(scheme) or proxies.get("all")
    if not proxy or _bypassed(host, port, proxies.get("no", "")):
        return None
    return proxy if "://" in proxy else f"http://{proxy}"


def _bypassed(host: str, port: int | None, no_proxy: str) -> bool:
    host = host.lower().strip("[]")
    address = None
    with contextlib.suppress(ValueError):
        address = ipaddress.ip_address(host)
    for entry in (e.strip().lower() for e in no_proxy.replace(" ", ",").split(",")):
        if not entry:
            continue
        if entry == "*":
            return True
        if address is not None:
            with contextlib.suppress(ValueError):
                if address in ipaddress.ip_network(entry.strip("[]"), strict=False):
                    return True
            continue
        name, _, entry_port = entry.partition(":")
        if entry_port and entry_port != str(port):
            continue
        name = name.lstrip(".")
        if host == name or host.endswith("." + name):
            return True
    return False


def default_ca_file() -> str | None:
    """The CA bundle to trust when a hook names none (None: the system's)."""
    named = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
    if named:
        return named
    try:
        import certifi
    except ImportError:  # pragma: no cover - certifi comes with urllib3's users
        return None
    where: str = certifi.where()
    return where

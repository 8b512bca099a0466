"""Where webhook connections come from: one `requests.Session` for the run, its adapter keeping
`pool_size` connections per host alive for the whole run.

The environment is read by requests, as it reads it for any session with `trust_env`, once per
hook URL (`route`): `HTTP(S)_PROXY` / `ALL_PROXY` unless `NO_PROXY` names the host (a suffix,
`*`, a host:port, an IP or a CIDR range), and `REQUESTS_CA_BUNDLE` / `CURL_CA_BUNDLE` for the CAs
to trust, else certifi's bundle. A webhook's own CA (its `caBundle`) replaces them. One thing is
added to requests' reading: an IPv6 address in a range `NO_PROXY` names is reached directly too,
as curl reaches it (requests matches ranges for IPv4 addresses only). A user and password in a
proxy's URL go to that proxy alone (`Proxy-Authorization`), as requests sends them.

A hook's URL is parsed once (`specs.hook_url`): requests is given the URL rebuilt from that
parse, which it must prepare unchanged, and the connection pool is chosen from the scheme, host
and port of that same parse: the host the allow-list approved is the host connected to (or,
through a proxy, the host the proxy is asked for).

`HookAdapter` is requests' HTTPAdapter with two pieces of urllib3 (requests' own transport)
that requests' public interface has no word for: its pools are `deadline.WATCHED_POOLS`, whose
connections a CallWatcher can cut (requests, like urllib3, bounds each socket read, not a whole
call), and the pool key comes from our parse, not from a second reading of the URL. Through the
methods requests documents for subclasses, it also remembers the pool chosen for a URL, names
the request's path from the one parse, and builds its Response without cookies: what is left of
a call's CPU beyond urllib3's is our own.

A call is a request prepared on its own and sent by the session's adapter. What the session
adds to a send is cookies, response hooks, redirects and, from its environment, a `~/.netrc`
login and default headers: a hook call has none of these (no redirect is followed, no cookie
kept or sent, no netrc read; a request carries only the headers the transport gives it), and
`Session.prepare_request`'s merging of them cost more CPU than the rest of a call.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import ipaddress
import os
import re
import threading
from typing import Any
from urllib.parse import unquote

import requests
from requests.adapters import HTTPAdapter
from requests.exceptions import InvalidProxyURL, InvalidURL
from requests.utils import (
    DEFAULT_CA_BUNDLE_PATH,
    get_environ_proxies,
    prepend_scheme_if_needed,
    select_proxy,
)
from urllib3 import HTTPConnectionPool, PoolManager
from urllib3.exceptions import ProxySchemeUnknown
from urllib3.util import parse_url

from reconcile.hooks.deadline import WATCHED_POOLS
from reconcile.records import dataclass
from reconcile.secret_values import remember_credential
from reconcile.specs.hook_url import HookUrl, parse_hook_url

#: Where a URL's pool is looked for: its pool manager, the pool's host (scheme, host, port) and
#: its TLS settings.
_PoolChoice = tuple[PoolManager, dict[str, Any], dict[str, Any]]


@dataclass(frozen=True)
class Route:
    """How one URL is reached: the URL as parsed once (`endpoint`), through which proxy (None:
    directly), trusting which CAs (`verify`: a bundle the environment names, or True for
    certifi's), and the basic authorization the user and password in the URL make (None:
    there are none)."""

    endpoint: HookUrl
    proxy: str | None
    verify: str | bool
    authorization: str | None

    @property
    def url(self) -> str:
        """The URL without its user and password, rebuilt from the parsed parts."""
        return self.endpoint.url

    @property
    def ca_file(self) -> str | None:
        return self.verify if isinstance(self.verify, str) else None


class HookAdapter(HTTPAdapter):
    """requests' adapter with watched pools, keyed by the URL as `parse_hook_url` reads it."""

    def __init__(self, **settings: Any) -> None:
        # (URL, verify, cert, proxies) -> where requests would look for its pool: the pool
        # manager (a proxy's, or the direct one) and the pool's key
        self._choices: dict[tuple[Any, ...], _PoolChoice] = {}
        super().__init__(**settings)

    def get_connection_with_tls_context(
        self,
        request: requests.PreparedRequest,
        verify: Any,
        proxies: dict[str, str] | None = None,
        cert: Any = None,
    ) -> HTTPConnectionPool:
        """The pool requests would choose, from a choice remembered per URL and TLS settings:
        making it anew (the URL parsed again, the proxy selected, the pool key built) was a
        tenth of a call's CPU. The pool itself is still taken from its manager, which keeps
        as many as it keeps (and their connections) whatever the number of hook URLs."""
        key = (request.url, verify, cert, tuple(sorted((proxies or {}).items())))
        choice = self._choices.get(key)
        if choice is None:
            choice = self._choices[key] = self._choose(request, verify, proxies, cert)
        manager, host, pool_kwargs = choice
        return manager.connection_from_host(**host, pool_kwargs=pool_kwargs)

    def _choose(
        self,
        request: requests.PreparedRequest,
        verify: Any,
        proxies: dict[str, str] | None,
        cert: Any,
    ) -> _PoolChoice:
        """requests' own choice (HTTPAdapter.get_connection_with_tls_context), kept."""
        try:
            host, pool_kwargs = self.build_connection_pool_key_attributes(request, verify, cert)
        except ValueError as exc:
            raise InvalidURL(exc, request=request) from None
        proxy = select_proxy(request.url or "", proxies)
        if not proxy:
            return self.poolmanager, host, pool_kwargs
        proxy = prepend_scheme_if_needed(proxy, "http")
        if not parse_url(proxy).host:
            raise InvalidProxyURL(
                "Please check proxy URL. It is malformed and could be missing the host."
            )
        return self.proxy_manager_for(proxy), host, pool_kwargs

    def build_response(self, req: requests.PreparedRequest, resp: Any) -> requests.Response:
        """requests' Response, without reading cookies from the answer (a hook call keeps and
        sends none) or a text encoding (the body is read as bytes)."""
        response = requests.Response()
        response.status_code = resp.status
        response.headers = resp.headers  # urllib3's: case-insensitive already, not copied
        response.raw = resp
        response.reason = resp.reason
        response.url = req.url or ""
        response.request = req
        response.connection = self
        return response

    def request_url(self, request: requests.PreparedRequest, proxies: dict[str, str] | None) -> str:
        """What the request line names: without a proxy, the path and query of the URL as
        parsed once (requests would parse it again, twice)."""
        if not proxies:
            return _parsed(request.url or "").target
        return str(super().request_url(request, proxies))

    def init_poolmanager(
        self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any
    ) -> None:
        super().init_poolmanager(connections, maxsize, block, **pool_kwargs)
        _watch(self.poolmanager)

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        scheme = proxy.partition("://")[0].lower()
        if scheme not in ("http", "https"):  # SOCKS: no pool a CallWatcher could cut
            raise ProxySchemeUnknown(scheme)
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        _watch(manager)
        return manager

    def build_connection_pool_key_attributes(
        self, request: requests.PreparedRequest, verify: Any, cert: Any = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        _, pool_kwargs = super().build_connection_pool_key_attributes(request, verify, cert)
        endpoint = _parsed(request.url or "")
        return {"scheme": endpoint.scheme, "host": endpoint.host, "port": endpoint.port}, (
            pool_kwargs
        )


#: The parse of a URL the adapter is given: always one `route` parsed and rebuilt, so the
#: same few URLs again and again.
_parsed = functools.lru_cache(maxsize=1024)(parse_hook_url)


def _watch(manager: PoolManager) -> None:
    """Connections a CallWatcher can cut (deadline.py), proxied ones too."""
    manager.pool_classes_by_scheme = WATCHED_POOLS


class HookConnections:
    """Thread-safe."""

    def __init__(self, pool_size: int) -> None:
        self._lock = threading.Lock()
        self._routes: dict[str, Route] = {}
        # the environment as requests reads it: its proxies, NO_PROXY and CA bundle variables
        self.session = requests.Session()
        self.session.trust_env = True
        self.adapter = HookAdapter(pool_connections=32, pool_maxsize=pool_size, pool_block=False)
        for scheme in ("http://", "https://"):
            self.session.mount(scheme, self.adapter)

    def route(self, url: str) -> Route:
        """How `url` is reached, worked out once per URL. Raises HookUrlError (a ValueError)
        when it is no webhook URL."""
        with self._lock:
            found = self._routes.get(url)
        if found is None:
            found = self._route(url)
            with self._lock:
                self._routes[url] = found
        return found

    def _route(self, url: str) -> Route:
        endpoint = parse_hook_url(url)
        authorization = None
        if endpoint.has_userinfo:
            encoded = base64.b64encode(f"{endpoint.user}:{endpoint.password}".encode()).decode()
            remember_credential(endpoint.password)
            remember_credential(encoded)
            authorization = f"Basic {encoded}"
        settings = self.session.merge_environment_settings(endpoint.url, {}, True, None, None)
        proxy = _chosen_proxy(endpoint, settings["proxies"])
        return Route(endpoint, proxy, settings["verify"], authorization)

    def send(
        self,
        route: Route,
        *,
        data: bytes,
        headers: dict[str, str],
        timeout: float,
        ca_file: str | None,
        client_cert: tuple[str, str] | None,
    ) -> requests.Response:
        """POST `data` to the route's URL (the response's body not read yet): through the
        route's proxy, trusting `ca_file` (the hook's own CA) or the route's CAs, with
        `client_cert` (its client certificate and key files)."""
        prepared = requests.PreparedRequest()
        prepared.prepare_method("POST")
        # the URL as checked, rebuilt from its parse: not prepare_url's reading (which would
        # requote `%41` as `A`), nor its cost, a third of a call's
        prepared.url = route.url
        prepared.prepare_headers(headers)
        prepared.prepare_body(data, None)
        # the adapter follows no redirect: a 3xx is the answer
        return self.adapter.send(
            prepared,
            stream=True,
            timeout=(timeout, timeout),
            verify=ca_file or route.verify,
            cert=client_cert,
            proxies={route.endpoint.scheme: route.proxy} if route.proxy else {},
        )

    def close(self) -> None:
        self.session.close()


def _chosen_proxy(endpoint: HookUrl, proxies: dict[str, str]) -> str | None:
    """The proxy requests would choose for `endpoint` among the environment's, its credentials
    remembered (to be scrubbed from any message quoting it); None when NO_PROXY names an IPv6
    range the host is in."""
    proxy = select_proxy(endpoint.url, proxies)
    if not proxy:
        return None
    _remember_userinfo(proxy)
    if ":" in endpoint.host and _in_ipv6_range(endpoint.host):
        return None
    return proxy


def _remember_userinfo(proxy: str) -> None:
    """A proxy URL's password (and the basic authorization it makes), read leniently: a URL
    requests cannot parse is quoted in its error."""
    # up to the last '@': a password may hold an unencoded '/', which would end the
    # authority for a parser
    userinfo, at, _ = proxy.partition("://")[2].rpartition("@")
    if not at:
        return
    user, _, password = userinfo.partition(":")
    if password:
        remember_credential(password)
        remember_credential(unquote(password))
        # a parser's error quotes what it took for the authority: the password up to its
        # first '/', '?' or '#'
        remember_credential(re.split(r"[/?#]", password, maxsplit=1)[0])
        plain = f"{unquote(user)}:{unquote(password)}".encode()
        remember_credential(base64.b64encode(plain).decode())


def _in_ipv6_range(host: str) -> bool:
    """Whether NO_PROXY (read as requests reads it) names an IPv6 address or range, in
    brackets or not, that `host` is in."""
    no_proxy = os.environ.get("no_proxy") or os.environ.get("NO_PROXY") or ""
    address = ipaddress.ip_address(host)
    for entry in no_proxy.replace(" ", "").split(","):
        with contextlib.suppress(ValueError):
            if address in ipaddress.ip_network(entry.strip("[]"), strict=False):
                return True
    return False


def proxy_for(scheme: str, host: str, port: int | None) -> str | None:
    """The proxy the environment gives for this scheme and host, or None."""
    netloc = f"[{host}]" if ":" in host else host
    url = f"{scheme}://{netloc}{f':{port}' if port else ''}/"
    endpoint = parse_hook_url(url)
    proxy = _chosen_proxy(endpoint, get_environ_proxies(endpoint.url))
    return prepend_scheme_if_needed(proxy, "http") if proxy else None


def default_ca_file() -> str | None:
    """The CA bundle to trust when a hook names none, as requests picks it: the environment's,
    else certifi's."""
    named = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
    if named:
        return named
    return DEFAULT_CA_BUNDLE_PATH

"""Webhook TLS and authentication, as Metacontroller's hooks spell them: `caBundle` (`inline`,
`secretRef`, `configMapRef`; key `ca.crt` by default), `authorization` (`type`, `Bearer` by
default, and a Secret key), `basicAuth` (a Secret, keys `username` / `password` by default) and
`clientTLS` (a Secret, keys `tls.crt` / `tls.key` by default); and a controller's
`endpointConfigs`, the same settings per host for every hook whose URL has that host. A hook
that sets any of these fields uses its own alone: there is no field-level merging."""

from __future__ import annotations

from dataclasses import replace

from reconcile.records import dataclass
from reconcile.specs.fields import Fields
from reconcile.specs.hook_url import HookUrlError, parse_hook_url
from reconcile.specs.hooks import KeyRef, WebhookSecurity, WebhookSpec

SECURITY_FIELDS = ("caBundle", "authorization", "basicAuth", "clientTLS")


@dataclass(frozen=True)
class EndpointConfig:
    host: str  # normalized: see `endpoint_host`
    security: WebhookSecurity


def endpoint_host(text: str) -> str:
    """`host[:port]` lower-cased, a port 80 or 443 dropped (Metacontroller treats them as the
    default port of either scheme)."""
    host, colon, port = text.lower().rpartition(":")
    if not colon:
        return port  # no port: rpartition leaves the whole text here
    return host if port in ("", "80", "443") else f"{host}:{port}"


def url_host(url: str) -> str:
    """The endpointConfigs key of a webhook URL: its host and port as `specs.hook_url` reads
    them (the reading the call is made to), so that no entry's credentials go to another
    host; "" for a URL that cannot be called."""
    try:
        parsed = parse_hook_url(url)
    except HookUrlError:
        return ""
    return endpoint_host(parsed.authority)


def _ref(fields: Fields, kind: str, key_default: str | None) -> KeyRef:
    """A `secretRef` / `configMapRef` naming one key: `name`, `namespace`, `key` (required
    when `key_default` is None)."""
    fields.check_keys({"name", "namespace", "key"})
    key = fields.string("key", key_default)
    return KeyRef(kind, fields.string("namespace"), fields.string("name"), key, fields.path)


def _secret_keys(fields: Fields, key_fields: tuple[tuple[str, str], ...]) -> tuple[KeyRef, ...]:
    """`secretRef: {name, namespace}` and, beside it, the names of the keys to read
    (`(field, default)` each)."""
    secret = fields.child("secretRef")
    secret.check_keys({"name", "namespace"})
    name, namespace = secret.string("name"), secret.string("namespace")
    return tuple(
        KeyRef("Secret", namespace, name, fields.string(field, default), secret.path)
        for field, default in key_fields
    )


def parse_security(fields: Fields) -> WebhookSecurity:
    """The security fields of a webhook or an endpointConfigs entry (SpecError naming the
    field)."""
    security = WebhookSecurity()
    ca = fields.optional_child("caBundle")
    if ca is not None:
        ca.check_keys({"inline", "secretRef", "configMapRef"})
        given = [k for k in ("inline", "secretRef", "configMapRef") if ca.has(k)]
        if len(given) != 1:
            raise fields.error("caBundle", "exactly one of inline, secretRef and configMapRef")
        if given[0] == "inline":
            security = replace(security, ca_inline=ca.string("inline"))
        else:
            kind = "Secret" if given[0] == "secretRef" else "ConfigMap"
            security = replace(security, ca_ref=_ref(ca.child(given[0]), kind, "ca.crt"))
    auth = fields.optional_child("authorization")
    basic = fields.optional_child("basicAuth")
    if auth is not None and basic is not None:
        raise fields.error("basicAuth", "authorization and basicAuth are mutually exclusive")
    if auth is not None:
        auth.check_keys({"type", "secretRef"})
        scheme = auth.string("type", "Bearer")
        if not scheme or scheme.lower() == "basic" or any(c.isspace() for c in scheme):
            raise auth.error("type", f"{scheme!r}: a scheme such as Bearer (Basic: use basicAuth)")
        token = _ref(auth.child("secretRef"), "Secret", None)
        security = replace(security, auth_scheme=scheme, auth_token=token)
    if basic is not None:
        basic.check_keys({"secretRef", "usernameKey", "passwordKey"})
        user, password = _secret_keys(
            basic, (("usernameKey", "username"), ("passwordKey", "password"))
        )
        security = replace(security, basic_username=user, basic_password=password)
    client = fields.optional_child("clientTLS")
    if client is not None:
        client.check_keys({"secretRef", "certKey", "privateKeyKey"})
        cert, key = _secret_keys(client, (("certKey", "tls.crt"), ("privateKeyKey", "tls.key")))
        security = replace(security, client_cert=cert, client_key=key)
    return security


def with_endpoint(webhook: WebhookSpec, configs: tuple[EndpointConfig, ...]) -> WebhookSpec:
    """The webhook with the settings of the endpointConfigs entry for its host, unless it sets
    any of its own (then it uses those alone)."""
    if not webhook.security.empty:
        return webhook
    host = url_host(webhook.url)
    found = next((c for c in configs if c.host == host), None)
    return replace(webhook, security=found.security) if found is not None else webhook


def parse_endpoint_configs(spec: Fields) -> tuple[EndpointConfig, ...]:
    configs = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(spec.children("endpointConfigs")):
        entry.check_keys({"host", *SECURITY_FIELDS})
        host = endpoint_host(entry.string("host"))
        if not host:
            raise entry.error("host", "is required")
        if host in seen:
            raise entry.error(
                "host", f"{host!r} is already configured at endpointConfigs[{seen[host]}]"
            )
        seen[host] = i
        configs.append(EndpointConfig(host, parse_security(entry)))
    return tuple(configs)

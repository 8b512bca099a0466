"""How a hook is called: a webhook or a local command."""

from __future__ import annotations

from dataclasses import field
from enum import StrEnum

from reconcile.records import dataclass


@dataclass(frozen=True)
class EtagSettings:
    """Webhook response caching keyed by the request body (RFC 7232 `If-None-Match`)."""

    enabled: bool = False
    cache_timeout_seconds: float = 60.0
    cache_cleanup_seconds: float = 300.0


@dataclass(frozen=True)
class KeyRef:
    """One key of a Secret or ConfigMap; `field` is where the spec names it, for messages."""

    kind: str  # Secret or ConfigMap
    namespace: str
    name: str
    key: str
    field: str

    def describe(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name} key {self.key!r} ({self.field})"


@dataclass(frozen=True)
class WebhookSecurity:
    ca_inline: str | None = None
    ca_ref: KeyRef | None = None
    auth_scheme: str = "Bearer"
    auth_token: KeyRef | None = None
    basic_username: KeyRef | None = None
    basic_password: KeyRef | None = None
    client_cert: KeyRef | None = None
    client_key: KeyRef | None = None

    @property
    def empty(self) -> bool:
        return self == WebhookSecurity()

    def refs(self) -> tuple[KeyRef, ...]:
        return tuple(
            ref
            for ref in (
                self.ca_ref,
                self.auth_token,
                self.basic_username,
                self.basic_password,
                self.client_cert,
                self.client_key,
            )
            if ref is not None
        )


@dataclass(frozen=True)
class WebhookSpec:
    url: str
    timeout: float = 10.0
    etag: EtagSettings = field(default_factory=EtagSettings)
    # TLS and authentication (the hook's own, or its host's endpointConfigs entry)
    security: WebhookSecurity = field(default_factory=WebhookSecurity)


class CommandProtocol(StrEnum):
    """How a command hook is run: `exec` starts it once per call (the request on stdin, the
    response on stdout, then it exits); `lines` starts it once per worker and keeps it, one
    compact JSON request per line on its stdin, one JSON response per line on its stdout."""

    EXEC = "exec"
    LINES = "lines"


class HookVersion(StrEnum):
    """Metacontroller's hook API versions. v2 keys every object map of a request
    `namespace/name` (`name` for a cluster-scoped object), whatever the parent's scope, and
    reads answers strictly by default."""

    V1 = "v1"
    V2 = "v2"


@dataclass(frozen=True)
class CommandSpec:
    """A local program: the request JSON on stdin, the response JSON on stdout. No shell."""

    argv: tuple[str, ...]
    timeout: float = 10.0
    working_dir: str | None = None  # resolved against the controller's source directory
    env: tuple[tuple[str, str], ...] = ()
    # variables of the run's environment passed through (checked by specs.hook_env)
    inherit_env: tuple[str, ...] = ()
    protocol: CommandProtocol = CommandProtocol.EXEC


@dataclass(frozen=True)
class HookSpec:
    """Exactly one of `webhook` and `command` is set. `name` says which hook (e.g. `sync`) and
    `owner` which controller, for messages."""

    name: str
    owner: str
    webhook: WebhookSpec | None = None
    command: CommandSpec | None = None
    version: HookVersion = HookVersion.V1
    # responseUnMarshallMode strict: unknown and duplicated fields in an answer are refused
    strict: bool = False

    @property
    def uniform_keys(self) -> bool:
        """Object maps in requests keyed `namespace/name` whatever the parent's scope (v2)."""
        return self.version is HookVersion.V2

    @property
    def target(self) -> str:
        """Where the hook goes, for reports (a URL or the command line)."""
        if self.webhook is not None:
            return self.webhook.url
        if self.command is not None:
            return " ".join(self.command.argv)
        return ""

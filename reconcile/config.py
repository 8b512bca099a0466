"""The run configuration: everything the CLI parsed, as plain typed values (no I/O here)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class LogFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


class LogLevel(StrEnum):
    DEBUG = "debug"
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True)
class ConnectionSettings:
    """How to reach the API server (kubectl's conventions) and how hard to push it."""

    kubeconfig: str | None = None
    context: str | None = None
    qps: float = 50.0
    burst: int = 100
    request_timeout: float = 30.0


@dataclass(frozen=True)
class LoggingSettings:
    level: LogLevel = LogLevel.INFO
    format: LogFormat = LogFormat.TEXT


@dataclass(frozen=True)
class RunConfig:
    connection: ConnectionSettings = field(default_factory=ConnectionSettings)
    logging: LoggingSettings = field(default_factory=LoggingSettings)

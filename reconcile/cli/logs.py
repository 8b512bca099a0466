"""Logging set-up: human text or one JSON object per line, always to stderr."""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

from reconcile.config import LogFormat, LoggingSettings
from reconcile.objects.terminal import printable
from reconcile.secret_values import scrub

# Attributes every LogRecord has; anything else was passed with `extra=` and is structured data.
_STANDARD_ATTRS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "taskName",
}


def _timestamp(record: logging.LogRecord) -> str:
    seconds = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
    return f"{seconds}.{int(record.msecs):03d}Z"


def _extras(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in vars(record).items() if k not in _STANDARD_ATTRS}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": _timestamp(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update(_extras(record))
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        # Messages may quote hook output or API errors: no Secret value leaves through a log.
        return scrub(json.dumps(entry, default=str, sort_keys=False))


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = f"{_timestamp(record)} {record.levelname:<7} {record.name}: {record.getMessage()}"
        extras = _extras(record)
        if extras:
            line += " " + " ".join(f"{k}={v}" for k, v in extras.items())
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        # a commit subject or a hook's stderr may carry terminal escapes: shown, not obeyed
        return printable(scrub(line))


def configure_logging(settings: LoggingSettings) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if settings.format is LogFormat.JSON else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(settings.level.value.upper())
    # The HTTP stack is noisy at debug level and could print request bodies: keep it quiet.
    # Its warnings too (a traceback for headers a cut call left half read): every failure of
    # a request reaches the run's own log as that request's error. GitPython logs each git
    # command at debug level and git's error lines as warnings: they reach the run's log as
    # the git source's error.
    for noisy in ("urllib3", "requests", "kubernetes", "git"):
        logging.getLogger(noisy).setLevel(logging.ERROR)

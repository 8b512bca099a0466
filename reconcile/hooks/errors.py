"""What a hook call returns, and how it fails."""

from __future__ import annotations

import re
from typing import Any

from reconcile.records import dataclass
from reconcile.secret_values import scrub_cut
from reconcile.specs.hooks import HookSpec

#: The most a hook may answer (webhook body or command stdout): far above any real response,
#: it keeps a broken or hostile hook from filling the run's memory.
MAX_RESPONSE_BYTES = 16 * 1024 * 1024
#: How much of a response body goes into an error (whitespace collapsed).
BODY_EXCERPT = 500
#: How much of a command's stderr goes into an error (the tail).
STDERR_TAIL = 1000
#: How much of an excerpt is repeated in the one-line message.
MESSAGE_EXCERPT = 200

_WHITESPACE = re.compile(r"\s+")


class HookError(Exception):
    """A failed hook call.

    `reason` is a short machine word: 'timeout', 'http-status', 'bad-json', 'connection',
    'exit-status', 'not-an-object', 'spawn', 'too-large' (output over MAX_RESPONSE_BYTES, or
    holding more values than objects/bounds.py allows), 'too-deep' (nested too deeply) or
    'repeated-field' (a field twice in one object of a strict answer).
    `message` names the controller, the hook and its
    target. `status` is the HTTP status or the exit code (None when there is none). `excerpt`
    is an excerpt of the response body or the tail of stderr ("" when there is none), at most
    1000 characters; request and response bodies are never carried whole.
    """

    def __init__(
        self,
        hook: HookSpec,
        reason: str,
        detail: str,
        *,
        status: int | None = None,
        excerpt: str = "",
    ) -> None:
        self.hook = hook
        self.reason = reason
        self.status = status
        self.excerpt = excerpt[:STDERR_TAIL]
        self.message = f"{hook.owner}: {hook.name} hook {hook.target}: {detail}"
        super().__init__(self.message)

    def __reduce__(self) -> tuple[Any, ...]:  # keep it picklable despite the keyword arguments
        return (_rebuild, (self.hook, self.reason, self.message, self.status, self.excerpt))


def _rebuild(
    hook: HookSpec, reason: str, message: str, status: int | None, excerpt: str
) -> HookError:
    error = HookError(hook, reason, "", status=status, excerpt=excerpt)
    error.message = message
    error.args = (message,)
    return error


@dataclass(frozen=True)
class HookResult:
    """A hook's response. `duration` is the wall time of the call in seconds, retries included;
    `cached` says the body came from the etag cache (the server answered 304 or 412)."""

    response: dict[str, Any]
    duration: float
    cached: bool = False
    attempts: int = 1


def decode(data: bytes | bytearray) -> str:
    return data.decode("utf-8", errors="replace")


def head_excerpt(data: bytes | bytearray, limit: int = BODY_EXCERPT) -> str:
    """The start of a body, whitespace collapsed, marked when cut. Secret values are scrubbed
    before it is cut, and so is a value the cut splits."""
    cut = len(data) > limit * 4
    text = scrub_cut(decode(data[: limit * 4]), cut_end=cut)
    text = _WHITESPACE.sub(" ", text).strip()
    if len(text) > limit or cut:
        return text[:limit].rstrip() + "…"
    return text


def tail_excerpt(data: bytes, limit: int = STDERR_TAIL, *, cut_before: bool = False) -> str:
    """The end of an output (stderr), marked when cut; `cut_before`: `data` is itself only the
    end of the output. Scrubbed as `head_excerpt` is."""
    cut = cut_before or len(data) > limit * 4
    text = scrub_cut(decode(data[-limit * 4 :]), cut_start=cut).strip()
    if len(text) > limit or cut:
        return "…" + text[-(limit - 1) :]
    return text


def one_line(text: str, limit: int = MESSAGE_EXCERPT) -> str:
    """An excerpt shortened for a one-line message."""
    flat = _WHITESPACE.sub(" ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"

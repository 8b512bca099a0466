"""Hook transports: a request dict in, a response dict out, over a webhook or a local command.

Request and response bodies may carry Secrets: they are never logged, and errors carry only
excerpts of a response body or of a command's stderr.
"""

from reconcile.hooks.caller import HookCaller
from reconcile.hooks.errors import HookError, HookResult

__all__ = ["HookCaller", "HookError", "HookResult"]

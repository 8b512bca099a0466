"""Which variables of the run's environment a command hook may have: the rules, without I/O.

A command hook is code from the controller files, which a pull request can edit; the run holds
credentials (a kubeconfig, git tokens, a CI's tokens). So a hook starts from a small base
(`BASE_NAMES`, the `LC_*` locale), gets the variables its spec declares (`env`), and those it
names in `inheritEnv` unless the name is one of the run's own or looks like a credential.
"""

from __future__ import annotations

import re

#: What any program needs to run as the user expects: where programs are, home, locale, zone,
#: temporary files.
BASE_NAMES = frozenset({"PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR"})
BASE_PREFIXES = ("LC_",)

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

#: The run's own variables: its options, its kubeconfig, git's credential helpers.
RUN_NAMES = frozenset(
    {"KUBECONFIG", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_SSH", "GIT_SSH_COMMAND", "SSH_AUTH_SOCK"}
)
RUN_PREFIXES = ("RECONCILE_", "GIT_CONFIG")

#: Names that say they hold a credential (GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, VAULT_TOKEN,
#: ACTIONS_RUNTIME_TOKEN, DB_PASSWORD, ...): never passed, even when a hook asks.
CREDENTIAL_NAME = re.compile(
    r"TOKEN|SECRET|PASSW|CREDENTIAL|PRIVATE|ACCESS_KEY|API_KEY|APIKEY|AUTH(?!OR)|COOKIE|SESSION",
    re.IGNORECASE,
)


def in_base(name: str) -> bool:
    return name in BASE_NAMES or name.startswith(BASE_PREFIXES)


def refusal(name: str) -> str | None:
    """Why `inheritEnv` may not name `name`, or None when it may."""
    if not NAME.match(name):
        return f"{name!r} is not a variable name"
    if name in RUN_NAMES or name.startswith(RUN_PREFIXES):
        return f"{name} is the run's own (its kubeconfig, options or git credentials)"
    if CREDENTIAL_NAME.search(name):
        return (
            f"{name} looks like a credential, which command hooks never get from the run "
            "(declare the value the hook needs in `env`, or use a webhook)"
        )
    return None

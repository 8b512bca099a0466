"""Git credentials, from the environment only (a mounted Secret in a CronJob, a CI secret):
never from the command line, never into a URL, a log, a report or an error message.

| Variable | Meaning |
|---|---|
| `RECONCILE_GIT_TOKEN` | An HTTPS token (GitHub, GitLab, ...), sent as HTTP basic auth. |
| `RECONCILE_GIT_TOKEN_FILE` | A file holding that token (for a mounted Secret). |
| `RECONCILE_GIT_USERNAME` | The basic-auth user for the token (default `x-access-token`). |
| `RECONCILE_GIT_SSH_KEY_FILE` | A private key for `ssh://` and `git@host:path` URLs. |
| `RECONCILE_GIT_KNOWN_HOSTS` | The known-hosts file SSH checks hosts against (strictly). |

A user and password written into an HTTPS URL are taken out of it the same way: git is given
the URL without them and the credential as a header through its environment (so it is not on
any process's command line either), and every form of it is scrubbed from output.
"""

from __future__ import annotations

import base64
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

from reconcile.records import dataclass
from reconcile.secret_values import remember_credential

DEFAULT_USERNAME = "x-access-token"


class CredentialError(ValueError):
    pass


@dataclass(frozen=True)
class Remote:
    """A repository URL as git is given it (no credentials) and as people are shown it."""

    url: str  # what git fetches from (no userinfo)
    env: dict[str, str] = field(default_factory=dict)  # credentials for git, if any

    @property
    def display(self) -> str:
        return self.url


def remote(url: str, environ: Mapping[str, str] | None = None) -> Remote:
    """The URL without credentials, and the environment that gives them to git."""
    environ = os.environ if environ is None else environ
    plain, user, password = _split_userinfo(url)
    token = environ.get("RECONCILE_GIT_TOKEN", "")
    token_file = environ.get("RECONCILE_GIT_TOKEN_FILE", "")
    if token_file and not token:
        try:
            token = Path(token_file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise CredentialError(
                f"RECONCILE_GIT_TOKEN_FILE: cannot read {token_file}: {exc.strerror}"
            ) from exc
    env: dict[str, str] = {
        "GIT_TERMINAL_PROMPT": "0",  # never wait for a password on a terminal
        "GIT_ASKPASS": "true",
        "SSH_ASKPASS": "true",
    }
    if password or token:
        secret = password or token
        login = user or environ.get("RECONCILE_GIT_USERNAME", "") or DEFAULT_USERNAME
        remember_credential(secret)
        basic = base64.b64encode(f"{login}:{secret}".encode()).decode()
        remember_credential(basic)
        # the credential is for the host named; git would send its extra header on to the
        # host a redirect names: redirects are not followed while it carries one
        env.update(
            _git_config(
                {
                    "http.extraHeader": f"Authorization: Basic {basic}",
                    "http.followRedirects": "false",
                }
            )
        )
    key_file = environ.get("RECONCILE_GIT_SSH_KEY_FILE", "")
    known_hosts = environ.get("RECONCILE_GIT_KNOWN_HOSTS", "")
    if key_file or known_hosts:
        options = ["ssh", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes"]
        if key_file:
            options += ["-i", key_file, "-o", "IdentitiesOnly=yes"]
        if known_hosts:
            options += ["-o", f"UserKnownHostsFile={known_hosts}"]
        env["GIT_SSH_COMMAND"] = shlex.join(options)
    return Remote(plain, env)


_SCP_LIKE = re.compile(r"^(?P<userinfo>[^@/]+)@(?P<host>[^:/]+):(?P<path>.*)$")


def _split_userinfo(url: str) -> tuple[str, str, str]:
    """(url without userinfo, user, password) for URLs with a scheme; others as given. A
    password in an scp-like URL (`user:password@host:path`) is refused: SSH takes keys."""
    if "://" not in url:
        scp = _SCP_LIKE.match(url)
        if scp is not None and ":" in scp.group("userinfo"):
            user, _, password = scp.group("userinfo").partition(":")
            remember_credential(password)
            raise CredentialError(
                f"--git {user}:<redacted>@{scp.group('host')}:{scp.group('path')}: a password "
                "in an scp-like URL is not supported; use RECONCILE_GIT_SSH_KEY_FILE, or an "
                "https:// URL with RECONCILE_GIT_TOKEN"
            )
        return url, "", ""
    parts = urlsplit(url)
    after_scheme = url.partition("://")[2]
    if "@" not in parts.netloc and "@" in after_scheme:
        # an '@' past the host part: a password with an unencoded '/', '?' or '#' in it,
        # which git and the reports would show as part of the path; never shown, refused
        suspect = after_scheme.rpartition("@")[0]
        remember_credential(suspect.partition(":")[2] or suspect)
        raise CredentialError(
            f"--git {parts.scheme}://<redacted>@...: an '@' after the host part; percent-encode "
            "a '/', '?' or '#' in a password, or give the password as RECONCILE_GIT_TOKEN"
        )
    if "@" not in parts.netloc:
        return url, "", ""
    userinfo, _, host = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    if parts.scheme in ("ssh", "git+ssh"):
        # ssh users are not secrets (git@host); passwords are not supported there
        return urlunsplit(parts._replace(netloc=f"{user}@{host}")), "", ""
    if not password and user:
        password, user = user, ""  # https://TOKEN@host: the token alone
    return urlunsplit(parts._replace(netloc=host)), unquote(user), unquote(password)


def _git_config(settings: dict[str, str]) -> dict[str, str]:
    """git configuration through the environment (git 2.31+), not the command line."""
    env = {"GIT_CONFIG_COUNT": str(len(settings))}
    for index, (key, value) in enumerate(settings.items()):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    return env

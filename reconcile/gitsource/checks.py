"""What may reach git, checked before git runs: a repository URL that is an address and nothing
else, and a ref that is one revision and not an option."""

from __future__ import annotations

import re

from reconcile.gitsource.errors import GitSourceError

CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# `<transport>::<address>` runs a remote helper (`ext::` runs any command)
_TRANSPORT = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::")
SCHEMES = frozenset({"http", "https", "ssh", "git", "file", "git+ssh", "ssh+git"})


def check_url(url: str) -> None:
    """GitSourceError unless `url` is a repository address and nothing else: not an option,
    no control characters, no remote-helper transport, a known scheme."""
    if not url:
        raise GitSourceError("--git: the URL is empty")
    if url.startswith("-"):
        raise GitSourceError("--git: a URL cannot start with '-' (git would read an option)")
    if CONTROL.search(url):
        raise GitSourceError("--git: the URL holds a control character")
    if _TRANSPORT.match(url):
        raise GitSourceError(
            f"--git: {url.split('::', 1)[0]}:: transports are not supported (they run commands)"
        )
    if "://" in url:
        scheme = url.split("://", 1)[0].lower()
        if scheme not in SCHEMES:
            raise GitSourceError(
                f"--git: the scheme {scheme}:// is not supported ({', '.join(sorted(SCHEMES))})"
            )


# Names git resolves to what the local cache last did, not to anything of the repository:
# pseudo-refs (FETCH_HEAD, ORIG_HEAD, ...) and this tool's own refs (revisions.REMOTE_HEAD).
_CACHE_STATE = re.compile(
    r"^((?:FETCH|ORIG|MERGE|CHERRY_PICK|REVERT|REBASE|BISECT)_HEAD|AUTO_MERGE"
    r"|(?:refs/)?reconcile/remote-head|refs/reconcile/[^^~:]*)(?![A-Za-z0-9_./-])"
)


def check_ref(ref: str) -> None:
    """GitSourceError unless `ref` can be given to git as one revision: not empty, not read as
    an option, no control character, not a range, not a reflog entry (those name the history of
    this tool's cache, not the repository's)."""
    problem = None
    if not ref:
        problem = "is empty"
    elif ref.startswith("-"):
        problem = "cannot start with '-' (git would read an option)"
    elif CONTROL.search(ref):
        problem = "holds a control character"
    elif ".." in ref:
        problem = "is a range (..), not one commit"
    elif "@{" in ref:
        problem = (
            "names a reflog entry (@{...}): the history of the local cache, not of the repository"
        )
    elif (cache_state := _CACHE_STATE.match(ref)) is not None:
        problem = (
            f"names {cache_state.group(1)}: the state of the local cache (what its last fetch "
            "or operation left), not a revision of the repository"
        )
    if problem is not None:
        raise GitSourceError(f"--git-ref {ref!r}: {problem}")

"""What a ref given for a repository may be (`--git-ref`, `reconcile diff --git`'s BASE and
HEAD): a branch, tag or ref name or a commit SHA, answered by `git ls-remote` and fetched alone;
or any expression `git rev-parse` resolves to one commit (`HEAD~1`, `67763d1^`, `v2^{commit}`,
`origin/main`), resolved in the cache after fetching the remote's branches, tags and
remote-tracking refs under their own names, so that git's rules read it as in a clone of it.

Nothing reaches git as an option: a ref starting with `-` is refused before git runs
(`checks.check_ref`), and every command that takes one puts `--end-of-options` before it. The
expression is resolved to a commit id first; only the id is used after that.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from reconcile.gitsource.errors import GitSourceError

HEX = re.compile(r"^[0-9a-f]{4,40}$")
# What git does not allow in a ref name (check-ref-format): such a ref is an expression.
_NOT_IN_NAMES = ("..", "@{", "\\", "~", "^", ":", "?", "*", "[", "//", " ")
# The remote's refs, fetched under their own names (a later fetch prunes what it deleted).
MIRROR = (
    "+refs/heads/*:refs/heads/*",
    "+refs/tags/*:refs/tags/*",
    "+refs/remotes/*:refs/remotes/*",
)
# The remote's HEAD (perhaps detached): the cache's HEAD is set to it, so `HEAD~1` counts back
# from the remote's HEAD.
REMOTE_HEAD = "refs/reconcile/remote-head"


def is_ref_name(ref: str) -> bool:
    """Whether `ref` may be a name the remote lists (git's ref name rules), not an expression."""
    return not (
        any(bad in ref for bad in _NOT_IN_NAMES)
        or ref.endswith((".", "/", ".lock"))
        or ref.startswith("/")
        or "/." in ref
    )


def spellings(ref: str) -> tuple[str, ...]:
    """What `ref` may mean, in order: itself; and for `origin/<rest>`, when the repository has
    no remote-tracking ref of that name (it is the origin, not a clone of it), `<rest>`."""
    if ref.startswith("origin/") and len(ref) > len("origin/"):
        return ref, ref.removeprefix("origin/")
    return (ref,)


def rev_parse(git: Callable[..., str], url: str, ref: str) -> str:
    """The commit id `ref` names in the cache `git` runs in (its refs fetched from `url`)."""
    for spelling in spellings(ref):
        try:
            found = git("rev-parse", "--verify", "--end-of-options", spelling).strip()
        except GitSourceError:
            continue
        try:
            return git("rev-parse", "--verify", "--end-of-options", f"{found}^{{commit}}").strip()
        except GitSourceError:
            raise GitSourceError(f"git: {ref!r} in {url} is not a commit") from None
    if is_ref_name(ref):
        raise GitSourceError(f"git: {url} has no branch, tag or ref named {ref!r}")
    raise GitSourceError(f"git: {url} has no commit {ref!r} (as git rev-parse reads it)")

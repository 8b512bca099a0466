"""The git source's one error."""

from __future__ import annotations


class GitSourceError(Exception):
    """The repository cannot be read as asked; the message names the URL (never credentials)
    and says why."""

"""`generateName`: a name made from a prefix and random characters, as apiserver's
storage/names `SimpleNameGenerator` makes it."""

from __future__ import annotations

import secrets

# What apimachinery's `utilrand.String` draws from for `generateName` suffixes (no vowels, so no
# words, and no look-alike characters).
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
GENERATED_SUFFIX_LENGTH = 5
_MAX_GENERATE_NAME_PREFIX = 63 - GENERATED_SUFFIX_LENGTH


def generate_name(prefix: str) -> str:
    """`generateName` + 5 random characters; long prefixes are cut like the real server does."""
    base = prefix[:_MAX_GENERATE_NAME_PREFIX]
    suffix = "".join(secrets.choice(_SUFFIX_ALPHABET) for _ in range(GENERATED_SUFFIX_LENGTH))
    return base + suffix

"""Controllers and manifests from a git repository: `--git URL --git-ref REF`."""

from reconcile.gitsource.errors import GitSourceError
from reconcile.gitsource.source import Checkout, checkout, default_cache_dir

__all__ = ["Checkout", "GitSourceError", "checkout", "default_cache_dir"]

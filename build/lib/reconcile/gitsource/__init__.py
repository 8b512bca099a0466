"""Controllers and manifests from a git repository: `--git URL --git-ref REF`."""

from reconcile.gitsource.source import Checkout, GitSourceError, checkout, default_cache_dir

__all__ = ["Checkout", "GitSourceError", "checkout", "default_cache_dir"]

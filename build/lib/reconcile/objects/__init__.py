"""Pure helpers for raw Kubernetes objects (plain dicts): metadata access and selectors."""

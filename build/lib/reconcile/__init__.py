"""reconcile: Metacontroller's declarative controller APIs as a one-shot batch reconciler."""

__version__ = "0.1.0"

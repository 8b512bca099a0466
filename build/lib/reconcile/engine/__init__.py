"""The reconcile engine: pure decisions about what to send to the cluster."""

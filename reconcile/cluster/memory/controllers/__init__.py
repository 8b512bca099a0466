"""The controllers that act on what a write leaves behind (kube-controller-manager's garbage
collector and namespace controller, apiextensions-apiserver's CRD finalizer), run to their
fixed point inside the request (`lifecycle`)."""

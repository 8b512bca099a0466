"""Access to a Kubernetes API: one `Cluster` protocol, a live and an in-process backend."""

from reconcile.cluster.errors import (
    AlreadyExists,
    ApiError,
    BadRequest,
    Conflict,
    Forbidden,
    Gone,
    Invalid,
    MethodNotAllowed,
    NotFound,
    TooManyRequests,
    Unauthorized,
    Unavailable,
)
from reconcile.cluster.protocol import Cluster, list_all
from reconcile.cluster.stats import RequestStats
from reconcile.cluster.types import ObjectList, Propagation, ResourceInfo

__all__ = [
    "AlreadyExists",
    "ApiError",
    "BadRequest",
    "Cluster",
    "Conflict",
    "Forbidden",
    "Gone",
    "Invalid",
    "MethodNotAllowed",
    "NotFound",
    "ObjectList",
    "Propagation",
    "RequestStats",
    "ResourceInfo",
    "TooManyRequests",
    "Unauthorized",
    "Unavailable",
    "list_all",
]

"""Storage, as kube-apiserver's storage layer keeps it: the object store and its indexes
(`store`), lists cut into pages (`paging`), and generated names (`names`)."""

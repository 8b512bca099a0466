"""The generic registry store (kube-apiserver's registry/generic/registry/store.go): the path
every create, update and status write takes to storage (`writes`), and the field ownership it
keeps on the way (`fieldmanager`, structured-merge-diff's managedFields and server-side apply)."""

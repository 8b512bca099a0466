"""What a request meets on its way to the registry and back (kube-apiserver's endpoints): the
version it speaks against the one its objects are stored as (`versions`), and the field
selectors a list may give (`fieldselectors`)."""

"""What the server serves: the built-in resources (`catalog`, data only) and the versions each
release served (`served`), the release the server behaves as (`releases`), and discovery over
what it serves, CRDs' resources included (`discovery`)."""

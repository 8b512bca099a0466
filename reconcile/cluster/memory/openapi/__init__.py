"""Objects against OpenAPI schemas: built-in kinds decoded by their release's official schemas
(`decoding`); custom resources checked against their CRD's structural schema as kube-openapi's
validator checks them (`validator`, with its numbers), with what apiextensions-apiserver checks
beside it: list types (`listtypes`), embedded resources (`embedded`), the formats it keeps
(`formats`) and the patterns it compiles (`patterns`)."""

"""Per kind, what the server does to an object between decoding the request and storing it
(kube-apiserver's admission and pkg/registry/<group>/<kind>/strategy.go): built-in objects
through their release's schema, defaults and rules (`admission`, and per kind family `kinds`),
their status writes (`status`), CustomResourceDefinitions (`crd`), and custom resources through
their CRD's schema and CEL rules (`custom_resource`)."""

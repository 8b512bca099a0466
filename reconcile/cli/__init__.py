"""The `reconcile` command line: each command's options parsed and checked into a configuration
(`run`, `diff`, `status`; `main` picks the command), then handed to `reconcile.job`. No
Kubernetes logic lives here. Shared by the commands: the help layout (`help`), option parsers
and checks (`support`, `values`), typer's option conversion (`conversion`) and the log setup
(`logs`)."""

"""The generated reference pages of the documentation site (docs/reference/), written by
`scripts/reference.py` from the program's own entry points: the typer apps, the metrics a run
writes, the report's JSON schema, the environment the code reads, the GitHub Action's
action.yml, and a review comment made by `reconcile diff` itself."""

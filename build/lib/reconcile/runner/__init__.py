"""The runner: observe (one LIST per resource type), call hooks, plan, act; pass after pass."""

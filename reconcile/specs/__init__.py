"""The Metacontroller controller APIs as typed, validated models (pure: no I/O)."""

"""What the API server keeps of an object: the schemas of the built-in kinds of each release
(`builtin`) and the pruning walk a kind's schema implies (`pruning`), for both backends."""

"""Speed and scale measurements of mlirkit (docs/performance.md): run from the repository root as
``python -m perf.<module>``. Not part of the installed package; uses mlirkit's public API only."""

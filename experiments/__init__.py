"""Experiments on mlirkit: the investigations behind its defaults, their negative results and notes.

Not part of the installed package: run from the repository root as ``python -m experiments.<module>``
(experiments/README.md lists them). Nothing in ``mlirkit`` imports this package.
"""

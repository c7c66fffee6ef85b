"""The base layer: what every other layer may use and which imports nothing of mlirkit's above it.

- :mod:`~mlirkit.base.errors`: :class:`MlirkitError` and file/line error formatting;
- :mod:`~mlirkit.base.langs`: language codes and the one "unknown language" rule;
- :mod:`~mlirkit.base.registry`: name registries with "did you mean";
- :mod:`~mlirkit.base.fs`: atomic files and directories (write beside, rename on success);
- :mod:`~mlirkit.base.vectors`: L2 normalisation and the one "transform, then normalise" step;
- :mod:`~mlirkit.base.options`: typed values parsed once at the edge (alpha, KEY=VALUE lists, language lists);
- :mod:`~mlirkit.base.cache`: where converted models and caches live;
- :mod:`~mlirkit.base.cli`: the CLI error boundary and logging set-up (only CLIs call it).
"""

__all__: list[str] = []

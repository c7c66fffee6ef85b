"""Keyword arguments of an earlier release, still taken for one release: ``evaluate(..., breakdown_k=10)``
works as ``evaluate(..., k=10)`` and warns ``evaluate(breakdown_k=) is renamed: use evaluate(k=)`` (a
``DeprecationWarning``); the next release refuses it as any unknown keyword (CHANGELOG.md)."""
from __future__ import annotations

import warnings
from typing import Any, Mapping

from mlirkit.base.errors import MlirkitError


def renamed_keywords(function: str, given: Mapping[str, Any], renames: Mapping[str, str],
                     current: Mapping[str, Any]) -> dict[str, Any]:
    """The values of ``renames``' new keywords taken from their old spellings in ``given`` (a function's
    ``**kwargs``), each warned; ``current``: the new keywords' values as called (a keyword given under both
    names is refused, as is any keyword that is neither)."""
    unknown = sorted(set(given) - set(renames))
    if unknown:
        raise TypeError(f"{function}() got an unexpected keyword argument {unknown[0]!r}")
    out: dict[str, Any] = {}
    for old, value in given.items():
        new = renames[old]
        if current.get(new) is not None:
            raise MlirkitError(f"{function}() got both {old}= and {new}= (one keyword: {new}=)")
        warnings.warn(f"{function}({old}=) is renamed: use {function}({new}=)", DeprecationWarning, stacklevel=3)
        out[new] = value
    return out


__all__ = ["renamed_keywords"]

"""The registry of language-transform methods: name -> estimator class, each imported on first use.

Adding a method is its file under ``mlirkit/transforms/`` (a
:class:`~mlirkit.transforms.transform.LanguageTransform` subclass) and one line below; ``--method`` of
``python -m mlirkit.shift fit``, the transform file format, the array builders, ``mlirkit.transforms``' exports
and the contract test take it from here. Code outside the package may register its own classes
(``TRANSFORMS.register(name, cls)``), e.g. the research variants in ``experiments/``.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from mlirkit.base.registry import Registry

if TYPE_CHECKING:
    from mlirkit.transforms.transform import LanguageTransform

__all__ = ["METHODS", "MethodRegistry", "TRANSFORMS"]

#: method name -> "module:Class" of the product's methods
METHODS = {
    "shift": "mlirkit.transforms.shift_transform:ShiftTransform",
    "centering": "mlirkit.transforms.centering:CenteringTransform",
    "lir": "mlirkit.transforms.lir:LIRTransform",
    "lsar": "mlirkit.transforms.lsar:LSARTransform",
    "leace": "mlirkit.transforms.leace:LEACETransform",
}


class MethodRegistry(Registry["type[LanguageTransform]"]):
    """A :class:`~mlirkit.base.registry.Registry` whose entries may be ``"module:Class"`` paths, imported
    (and replaced by the class) on first :meth:`get`."""

    def get(self, name: str) -> "type[LanguageTransform]":
        obj: Any = super().get(name)
        if isinstance(obj, str):
            module, _, attr = obj.partition(":")
            obj = getattr(importlib.import_module(module), attr)
            self._items[name] = obj
        return obj

    def class_names(self) -> dict[str, str]:
        """``{class name: method}`` of every entry (without importing the paths)."""
        out = {}
        for name in self.names():
            obj: Any = self._items[name]
            out[obj.partition(":")[2] if isinstance(obj, str) else obj.__name__] = name
        return out


TRANSFORMS = MethodRegistry("transform method")
for _name, _path in METHODS.items():
    TRANSFORMS.register(_name, _path)

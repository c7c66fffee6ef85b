"""``Alpha``: the strength of a language transform, one value for every language plus per-language overrides.

Parsed once (the CLI's ``--alpha``, or an API user's float or dict, at the API boundary), validated once
(every value in [0, 2]) and carried as such to :meth:`LanguageTransform.transform` and ``meta.json``::

    Alpha.from_text("0.6")               # 0.6 for every language
    Alpha.from_text("0.6,ja=1.0")        # 0.6, but 1.0 for Japanese ("0.6 ja=1.0" as separate words too)
    Alpha.from_text("*=0.6,ja=1.0")      # the same, the default spelled out
    Alpha.coerce({"*": 0.6, "ja": 1.0})  # from Python; without "*" the default is DEFAULT_ALPHA (1.0)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence, Union

from mlirkit.base import option_names
from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import canonical, check_lang, lookup
from mlirkit.base.options import split_key_value
from mlirkit.transforms.defaults import DEFAULT_ALPHA

__all__ = ["ALPHA_MAX", "ALPHA_MIN", "Alpha", "AlphaLike"]

ALPHA_MIN, ALPHA_MAX = 0.0, 2.0
DEFAULT_KEY = "*"

#: what an API accepts as an alpha
AlphaLike = Union["Alpha", float, int, str, Mapping[str, float]]


@dataclass(frozen=True)
class Alpha:
    """``default`` for every language, ``overrides[lang]`` where given; every value in [0, 2]."""

    default: float = DEFAULT_ALPHA
    overrides: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "default", _checked(DEFAULT_KEY, self.default))
        overrides: dict[str, float] = {}
        for key, value in dict(self.overrides).items():
            lang = canonical(check_lang(key, "alpha override", known=True))  # EN=0.5 -> en, dt=0.5 -> nl
            if lang in overrides:
                raise MlirkitError(f"alpha given twice for one language ({lang!r}, as {key!r})")
            overrides[lang] = _checked(lang, value)
        object.__setattr__(self, "overrides", dict(sorted(overrides.items())))

    def __hash__(self) -> int:
        return hash((self.default, tuple(self.overrides.items())))

    @classmethod
    def coerce(cls, value: AlphaLike) -> "Alpha":
        """An :class:`Alpha` from an Alpha, a number, the CLI text, or a dict with an optional ``"*"`` key."""
        if isinstance(value, Alpha):
            return value
        if isinstance(value, str):
            return cls.from_text(value)
        if isinstance(value, Mapping):
            values = {str(k): v for k, v in value.items()}
            default = values.pop(DEFAULT_KEY, DEFAULT_ALPHA)
            return cls(default, values)
        return cls(value)  # type: ignore[arg-type]

    @classmethod
    def from_text(cls, text: str | Sequence[str], option: str | None = None) -> "Alpha":
        """The CLI syntax: ``0.6``, ``0.6,ja=1.0``, ``*=0.6,ja=1.0``; a sequence is read as its items joined by
        commas. ``option`` names the input in errors (default: ``alpha``, or ``--alpha`` in a CLI)."""
        if option is None:
            option = option_names.option("alpha")
        if not isinstance(text, str):
            text = ",".join(text)
        parts = [p.strip() for p in text.split(",") if p.strip()]
        if not parts:
            raise MlirkitError(f"empty {option}")
        values: dict[str, str] = {}
        for part in parts:
            key, value = split_key_value(part, option, expected="A or LANG=A") if "=" in part else (DEFAULT_KEY, part)
            if key in values:
                raise MlirkitError(f"{option} {text!r}: {key!r} given twice")
            values[key] = value
        return cls.coerce(values)

    def for_lang(self, lang: str) -> float:
        """The override of ``lang`` (or of the language it meets, :func:`mlirkit.base.langs.lookup`:
        ``pt=0.5`` applies to ``pt-BR``), else the default."""
        value = self.overrides.get(canonical(lang))  # type: ignore[arg-type]
        if value is None and self.overrides:
            value = self.overrides.get(lookup(lang, self.overrides))  # type: ignore[arg-type]
        return self.default if value is None else value

    def to_json(self) -> float | dict[str, float]:
        """What ``meta.json`` records: the number, or ``{"*": default, lang: value, ...}`` (languages sorted)."""
        return {DEFAULT_KEY: self.default, **self.overrides} if self.overrides else self.default

    def __str__(self) -> str:
        return ",".join([f"{self.default:g}", *(f"{k}={v:g}" for k, v in self.overrides.items())])


def _checked(key: str, value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise MlirkitError(f"alpha for {key!r} is not a number: {value!r}") from None
    if not (ALPHA_MIN <= number <= ALPHA_MAX):  # also refuses NaN
        raise MlirkitError(f"alpha {number} for {'all languages' if key == DEFAULT_KEY else repr(key)} "
                           f"is outside [{ALPHA_MIN:g}, {ALPHA_MAX:g}]")
    return number

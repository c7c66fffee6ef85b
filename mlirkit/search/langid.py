"""Query language identification: which language a typed query is in, so that the query-time shift can use it.

An identifier maps texts to ``(code, confidence)`` pairs over a set of *candidate* languages (the languages a
query can be scored with: the query-time shift's languages, else the index's document languages); codes come
back as the candidates spell them (``pt`` found for a ``pt-BR`` candidate is returned as ``pt-BR``). The
identifiers, registered in :data:`IDENTIFIERS`:

- ``py3langid`` (the default): langid.py's multinomial naive Bayes over byte n-grams (Lui and Baldwin,
  "langid.py: An Off-the-shelf Language Identification Tool", ACL 2012), restricted to the candidates, with
  normalised probabilities as the confidence; its model ships inside the wheel (an npz file, no pickle).
- ``lingua``: lingua-py's character n-gram models (1-5-grams, the high-accuracy mode), restricted likewise;
  confidence = its relative confidence value of the best language.
- ``embedding``: the transform's own classifier on the query embedding
  (:class:`mlirkit.transforms.langid.LangIdClassifier`, stored in a transform fitted with ``--fit-langid``):
  free, since the query is encoded anyway.

Which is the default, and its threshold, was measured on XQuAD-R questions and Tatoeba sentences
(docs/results.md, "Query language identification"). How a query's language is decided from the identifier's
answer: :func:`decide_languages`.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import UNKNOWN, canonical, is_unknown
from mlirkit.base.registry import Registry

logger = logging.getLogger(__name__)

#: the identifier a :class:`~mlirkit.search.Searcher` uses unless told otherwise (the measured best)
DEFAULT_IDENTIFIER = "py3langid"
#: below this confidence a detected language is not used (the query is scored with the pivot)
DEFAULT_THRESHOLD = 0.5

HOW = ("given", "detected", "pivot", "undetermined")


@dataclass(frozen=True)
class QueryLanguage:
    """How a query's language was decided.

    ``lang``: the language the query was scored with (with the query-time shift: the source its documents were
    re-based on; the pivot when ``how == "pivot"``; ``"und"`` when ``how == "undetermined"``); ``how``:
    ``given`` (by the caller), ``detected`` (by the identifier, at or above the threshold), ``pivot`` (with the
    query-time shift: detection was below the threshold, or the language has no vector, so the query is scored
    with the index as built), ``undetermined`` (no query-time shift and detection below the threshold);
    ``detected`` and ``confidence``: the identifier's answer (None when the language was given).
    """

    lang: str
    how: str
    detected: str | None = None
    confidence: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"lang": self.lang, "how": self.how, "detected": self.detected,
                "confidence": None if self.confidence is None else round(float(self.confidence), 4)}


class LanguageIdentifier(Protocol):
    """``identify(texts, vectors) -> [(code, confidence)]``; ``vectors``: the queries' embeddings (only the
    ``embedding`` identifier reads them)."""

    name: str
    needs_vectors: bool

    def identify(self, texts: Sequence[str], vectors: np.ndarray | None = None) -> list[tuple[str, float]]: ...


def _primary(code: str) -> str:
    return (canonical(code) or code).split("-")[0].lower()


class _ByPrimary:
    """Maps a library's primary-subtag answers back onto the candidates' own spelling (``pt`` -> ``pt-BR``)."""

    def __init__(self, candidates: Sequence[str], supported: Callable[[str], bool]) -> None:
        self.back: dict[str, str] = {}
        for code in candidates:
            primary = _primary(code)
            if supported(primary):
                self.back.setdefault(primary, code)
        if len(self.back) < 2:
            raise MlirkitError(f"language identification needs at least two candidate languages it knows, got "
                               f"{', '.join(candidates) or 'none'}")

    def __call__(self, primary: str) -> str:
        return self.back.get(primary, primary)


class Py3LangId:
    """langid.py (py3langid) restricted to the candidate languages (module docstring)."""

    name = "py3langid"
    needs_vectors = False

    def __init__(self, candidates: Sequence[str], transform: Any = None) -> None:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier as _Model

        self._model = _Model.from_model_file(MODEL_FILE, norm_probs=True)
        labels = set(self._model.nb_classes)
        self._back = _ByPrimary(candidates, labels.__contains__)
        self._model.set_languages(sorted(self._back.back))

    def identify(self, texts: Sequence[str], vectors: np.ndarray | None = None) -> list[tuple[str, float]]:
        out = []
        for text in texts:
            code, prob = self._model.classify(text)
            out.append((self._back(code), float(prob)))
        return out


class Lingua:
    """lingua-py restricted to the candidate languages (module docstring)."""

    name = "lingua"
    needs_vectors = False

    def __init__(self, candidates: Sequence[str], transform: Any = None) -> None:
        try:
            from lingua import IsoCode639_1, Language, LanguageDetectorBuilder
        except ImportError:
            raise MlirkitError("the 'lingua' language identifier needs lingua-language-detector: pip install "
                               "'mlirkit[langid]'") from None

        def language(primary: str) -> Any:
            code = getattr(IsoCode639_1, primary.upper(), None)
            return None if code is None else Language.from_iso_code_639_1(code)

        self._back = _ByPrimary(candidates, lambda p: language(p) is not None)
        self._detector = LanguageDetectorBuilder.from_languages(*(language(p) for p in self._back.back)).build()

    def identify(self, texts: Sequence[str], vectors: np.ndarray | None = None) -> list[tuple[str, float]]:
        out = []
        for values in self._detector.compute_language_confidence_values_in_parallel(list(texts)):
            best = values[0]
            out.append((self._back(best.language.iso_code_639_1.name.lower()), float(best.value)))
        return out


class EmbeddingLangId:
    """The transform's own embedding classifier (module docstring)."""

    name = "embedding"
    needs_vectors = True

    def __init__(self, candidates: Sequence[str], transform: Any = None) -> None:
        classifier = getattr(transform, "langid", None)
        if classifier is None:
            raise MlirkitError("the 'embedding' language identifier needs a transform with a language classifier "
                               "(python -m mlirkit.shift fit ... --fit-langid)")
        self._classifier = classifier

    def identify(self, texts: Sequence[str], vectors: np.ndarray | None = None) -> list[tuple[str, float]]:
        if vectors is None or len(vectors) != len(texts):
            raise MlirkitError("the 'embedding' language identifier needs one query vector per text")
        codes, conf = self._classifier.predict(vectors)
        return [(canonical(c) or c, float(p)) for c, p in zip(codes, conf)]


IDENTIFIERS: Registry[Callable[..., LanguageIdentifier]] = Registry("language identifier")
IDENTIFIERS.register("py3langid", Py3LangId)
IDENTIFIERS.register("lingua", Lingua)
IDENTIFIERS.register("embedding", EmbeddingLangId)


def make_identifier(name: str, candidates: Sequence[str], transform: Any = None) -> LanguageIdentifier:
    """The identifier registered as ``name`` over ``candidates`` (unknown names: "did you mean")."""
    return IDENTIFIERS.get(name)(candidates, transform)


def decide_languages(given: Sequence[str | None], detections: Sequence[tuple[str, float] | None], *,
                     threshold: float, pivot: str | None, has_vector: Callable[[str], bool] | None
                     ) -> list[QueryLanguage]:
    """One :class:`QueryLanguage` per query: a given language is used as it is; otherwise the detected one when
    its confidence reaches ``threshold``; with the query-time shift (``pivot`` set), a query below the threshold,
    or whose language has no vector (``has_vector``), is scored with the pivot (``how="pivot"``); without it,
    below the threshold is ``undetermined`` (``lang="und"``)."""
    out = []
    for lang, found in zip(given, detections):
        if lang is not None and not is_unknown(lang):
            decided = QueryLanguage(lang, "given")
        else:
            code, conf = found if found is not None else (None, None)
            if code is not None and conf is not None and conf >= threshold:
                decided = QueryLanguage(code, "detected", code, conf)
            elif pivot is not None:
                decided = QueryLanguage(pivot, "pivot", code, conf)
            else:
                decided = QueryLanguage(UNKNOWN, "undetermined", code, conf)
        if pivot is not None and has_vector is not None and decided.how != "pivot" and not has_vector(decided.lang):
            decided = QueryLanguage(pivot, "pivot", decided.detected, decided.confidence)
        out.append(decided)
    return out


__all__ = ["DEFAULT_IDENTIFIER", "DEFAULT_THRESHOLD", "EmbeddingLangId", "IDENTIFIERS", "LanguageIdentifier", "Lingua",
           "Py3LangId", "QueryLanguage", "decide_languages", "make_identifier"]

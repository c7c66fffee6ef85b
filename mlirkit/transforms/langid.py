"""Language identification from the embedding itself (for documents without a language label).

A multinomial logistic regression ``p(l | x) = softmax(W x_hat + b)_l`` on the L2-normalised embedding
``x_hat``, fitted on the same parallel passages as the transform (every language, the source included)
and stored in the transform file (``langid.weight`` ``(L, d)``, ``langid.bias`` ``(L,)``, classes in the
metadata). A document gets the most probable language when its probability (the confidence) reaches the
threshold; otherwise it stays of unknown language and untransformed.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError

__all__ = ["DEFAULT_THRESHOLD", "LangIdClassifier", "fit_langid"]

DEFAULT_THRESHOLD = 0.9


class LangIdClassifier:
    def __init__(self, classes: Sequence[str], weight: np.ndarray, bias: np.ndarray,
                 info: Mapping[str, Any] | None = None) -> None:
        self.classes = list(classes)
        self.weight = np.ascontiguousarray(weight, dtype=np.float32)  # (L, d)
        self.bias = np.ascontiguousarray(bias, dtype=np.float32)  # (L,)
        if self.weight.ndim != 2 or self.weight.shape[0] != len(self.classes) or self.bias.shape != (len(self.classes),):
            raise MlirkitError(f"language classifier shapes do not match its {len(self.classes)} classes "
                               f"(weight {self.weight.shape}, bias {self.bias.shape})")
        if len(self.classes) < 2:
            raise MlirkitError("a language classifier needs at least two languages")
        self.info = dict(info or {})

    @property
    def dim(self) -> int:
        return self.weight.shape[1]

    def predict_proba(self, embs: np.ndarray) -> np.ndarray:
        """``(n, L)`` class probabilities."""
        x = np.asarray(embs, dtype=np.float32)
        norms = np.linalg.norm(x, axis=1, keepdims=True)
        logits = (x / np.where(norms == 0, 1, norms)) @ self.weight.T + self.bias  # (n, L)
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(axis=1, keepdims=True)

    def predict(self, embs: np.ndarray) -> tuple[list[str], np.ndarray]:
        """Most probable language and its probability for each row."""
        p = self.predict_proba(embs)
        best = p.argmax(axis=1)
        return [self.classes[i] for i in best], p[np.arange(len(best)), best]

    def evaluate(self, embs: np.ndarray, langs: Sequence[str], threshold: float = DEFAULT_THRESHOLD) -> dict[str, Any]:
        """Accuracy over all rows, coverage (share with confidence >= threshold) and accuracy on the covered rows."""
        predicted, conf = self.predict(embs)
        truth = np.asarray(list(langs))
        pred = np.asarray(predicted)
        covered = conf >= threshold
        per_lang = {lang: round(float((pred[truth == lang] == lang).mean()), 4) for lang in sorted(set(truth))}
        return {"n": int(len(truth)), "accuracy": round(float((pred == truth).mean()), 4) if len(truth) else None,
                "threshold": threshold, "coverage": round(float(covered.mean()), 4) if len(truth) else None,
                "accuracy_covered": round(float((pred[covered] == truth[covered]).mean()), 4) if covered.any() else None,
                "per_language": per_lang}

    def describe(self) -> dict[str, Any]:
        return {"classes": self.classes, **{k: v for k, v in self.info.items() if k != "classes"}}

    def to_meta(self) -> dict[str, Any]:
        return {**self.info, "classes": self.classes,
                "model": "multinomial logistic regression on L2-normalised embeddings"}

    @classmethod
    def from_file(cls, tensors: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> "LangIdClassifier":
        if "weight" not in tensors or "bias" not in tensors or "classes" not in meta:
            raise MlirkitError("incomplete language classifier (needs langid.weight, langid.bias and classes)")
        return cls(meta["classes"], tensors["weight"], tensors["bias"], meta)


def fit_langid(embs: np.ndarray, langs: Sequence[str], *, c: float = 1.0, max_iter: int = 1000,
               seed: int = 0) -> LangIdClassifier:
    """Fit the classifier on embeddings labelled with their language (sklearn, lbfgs).

    Features are standardised (``z = (x_hat - m) / s``, per dimension) for the fit and the scaling is
    folded back into the stored weights (``W = W_z / s``, ``b = b_z - W m``), so prediction is one
    affine map of ``x_hat``.
    """
    from sklearn.linear_model import LogisticRegression

    x = np.asarray(embs, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    x = x / np.where(norms == 0, 1, norms)
    y = np.asarray(list(langs))
    classes, counts = np.unique(y, return_counts=True)
    if len(classes) < 2:
        raise MlirkitError("language identification needs embeddings of at least two languages")
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
    model = LogisticRegression(C=c, max_iter=max_iter, random_state=seed)
    model.fit((x - mean) / scale, y)
    weight = model.coef_ / scale  # (L or 1, d)
    bias = model.intercept_ - weight @ mean
    if weight.shape[0] == 1:  # binary case: sklearn stores one row; softmax over (-w/2, w/2) is the same model
        weight = np.vstack([-weight / 2, weight / 2])
        bias = np.array([-bias[0] / 2, bias[0] / 2])
    info = {"train_per_language": {str(k): int(v) for k, v in zip(classes, counts)}, "C": c,
            "features": "standardised L2-normalised embedding (folded into the weights)"}
    return LangIdClassifier([str(k) for k in model.classes_], weight, bias, info)

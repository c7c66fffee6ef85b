"""Fitting language transforms: streaming statistics in float64, from an encoder or from embeddings.

Every method keeps running sums, so the parallel data is read and encoded once, for every target
language together, in bounded memory:

- SHIFT: ``S_l = sum_i (f(D_i^l) - f(D_i^src))``, ``N_l``; ``V_l = S_l / N_l``.
- centering: ``S_l = sum_i f(D_i^l)``, ``N_l``; ``mu_l = S_l / N_l`` (the source language too).
- LIR: ``G_l = sum_i f(D_i^l) f(D_i^l)^T`` (d x d); the top-r eigenvectors of ``G_l`` are the top-r
  right-singular vectors of the uncentred matrix ``X_l`` (``X^T X = V S^2 V^T``).

Ids without a source-language row are skipped (and counted) by every method, so the three methods see
the same passages.
"""
from __future__ import annotations

import hashlib
import logging
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, Sequence

import numpy as np

from mlirkit.base.errors import MlirkitError
from mlirkit.base.langs import canonical, require_langs
from mlirkit.base.vectors import check_finite
from mlirkit.transforms.centering import CenteringTransform
from mlirkit.transforms.lir import LIRTransform
from mlirkit.transforms.parallel import ParallelGroup
from mlirkit.transforms.shift_transform import ShiftTransform
from mlirkit.transforms.transform import TRANSFORMS, LanguageTransform

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------- accumulators
class _Accumulator:
    """Running float64 statistics per language; ``update`` takes one encoded batch of whole ids."""

    method = ""

    def __init__(self, source_lang: str, dim: int) -> None:
        self.source_lang = source_lang
        self.dim = dim
        self.counts: Counter[str] = Counter()

    def update(self, embs: np.ndarray, langs: Sequence[str], groups: np.ndarray) -> None:
        """``embs`` (n, d) float; ``langs`` (n,); ``groups`` (n,) int: rows with equal value are one id,
        and every group has exactly one source-language row."""
        raise NotImplementedError

    def finalize(self, **kwargs: Any) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def _check(self, embs: np.ndarray) -> np.ndarray:
        if embs.ndim != 2 or embs.shape[1] != self.dim:
            raise MlirkitError(f"embeddings of shape {embs.shape}, expected (n, {self.dim})")
        check_finite("encoder output", embs)
        return np.asarray(embs, dtype=np.float64)


class ShiftAccumulator(_Accumulator):
    method = "shift"

    def __init__(self, source_lang: str, dim: int) -> None:
        super().__init__(source_lang, dim)
        self.sums: dict[str, np.ndarray] = {}

    def update(self, embs, langs, groups) -> None:
        x = self._check(embs)  # (n, d) float64
        langs_a = np.asarray(langs)
        groups = np.asarray(groups)
        src_rows = np.flatnonzero(langs_a == self.source_lang)
        src_of_group = dict(zip(groups[src_rows].tolist(), src_rows.tolist()))
        for lang in np.unique(langs_a):
            if lang == self.source_lang:
                continue
            rows = np.flatnonzero(langs_a == lang)
            pair_src = np.fromiter((src_of_group[g] for g in groups[rows].tolist()), dtype=np.intp, count=len(rows))
            diff = (x[rows] - x[pair_src]).sum(axis=0)  # (d,)
            lang = str(lang)
            self.sums[lang] = self.sums.get(lang, 0.0) + diff
            self.counts[lang] += len(rows)

    def finalize(self, **kwargs) -> dict[str, np.ndarray]:
        return {lang: (s / self.counts[lang]).astype(np.float32) for lang, s in self.sums.items()}


class CenteringAccumulator(_Accumulator):
    method = "centering"

    def __init__(self, source_lang: str, dim: int) -> None:
        super().__init__(source_lang, dim)
        self.sums: dict[str, np.ndarray] = {}

    def update(self, embs, langs, groups=None) -> None:
        x = self._check(embs)
        langs_a = np.asarray(langs)
        for lang in np.unique(langs_a):
            rows = langs_a == lang
            lang = str(lang)
            self.sums[lang] = self.sums.get(lang, 0.0) + x[rows].sum(axis=0)
            self.counts[lang] += int(rows.sum())

    def finalize(self, **kwargs) -> dict[str, np.ndarray]:
        return {lang: (s / self.counts[lang]).astype(np.float32) for lang, s in self.sums.items()}


class LIRAccumulator(_Accumulator):
    method = "lir"

    def __init__(self, source_lang: str, dim: int) -> None:
        super().__init__(source_lang, dim)
        self.grams: dict[str, np.ndarray] = {}

    def update(self, embs, langs, groups=None) -> None:
        x = self._check(embs)
        langs_a = np.asarray(langs)
        for lang in np.unique(langs_a):
            xl = x[langs_a == lang]  # (n_l, d)
            lang = str(lang)
            if lang not in self.grams:
                self.grams[lang] = np.zeros((self.dim, self.dim))
            self.grams[lang] += xl.T @ xl  # (d, d)
            self.counts[lang] += len(xl)

    def finalize(self, rank: int = 1, **kwargs) -> dict[str, np.ndarray]:
        if not (1 <= rank <= self.dim):
            raise MlirkitError(f"LIR rank {rank} is outside [1, {self.dim}]")
        out = {}
        for lang, gram in self.grams.items():
            if self.counts[lang] < rank:
                logger.warning("LIR: %d passages of %r for rank %d", self.counts[lang], lang, rank)
            _, vecs = np.linalg.eigh(gram)  # ascending eigenvalues
            comps = vecs[:, ::-1][:, :rank].T  # (r, d): top-r right-singular vectors
            signs = np.sign(comps[np.arange(rank), np.abs(comps).argmax(axis=1)])  # deterministic sign
            out[lang] = (comps * signs[:, None]).astype(np.float32)
        return out


ACCUMULATORS: dict[str, type[_Accumulator]] = {"shift": ShiftAccumulator, "centering": CenteringAccumulator,
                                                "lir": LIRAccumulator}


def build_transform(method: str, params: Mapping[str, np.ndarray], *, encoder: dict[str, Any], source_lang: str,
                    meta: dict[str, Any] | None = None, langid: Any = None) -> LanguageTransform:
    cls = TRANSFORMS.get(method)
    return cls(params, encoder=encoder, source_lang=source_lang, meta=meta, langid=langid)


# --------------------------------------------------------------------------- numpy API
def fit_shift_from_embeddings(src_embs: np.ndarray, tgt_embs_by_lang: Mapping[str, Any], source_lang: str, *,
                              encoder: dict[str, Any], meta: dict[str, Any] | None = None) -> ShiftTransform:
    """SHIFT vectors ``V_l = mean_i (tgt_l[i] - src[j(i)])`` from precomputed embeddings.

    ``tgt_embs_by_lang[l]`` is either an ``(n, d)`` array row-aligned with ``src_embs`` or a pair
    ``(embs (m, d), src_index (m,))`` giving for each row the row of ``src_embs`` it translates.
    """
    src = np.asarray(src_embs)
    if src.ndim != 2:
        raise MlirkitError(f"source embeddings must be (n, d), got {src.shape}")
    acc = ShiftAccumulator(source_lang, src.shape[1])
    for lang, value in tgt_embs_by_lang.items():
        if lang == source_lang:
            continue
        if isinstance(value, tuple):
            tgt, index = np.asarray(value[0]), np.asarray(value[1], dtype=np.intp)
        else:
            tgt, index = np.asarray(value), np.arange(len(value))
            if len(tgt) != len(src):
                raise MlirkitError(f"{lang}: {len(tgt)} rows but {len(src)} source rows (pass (embs, src_index))")
        if len(index) != len(tgt) or (len(index) and (index.min() < 0 or index.max() >= len(src))):
            raise MlirkitError(f"{lang}: source index out of range or of the wrong length")
        if not len(tgt):
            continue
        embs = np.concatenate([src[index], tgt])
        groups = np.concatenate([np.arange(len(tgt)), np.arange(len(tgt))])
        acc.update(embs, [source_lang] * len(tgt) + [lang] * len(tgt), groups)
    if not acc.sums:
        raise MlirkitError("no target-language embeddings to fit SHIFT vectors from")
    return ShiftTransform(acc.finalize(), encoder=encoder, source_lang=source_lang,
                          meta={"pairs": dict(acc.counts), **(meta or {})})


def fit_centering_from_embeddings(embs_by_lang: Mapping[str, np.ndarray], *, encoder: dict[str, Any],
                                  source_lang: str = "en", meta: dict[str, Any] | None = None) -> CenteringTransform:
    """Language means ``mu_l`` from precomputed embeddings ``{lang: (n_l, d)}``."""
    acc = _fit_plain(CenteringAccumulator, embs_by_lang, source_lang)
    return CenteringTransform(acc.finalize(), encoder=encoder, source_lang=source_lang,
                              meta={"pairs": dict(acc.counts), **(meta or {})})


def fit_lir_from_embeddings(embs_by_lang: Mapping[str, np.ndarray], rank: int = 1, *, encoder: dict[str, Any],
                            source_lang: str = "en", meta: dict[str, Any] | None = None) -> LIRTransform:
    """Top-``rank`` right-singular vectors of each language's uncentred embedding matrix."""
    acc = _fit_plain(LIRAccumulator, embs_by_lang, source_lang)
    return LIRTransform(acc.finalize(rank=rank), encoder=encoder, source_lang=source_lang,
                        meta={"pairs": dict(acc.counts), "rank": rank, **(meta or {})})


def _fit_plain(cls, embs_by_lang, source_lang):
    dims = {np.asarray(e).shape[-1] for e in embs_by_lang.values()}
    if len(dims) != 1:
        raise MlirkitError(f"embeddings of different dimensions: {sorted(dims)}")
    acc = cls(source_lang, dims.pop())
    for lang, embs in embs_by_lang.items():
        embs = np.asarray(embs)
        if len(embs):
            acc.update(embs, [lang] * len(embs))
    if not acc.counts:
        raise MlirkitError("no embeddings to fit from")
    return acc


# --------------------------------------------------------------------------- streaming fit with an encoder
@dataclass
class FitReport:
    groups_read: int = 0
    groups_used: int = 0
    skipped_no_source: int = 0
    skipped_no_target: int = 0
    heldout_groups: int = 0
    texts_encoded: int = 0
    pairs: Counter = field(default_factory=Counter)
    langid: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"groups_read": self.groups_read, "groups_used": self.groups_used,
                "skipped_no_source": self.skipped_no_source, "skipped_no_target": self.skipped_no_target,
                "heldout_groups": self.heldout_groups, "texts_encoded": self.texts_encoded,
                "pairs": dict(sorted(self.pairs.items())), "langid": self.langid}


def is_heldout(group_id: str, fraction: float) -> bool:
    """Deterministic split by id: sha1(id) mapped to [0, 1) below ``fraction``."""
    if fraction <= 0:
        return False
    h = int.from_bytes(hashlib.sha1(group_id.encode("utf-8")).digest()[:8], "big")
    return h / 2**64 < fraction


def _batches(items: Iterable[tuple[ParallelGroup, bool]], batch_texts: int) -> Iterator[list[tuple[ParallelGroup, bool]]]:
    batch: list[tuple[ParallelGroup, bool]] = []
    n = 0
    for item in items:
        batch.append(item)
        n += len(item[0].texts)
        if n >= batch_texts:
            yield batch
            batch, n = [], 0
    if batch:
        yield batch


def fit_from_groups(encoder, groups: Iterable[ParallelGroup], *, method: str, source_lang: str,
                    langs: Sequence[str] | None = None, max_pairs: int | None = None, batch_size: int = 256,
                    rank: int = 1, langid: bool = False, langid_max_per_lang: int = 5000,
                    heldout: float = 0.0, langid_threshold: float = 0.9, source_name: str | None = None,
                    source_langs: Sequence[str] | None = None,
                    show_progress: bool = False) -> tuple[LanguageTransform, FitReport]:
    """Encode parallel groups as documents and fit ``method``; one pass, every language together.

    ``max_pairs`` caps the pairs of **each** target language: an id is used while one of its languages has
    fewer than ``max_pairs`` pairs, and only those languages' texts (with the source text) are encoded, so
    a file whose rows are grouped by language gives every language its share (on an N-way set whose ids
    hold every language: the first ``max_pairs`` ids, as before). Reading stops once every language of
    ``langs``, else of ``source_langs`` (the languages the source holds, when known:
    :func:`mlirkit.transforms.parallel.parallel_languages`), has its share; otherwise the source is read to
    its end (texts of full languages are not encoded). ``langs`` restricts the target languages (the
    source language is always read); ``heldout`` (a fraction of ids, chosen by hash with
    :func:`is_heldout`) is kept out of the fit (and, with ``langid=True``, used to measure the
    classifier's accuracy).
    """
    from tqdm.auto import tqdm

    TRANSFORMS.get(method)
    if not (0.0 <= heldout < 1.0):
        raise MlirkitError(f"held-out fraction {heldout} is outside [0, 1)")
    source_lang = canonical(source_lang)
    keep = None if langs is None else {canonical(la) for la in langs} | {source_lang}
    acc = ACCUMULATORS[method](source_lang, encoder.dim)
    report = FitReport()
    langid_train: dict[str, list[np.ndarray]] = {}
    langid_test: dict[str, list[np.ndarray]] = {}

    seen: set[str] = set()  # the languages of the groups read (an asked-for language outside it is an error)
    taken: Counter[str] = Counter()  # pairs per target language so far (the max_pairs share)
    wanted = keep if keep is not None else None if source_langs is None else {canonical(la) for la in source_langs}
    wanted = None if wanted is None else wanted - {source_lang}

    def full(langs_: Iterable[str]) -> bool:
        return max_pairs is not None and all(taken[la] >= max_pairs for la in langs_ if la != source_lang)

    def selected() -> Iterator[tuple[ParallelGroup, bool]]:
        for g in groups:
            if wanted and full(wanted):
                return
            report.groups_read += 1
            seen.update(canonical(l) for l in g.texts)
            texts = {canonical(l): t for l, t in g.texts.items() if keep is None or canonical(l) in keep}
            if source_lang not in texts:
                report.skipped_no_source += 1
                continue
            if len(texts) < 2:
                report.skipped_no_target += 1
                continue
            held = is_heldout(g.id, heldout)
            if held:
                report.heldout_groups += 1
                if not langid or full(seen):
                    continue
            else:
                if max_pairs is not None:  # only the languages still short of their share
                    texts = {la: t for la, t in texts.items() if la == source_lang or taken[la] < max_pairs}
                    if len(texts) < 2:
                        continue
                    taken.update(la for la in texts if la != source_lang)
                report.groups_used += 1
            yield ParallelGroup(g.id, texts), held

    bar = tqdm(total=None if max_pairs is None or not wanted else max_pairs * len(wanted), unit="pair",
               desc=f"fit {method}", disable=not show_progress)
    try:
        for batch in _batches(selected(), batch_size):
            texts, row_langs, row_groups, row_held = [], [], [], []
            for k, (g, held) in enumerate(batch):
                for lang, text in g.texts.items():
                    texts.append(text)
                    row_langs.append(lang)
                    row_groups.append(k)
                    row_held.append(held)
            embs = encoder.encode_docs(texts, row_langs, batch_size=batch_size)
            embs = np.asarray(embs)
            report.texts_encoded += len(texts)
            held_a = np.asarray(row_held, dtype=bool)
            train = ~held_a
            if train.any():
                train_langs = [l for l, h in zip(row_langs, row_held) if not h]
                acc.update(embs[train], train_langs, np.asarray(row_groups)[train])
            if langid:
                for store, mask in ((langid_train, train), (langid_test, held_a)):
                    for lang in set(np.asarray(row_langs)[mask].tolist()):
                        rows = np.flatnonzero(mask & (np.asarray(row_langs) == lang))
                        have = sum(len(a) for a in store.get(lang, []))
                        if have < langid_max_per_lang:
                            store.setdefault(lang, []).append(embs[rows[:langid_max_per_lang - have]].astype(np.float32))
            bar.update(int(sum(len(g.texts) - 1 for g, h in batch if not h)))
    finally:
        bar.close()
    if keep is not None:
        require_langs([canonical(la) for la in langs if canonical(la) != source_lang], seen, "parallel text", f" in {source_name or 'the parallel data'}"
                      + (f" (the first {report.groups_read} ids read)" if max_pairs is not None else ""))
    if report.groups_used == 0:
        raise MlirkitError(f"no usable ids in {source_name or 'the parallel data'}: {report.groups_read} read, "
                           f"{report.skipped_no_source} without a {source_lang!r} row, "
                           f"{report.skipped_no_target} without another selected language")
    if report.skipped_no_source:
        logger.warning("%d ids without a %r row were skipped", report.skipped_no_source, source_lang)
    report.pairs = Counter({lang: n for lang, n in acc.counts.items()})
    params = acc.finalize(rank=rank)
    classifier = None
    if langid:
        from mlirkit.transforms.langid import fit_langid

        x = np.concatenate([a for v in langid_train.values() for a in v])
        y = [lang for lang, v in langid_train.items() for a in v for _ in range(len(a))]
        classifier = fit_langid(x, y)
        if langid_test:
            xt = np.concatenate([a for v in langid_test.values() for a in v])
            yt = [lang for lang, v in langid_test.items() for a in v for _ in range(len(a))]
            classifier.info["heldout"] = classifier.evaluate(xt, yt, langid_threshold)
            classifier.info["heldout"]["fraction"] = heldout
        report.langid = classifier.to_meta()
    fp = encoder.fingerprint
    meta = {"pairs": dict(sorted(report.pairs.items())), "source": source_name,
            "prefix": fp.get("doc_prefix", fp.get("prefix")), "normalized": bool(getattr(encoder, "normalized", False)),
            "encoded_as": "documents", "fit": {k: v for k, v in report.as_dict().items() if k not in ("pairs", "langid")}}
    if method == "lir":
        meta["rank"] = rank
    t = build_transform(method, params, encoder=fp, source_lang=source_lang, meta=meta, langid=classifier)
    return t, report


def fit_from_pairs(encoder: Any, pairs: str | os.PathLike | Iterable[ParallelGroup], *, source_lang: str,
                   method: str = "shift", text_field: str = "text", langs: Sequence[str] | None = None,
                   max_pairs: int | None = None, show_progress: bool = False, **options: Any) -> LanguageTransform:
    """Fit ``method`` (``shift``, ``centering``, ``lir``) from parallel text, as ``python -m mlirkit.shift fit --pairs``.

    ``pairs``: a parallel-set id (``mlirkit/parallel/gettext``, ``python -m mlirkit.datasets list``), an
    aligned JSONL file, a pairs-table directory, ``mmarco``, or :class:`ParallelGroup` objects;
    ``encoder``: an :class:`~mlirkit.encoders.base.Encoder` or a name for
    :func:`mlirkit.encoders.load_encoder` (loaded after the first group is read, so bad input fails
    fast); ``options`` go to :func:`fit_from_groups` (``batch_size``, ``rank``, ``langid``, ``heldout``, ...).
    Returns the transform; what the fit read and skipped is in ``t.meta["fit"]`` and ``t.meta["pairs"]``.
    """
    import itertools

    from mlirkit.transforms.parallel import open_parallel

    name = str(pairs) if isinstance(pairs, (str, os.PathLike)) else None
    groups = (open_parallel(str(pairs), text_field=text_field, langs=langs, source_lang=source_lang)
              if name is not None else iter(pairs))
    first = list(itertools.islice(groups, 1))
    if not first:
        raise MlirkitError(f"{name or 'pairs'}: no parallel rows")
    encoder_name = encoder if isinstance(encoder, str) else None
    if encoder_name is not None:
        from mlirkit.encoders import load_encoder

        encoder = load_encoder(encoder_name)
    t, _ = fit_from_groups(encoder, itertools.chain(first, groups), method=method, source_lang=source_lang,
                           langs=langs, max_pairs=max_pairs, source_name=name, show_progress=show_progress, **options)
    if encoder_name is not None:
        t.meta["encoder_name"] = encoder_name
    return t

"""Register every mlirkit id with ir_datasets and :data:`~mlirkit.datasets.catalog.DATASETS` (cheap:
collections are built lazily on first use)."""
from __future__ import annotations

from mlirkit.datasets import (belebele, bundled, mlqa, mlqa_r, mmarco_pairs, multieup, resources, tatoeba, xquad_r,
                              xquad_r_zs)
from mlirkit.datasets.catalog import DatasetInfo, register
from mlirkit.datasets.records import Collection, LazyCollection
from mlirkit.io.records import ParallelDoc, ParallelQuery
from mlirkit.datasets.sources import roots_key

MULTI = "multi"
BENCHMARKS = (belebele, mlqa, multieup)
DESCRIPTIONS = {
    "belebele": "Belebele passages (FLORES), pooled over 14 languages; query = question",
    "mlqa": "MLQA test contexts pooled over 7 languages (partly parallel); query = question",
    "multieup-v2": "European Parliament speeches (DE EN ES FR IT PT); query = debate title",
}


def _benchmarks() -> None:
    for mod in BENCHMARKS:
        for q_lang in (*mod.LANGS, MULTI):
            lang = None if q_lang == MULTI else q_lang
            info = DatasetInfo(
                dataset_id=f"mlirkit/{mod.NAME}/{q_lang}", family=mod.NAME,
                description=DESCRIPTIONS[mod.NAME] + (" (queries in every language)" if lang is None else ""),
                doc_langs=tuple(mod.LANGS), query_langs=tuple(mod.LANGS) if lang is None else (lang,),
                size=mod.SIZE, licence=mod.LICENCE,
                available_offline=(lambda m=mod, la=lang: m.available(la)))
            register(info, LazyCollection(lambda m=mod, la=lang: m.load(la), roots_key), queries_lang=lang)


def _lareqa() -> None:
    """The constructions of LAReQA's files: XQuAD-R (bundled) and MLQA-R (from a data root or downloaded)."""
    for mod in (xquad_r, mlqa_r):
        for fam in mod.FAMILIES:
            for q_lang in (*fam.langs, MULTI):
                lang = None if q_lang == MULTI else q_lang
                info = DatasetInfo(
                    dataset_id=f"mlirkit/{fam.name}/{q_lang}", family=fam.name,
                    description=fam.description + (" (queries in every language)" if lang is None else ""),
                    doc_langs=fam.langs, query_langs=fam.langs if lang is None else (lang,),
                    size=fam.size, licence=mod.LICENCE,
                    available_offline=(lambda m=mod, f=fam, la=lang: m.available(la, f)))
                register(info, LazyCollection(lambda m=mod, f=fam, la=lang: m.load(la, f), roots_key),
                         queries_lang=lang, query_cls=ParallelQuery)


def _xquad_zero_shot() -> None:
    """XQuAD-R's article-disjoint zero-shot split: English training half, 8-language test half."""
    mod = xquad_r_zs
    info = DatasetInfo(
        f"mlirkit/{mod.NAME}/train", mod.NAME,
        "XQuAD-R zero-shot split, training half: English paragraphs and questions of 24 seeded articles",
        ("en",), ("en",), mod.TRAIN_SIZE, mod.LICENCE, available_offline=lambda: mod.available())
    register(info, LazyCollection(mod.load_train, roots_key), queries_lang="en", with_docpairs=True)
    langs = xquad_r.LANGS
    for q_lang in (*langs, MULTI):
        lang = None if q_lang == MULTI else q_lang
        info = DatasetInfo(
            f"mlirkit/{mod.NAME}/test/{q_lang}", mod.NAME,
            "XQuAD-R zero-shot split, test half: the other 24 articles' paragraphs pooled over 8 languages"
            + (" (queries in every language)" if lang is None else ""),
            langs, langs if lang is None else (lang,), mod.TEST_SIZE, mod.LICENCE,
            available_offline=lambda: mod.available())
        register(info, LazyCollection(lambda la=lang: mod.load_test(la), roots_key), queries_lang=lang,
                 query_cls=ParallelQuery)


def _mmarco() -> None:
    for sub, limit in mmarco_pairs.SUBSETS.items():
        suffix = f"/{sub}" if sub else ""
        size = "10,000 pairs" if limit else mmarco_pairs.SIZE
        for lang in mmarco_pairs.LANGS:
            info = DatasetInfo(
                f"mlirkit/mmarco-pairs/{lang}{suffix}", "mmarco-pairs",
                "mMARCO v2 positive passages (docs) and queries of the unique train pairs; ids shared across languages",
                (lang,), (lang,), size, mmarco_pairs.LICENCE,
                available_offline=(lambda la=lang: mmarco_pairs.available(la)))
            register(info, LazyCollection(lambda la=lang, n=limit: mmarco_pairs.build_lang(la, n), roots_key),
                     docs_lang=lang, queries_lang=lang)
        collection = LazyCollection(lambda n=limit: mmarco_pairs.build_multi(n), roots_key)
        info = DatasetInfo(
            f"mlirkit/mmarco-pairs/{MULTI}{suffix}", "mmarco-pairs",
            "mMARCO v2 aligned positive passages in 14 languages (parallel set, group = passage id)",
            mmarco_pairs.LANGS, (), size, mmarco_pairs.LICENCE,
            available_offline=lambda: mmarco_pairs.available(None),
            rows=(lambda n=limit: mmarco_pairs.recipe_rows(n)))  # streamed, grouped, one group per pair
        register(info, collection, doc_cls=ParallelDoc, with_queries=False)


def _fmt(n: int | None) -> str:
    return f"{n:,}" if isinstance(n, int) else "?"


def _ddtp() -> None:
    man = resources.manifest()
    doc_langs = bundled.ddtp_langs() if man else ()
    n_docs = man.get("files", {}).get(bundled.DDTP_FILE, {}).get("records")
    per_split = {s: man.get("ddtp", {}).get(f"{s}_queries_per_lang", {}) for s in bundled.SPLITS}
    for q_lang in (*doc_langs, MULTI):
        lang = None if q_lang == MULTI else q_lang
        for split in (None, *bundled.SPLITS):
            counts = [per_split[s].get(lang) if lang else sum(per_split[s].values())
                      for s in ((split,) if split else bundled.SPLITS)]
            n_q = sum(c for c in counts if c) if all(counts) else None
            dataset_id = f"mlirkit/ddtp/{q_lang}" + (f"/{split}" if split else "")
            info = DatasetInfo(
                dataset_id, "ddtp",
                "Debian package descriptions (bundled): query = short description, corpus = long descriptions "
                "of every language version pooled" + (f"; {split} split of the description groups" if split else ""),
                doc_langs, doc_langs if lang is None else (lang,),
                f"{_fmt(n_docs)} docs, {_fmt(n_q)} queries", bundled.DDTP_LICENCE,
                available_offline=lambda: (resources.resources_dir() / bundled.DDTP_FILE).is_file())
            register(info, LazyCollection(lambda la=lang, s=split: bundled.build_ddtp(la, s)), queries_lang=lang,
                     query_cls=ParallelQuery)


def _parallel() -> None:
    man = resources.manifest().get("files", {})
    for name, rel in bundled.PARALLEL_FILES.items():
        entry = man.get(rel, {})
        info = DatasetInfo(
            f"mlirkit/parallel/{name}", "parallel",
            f"aligned {name} groups for fitting transforms (bundled); doc_id = group/lang",
            tuple(sorted(entry.get("langs", {}))), (),
            f"{_fmt(entry.get('groups'))} groups, {_fmt(entry.get('records'))} texts",
            bundled.PARALLEL_LICENCES[name],
            available_offline=lambda r=rel: (resources.resources_dir() / r).is_file(),
            rows=lambda n=name: bundled.parallel_file_rows(n))
        register(info, LazyCollection(lambda n=name: bundled.build_parallel(n)), doc_cls=ParallelDoc,
                 with_queries=False)


def _tatoeba() -> None:
    pairs = resources.manifest().get("upstream", {}).get(tatoeba.ARCHIVE, {}).get("counts", {}).get("pairs", {})
    info = DatasetInfo(
        f"mlirkit/parallel/{tatoeba.NAME}", "parallel",
        "Tatoeba test pairs of LASER (bundled): one group per pair, English + one of 112 languages; "
        "doc_id = group/lang, group = lang/line",
        tatoeba.langs(), (), f"{_fmt(sum(pairs.values()) if pairs else None)} pairs, {len(tatoeba.CODES)} languages",
        tatoeba.LICENCE, available_offline=tatoeba.available, rows=tatoeba.rows)
    register(info, LazyCollection(lambda: Collection([ParallelDoc(f"{g}/{la}", text, la, g)
                                                      for g, la, text in tatoeba.rows()]), roots_key),
             doc_cls=ParallelDoc, with_queries=False)


def register_all() -> None:
    _benchmarks()
    _lareqa()
    _xquad_zero_shot()
    _mmarco()
    _ddtp()
    _parallel()
    _tatoeba()

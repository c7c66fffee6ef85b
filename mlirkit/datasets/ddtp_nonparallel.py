"""A non-parallel variant of the bundled Debian-descriptions bed: each language describes different packages.

``mlirkit/ddtp-nonparallel/<query_lang>[/dev|/test]``: every description group of ``mlirkit/ddtp`` is
kept in exactly **one** language, so the languages' document sets describe disjoint package sets
(disjoint group ids) and a language's corpus mean mixes its language with *its own* topics. Groups are
dealt to languages deterministically: groups in the order of ``sha1("mlirkit-ddtp-nonparallel:" + id)``,
each to the language (among those the group has) with the fewest groups so far (ties: alphabetical), so
the languages get the same number of documents as far as the data allows (zh, with 302 translated
descriptions, can fall short). The corpus has one document per group (913 in all, about 65 per
language); queries are the groups' short descriptions in ``query_lang`` (every group has every core
query language), relevant = the group's single document, in whichever language it was dealt to. The
dev/test split is that of ``mlirkit/ddtp``.

``mode="sorted"`` deals contiguous runs of groups in the order of their package names instead (the
``lib*`` packages mostly to one language, ``python3-*`` to another, ...): topics then differ by
language on purpose, the harder test for corpus-fitted vectors.
"""
from __future__ import annotations

import hashlib
from collections import defaultdict

from mlirkit.datasets.records import Collection
from mlirkit.io.records import Doc, ParallelQuery

MODES = ("balanced", "sorted")
FAMILY = "ddtp-nonparallel"


def _order(key: str) -> str:
    return hashlib.sha1(f"mlirkit-ddtp-nonparallel:{key}".encode("utf-8")).hexdigest()


def assign_groups(mode: str = "balanced") -> dict[str, str]:
    """``{group id: the one language it is kept in}`` (module docstring)."""
    from mlirkit.datasets.bundled import ddtp_records

    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    langs_of: dict[str, set[str]] = defaultdict(set)
    package: dict[str, str] = {}
    for r in ddtp_records():
        langs_of[r["id"]].add(r["lang"])
        package.setdefault(r["id"], str(r.get("package", r["id"])))
    languages = sorted({l for ls in langs_of.values() for l in ls})
    taken: dict[str, int] = {l: 0 for l in languages}
    out: dict[str, str] = {}
    if mode == "balanced":
        for gid in sorted(langs_of, key=_order):
            out[gid] = min(sorted(langs_of[gid]), key=lambda l: taken[l])
            taken[out[gid]] += 1
        return out
    quota = -(-len(langs_of) // len(languages))  # ceil: equal blocks
    order = sorted(langs_of, key=lambda g: (package[g], g))
    current = 0
    for gid in order:
        # the current block's language while it has room and the group has it, else the least-filled one
        lang = languages[current]
        if taken[lang] >= quota:
            current = min(current + 1, len(languages) - 1)
            lang = languages[current]
        if lang not in langs_of[gid] or taken[lang] >= quota:
            lang = min(sorted(langs_of[gid]), key=lambda l: taken[l])
        out[gid] = lang
        taken[lang] += 1
    return out


def build_ddtp_nonparallel(query_lang: str | None, split: str | None = None, mode: str = "balanced") -> Collection:
    """The collection (module docstring); ``query_lang=None``: queries in every language."""
    from mlirkit.datasets.bundled import ddtp_records, ddtp_queries

    assigned = assign_groups(mode)
    records = ddtp_records()
    docs = [Doc(f"{r['id']}/{r['lang']}", r["long"], r["lang"]) for r in records if assigned[r["id"]] == r["lang"]]
    return Collection(docs, *ddtp_queries(records, query_lang, split, lambda group: [f"{group}/{assigned[group]}"]))


def register_nonparallel() -> None:
    """Register ``mlirkit/ddtp-nonparallel[-sorted]/<lang>[/dev|/test]`` (lazy; no I/O until used)."""
    from mlirkit.datasets import bundled, resources
    from mlirkit.datasets.catalog import DatasetInfo, register
    from mlirkit.datasets.records import LazyCollection

    if not (resources.resources_dir() / bundled.DDTP_FILE).is_file():
        doc_langs: tuple[str, ...] = ()
    else:
        doc_langs = bundled.ddtp_langs()
    for mode in MODES:
        family = FAMILY if mode == "balanced" else f"{FAMILY}-{mode}"
        for q_lang in (*doc_langs, "multi"):
            lang = None if q_lang == "multi" else q_lang
            for split in (None, *bundled.SPLITS):
                dataset_id = f"mlirkit/{family}/{q_lang}" + (f"/{split}" if split else "")
                info = DatasetInfo(
                    dataset_id, family,
                    "Debian package descriptions, non-parallel: each description group kept in one language "
                    f"({mode} assignment), so languages describe disjoint packages"
                    + (f"; {split} split" if split else ""),
                    doc_langs, doc_langs if lang is None else (lang,), "913 docs", bundled.DDTP_LICENCE,
                    available_offline=lambda: (resources.resources_dir() / bundled.DDTP_FILE).is_file())
                register(info, LazyCollection(lambda la=lang, s=split, m=mode: build_ddtp_nonparallel(la, s, m)),
                         queries_lang=lang, query_cls=ParallelQuery)


__all__ = ["assign_groups", "build_ddtp_nonparallel", "register_nonparallel"]

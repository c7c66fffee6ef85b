"""Shared plumbing of the four SHIFT benchmarks: raw upstream files, else the processed release (and,
for XQuAD-R, the bundled copy of the upstream files: :mod:`mlirkit.datasets.sources`)."""
from __future__ import annotations

import logging
from typing import Callable

from mlirkit.datasets import release
from mlirkit.datasets.records import Collection
from mlirkit.datasets.sources import SourceFile, all_local, bundled_available, fetch_all

logger = logging.getLogger(__name__)


def load(raw_files: list[SourceFile], build: Callable[[dict], Collection], release_name: str,
         query_lang: str | None) -> Collection:
    """Build from the raw upstream files when all are local; else read the SHIFT release when it is
    local; else download the raw files (online), else read their bundled copy (offline, or the download
    failed; XQuAD-R), or raise one error naming the first missing file."""
    if all_local(raw_files):
        return build(fetch_all(raw_files))
    if release.release_available(release_name, query_lang):
        logger.info("reading the SHIFT processed release for %s (%s)", release_name, release.variant_dir(query_lang))
        return release.read_release(release_name, query_lang)
    alternative = ""
    if query_lang is None or query_lang in release.RELEASE_QUERY_LANGS:
        alternative = release.where_release(release_name, query_lang)
    return build(fetch_all(raw_files, alternative=alternative))


def available(raw_files: list[SourceFile], release_name: str, query_lang: str | None) -> bool:
    return all_local(raw_files) or bundled_available(raw_files) or release.release_available(release_name, query_lang)

"""Attacks on Qdrant shards (``python -m mlirkit.index qdrant``) and ``QdrantSearcher`` (``python -m mlirkit.search
--index SHARD``): a truncated or forged shard is one line naming the shard and the field, exit 2, no run
written; ``index qdrant`` on a damaged index writes no shard."""
from __future__ import annotations

import json
import os
import shutil

import numpy as np

from experiments.hostile.harness import Case, cli

__all__ = ["CASES"]


def _shard(ws):
    """The workspace index as a shard (made once), copied into the case's folder."""
    from mlirkit.base.cli import run_cli
    from mlirkit.index.cli import main

    made = ws["root"] / "shard"
    if not made.is_dir():
        assert run_cli(main, ["qdrant", str(ws["root"] / "index"), "--output", str(made), "--quiet"]) == 0
    copy = ws["tmp"] / "shard"
    shutil.copytree(made, copy)
    return copy


def _search(ws, shard, *extra):
    from mlirkit.search.cli import main

    return main, ["--index", str(shard), "--topics", str(ws["root"] / "topics.jsonl"), "--output",
                  str(ws["tmp"] / "run.trec"), "--hits", "3", *ws["enc"][:4], "--encoder-option", "max_length=64",
                  "--quiet", *extra]


def shard_case(name, damage, *needles, shift=False, note=""):
    def attack(ws):
        shard = _shard(ws)
        damage(shard)
        extra = ("--query-shift", "cosine", "--transform", str(ws["root"] / "t.safetensors")) if shift else ()
        main, argv = _search(ws, shard, *extra)
        outcome = cli(main, argv, *needles)
        if (ws["tmp"] / "run.trec").exists():
            outcome.held, outcome.observed = False, outcome.observed + "; a run was written"
        return outcome
    return Case("Qdrant shard", name, attack, f"exit 2, one line naming {', '.join(needles)}; no run", note)


def _meta(change):
    def damage(shard):
        path = shard / "mlirkit_qdrant.json"
        meta = json.loads(path.read_text())
        result = change(meta)
        path.write_text(result if isinstance(result, str) else json.dumps(meta))
    return damage


def _set(key, value):
    def change(meta):
        meta[key] = value
    return change


def _segments(cut: bool):
    """Every segment file of the shard cut to half its bytes (``cut``), or every segment removed."""
    def damage(shard):
        if not cut:
            shutil.rmtree(shard / "shard" / "segments")
            (shard / "shard" / "segments").mkdir()
            return
        for p in (p for p in sorted((shard / "shard").rglob("*")) if p.is_file() and p.stat().st_size > 64):
            os.truncate(p, p.stat().st_size // 2)
    return damage


def _lang_means(array):
    def damage(shard):
        np.save(shard / "lang_means.npy", array, allow_pickle=array.dtype == object)
    return damage


CASES = [
    shard_case("the shard's segment files cut in half", _segments(cut=True), "shard"),
    shard_case("the shard's segments removed", _segments(cut=False), "shard"),
    shard_case("no shard/ folder", lambda s: shutil.rmtree(s / "shard"), "shard"),
    shard_case("mlirkit_qdrant.json not JSON", _meta(lambda m: "{oops"), "mlirkit_qdrant.json"),
    shard_case("mlirkit_qdrant.json nested 100,000 deep", _meta(lambda m: "[" * 100_000 + "]" * 100_000),
               "mlirkit_qdrant.json"),
    shard_case("mlirkit_qdrant.json a symlink to /dev/zero",
               lambda s: ((s / "mlirkit_qdrant.json").unlink(), (s / "mlirkit_qdrant.json").symlink_to("/dev/zero")),
               "mlirkit_qdrant.json"),
    shard_case("forged documents count (999)", _meta(_set("documents", 999)), "documents"),
    shard_case("forged 'indexed' vector size (64)", _meta(lambda m: m["vectors"].update(indexed=64)), "dimension"),
    shard_case("vectors a list", _meta(_set("vectors", [32])), "vectors"),
    shard_case("doc_languages 'de' + NUL", _meta(_set("doc_languages", ["de\u0000", "en", "fr"])), "doc_languages",
               shift=True),
    shard_case("doc_languages missing a language", _meta(_set("doc_languages", ["en", "fr"])), "doc_languages",
               shift=True),
    shard_case("index_meta encoder forged (another model)",
               _meta(lambda m: m["index_meta"]["encoder"].update(model="/elsewhere")), "another encoder"),
    shard_case("lang_means.npy of another shape", _lang_means(np.zeros((2, 5))), "lang_means.npy", shift=True),
    shard_case("lang_means.npy a pickled object array", _lang_means(np.array([None, None], dtype=object)),
               "lang_means.npy", shift=True),
    shard_case("lang_means.npy with NaN", _lang_means(np.full((3, 32), np.nan)), "lang_means.npy", shift=True),
    shard_case("lang_means.npy removed", lambda s: (s / "lang_means.npy").unlink(), "lang_means.npy", shift=True),
]


def _export_from_damaged_index(ws):
    from mlirkit.index.cli import main

    ix = ws["tmp"] / "ix"
    shutil.copytree(ws["root"] / "index", ix)
    data = (ix / "embeddings.npy").read_bytes()
    (ix / "embeddings.npy").write_bytes(data[:-100])
    outcome = cli(main, ["qdrant", str(ix), "--output", str(ws["tmp"] / "s"), "--quiet"], "embeddings.npy")
    if (ws["tmp"] / "s").exists():
        outcome.held, outcome.observed = False, outcome.observed + "; a shard was written"
    return outcome


def _export_into_its_index(ws):
    from mlirkit.index.cli import main

    ix = ws["tmp"] / "ix"
    shutil.copytree(ws["root"] / "index", ix)
    before = sorted(p.name for p in ix.iterdir())
    outcome = cli(main, ["qdrant", str(ix), "--output", str(ix), "--overwrite", "--quiet"], str(ix))
    if sorted(p.name for p in ix.iterdir()) != before:
        outcome.held, outcome.observed = False, outcome.observed + "; the index changed"
    return outcome


CASES += [
    Case("index qdrant", "an index whose embeddings.npy lost 100 bytes", _export_from_damaged_index,
         "exit 2, one line naming embeddings.npy; no shard"),
    Case("index qdrant", "--output the input index itself, with --overwrite", _export_into_its_index,
         "exit 2, one line; the index untouched"),
]

"""Attacks on what the CLIs read: transform files, ``--encoder-option``, the file system, ids and texts,
language tags in every flag. Each case: exit 2 and one line naming the file, line or field; nothing
written (the output never appears)."""
from __future__ import annotations

import json
import os
import struct
from pathlib import Path

from experiments.hostile.harness import Case, Outcome, cli

__all__ = ["CASES"]


def _search(ws, *extra, topics=None, index=None, out=None):
    from mlirkit.search.cli import main

    out = out or ws["tmp"] / "out.trec"
    return main, ["--index", str(index or ws["root"] / "index"), "--topics", str(topics or ws["root"] / "topics.jsonl"),
                  "--output", str(out), "--hits", "3", "--quiet", *extra]


def _encode(ws, corpus, *extra):
    from mlirkit.encode.cli import main

    return main, ["--corpus", str(corpus), "--output", str(ws["tmp"] / "ix"), *ws["enc"], "--quiet", *extra]


def _rewrite_transform(ws, name, *, meta=None, tensors=None, raw=None) -> Path:
    """A copy of the workspace's SHIFT file with its metadata / tensors changed (or ``raw`` bytes)."""
    import numpy as np
    from safetensors import safe_open
    from safetensors.numpy import save_file

    path = ws["tmp"] / name
    if raw is not None:
        path.write_bytes(raw)
        return path
    with safe_open(str(ws["root"] / "t.safetensors"), "np") as f:
        metadata = dict(f.metadata())
        arrays = {k: f.get_tensor(k) for k in f.keys()}
    inner = json.loads(metadata["meta"])
    if meta:
        inner.update(meta)
        metadata["meta"] = json.dumps(inner)
    if tensors:
        arrays.update(tensors(np, arrays))
        arrays = {k: v for k, v in arrays.items() if v is not None}
    save_file(arrays, str(path), metadata=metadata)
    return path


def transform_case(name, build, *needles, note=""):
    def attack(ws):
        path = build(ws)
        main, argv = _search(ws, "--transform", str(path))
        return cli(main, argv, *needles, unchanged=ws["tmp"])
    return Case("transform files", name, attack, f"exit 2, one line naming the file{' and ' if needles else ''}"
                f"{', '.join(needles)}", note)


def _truncated(ws):
    data = (ws["root"] / "t.safetensors").read_bytes()
    return _rewrite_transform(ws, "cut.safetensors", raw=data[: len(data) - 40])


def _huge_header(ws):
    return _rewrite_transform(ws, "huge.safetensors", raw=struct.pack("<Q", 2**62) + b"{}")


def _pickle(ws):
    import pickle

    return _rewrite_transform(ws, "evil.safetensors", raw=pickle.dumps({"a": 1}))


TRANSFORM = [
    transform_case("empty file", lambda ws: _rewrite_transform(ws, "empty.safetensors", raw=b""), "empty.safetensors"),
    transform_case("truncated by 40 bytes", _truncated, "cut.safetensors"),
    transform_case("header length 2**62", _huge_header, "huge.safetensors"),
    transform_case("a pickle named .safetensors", _pickle, "evil.safetensors"),
    transform_case("a directory", lambda ws: (ws["tmp"] / "dir.safetensors").mkdir() or ws["tmp"] / "dir.safetensors",
                   "dir.safetensors"),
    transform_case("NaN in a vector", lambda ws: _rewrite_transform(
        ws, "nan.safetensors", tensors=lambda np, a: {"vector.de": np.full_like(a["vector.de"], np.nan)}),
        "nan.safetensors"),
    transform_case("vector of another length (31)", lambda ws: _rewrite_transform(
        ws, "short.safetensors", tensors=lambda np, a: {"vector.de": a["vector.de"][:31]}), "short.safetensors"),
    transform_case("float16 vector", lambda ws: _rewrite_transform(
        ws, "f16.safetensors", tensors=lambda np, a: {"vector.de": a["vector.de"].astype(np.float16)}),
        "f16.safetensors"),
    transform_case("int64 vector", lambda ws: _rewrite_transform(
        ws, "i64.safetensors", tensors=lambda np, a: {"vector.de": a["vector.de"].astype(np.int64)}),
        "i64.safetensors"),
    transform_case("2-d vector", lambda ws: _rewrite_transform(
        ws, "2d.safetensors", tensors=lambda np, a: {"vector.de": a["vector.de"][None, :]}), "2d.safetensors"),
    transform_case("a language named 'de\\n'", lambda ws: _rewrite_transform(
        ws, "nl.safetensors", meta={"languages": ["de\n", "fr"]},
        tensors=lambda np, a: {"vector.de\n": a["vector.de"], "vector.de": None}), "nl.safetensors"),
    transform_case("languages 'de' and 'DE' (one after canonical case)", lambda ws: _rewrite_transform(
        ws, "case.safetensors", meta={"languages": ["de", "DE", "fr"]},
        tensors=lambda np, a: {"vector.DE": a["vector.de"] * 2}), "case.safetensors"),
    transform_case("meta lists a language without a tensor", lambda ws: _rewrite_transform(
        ws, "missing.safetensors", meta={"languages": ["de", "fr", "es"]}), "missing.safetensors"),
    transform_case("a tensor of a language the meta does not list", lambda ws: _rewrite_transform(
        ws, "extra.safetensors", tensors=lambda np, a: {"vector.it": a["vector.de"]}), "extra.safetensors"),
    transform_case("unknown method 'evil'", lambda ws: _rewrite_transform(
        ws, "method.safetensors", meta={"method": "evil"}), "method.safetensors"),
    transform_case("source_lang a number", lambda ws: _rewrite_transform(
        ws, "src.safetensors", meta={"source_lang": 7}), "src.safetensors"),
    transform_case("dim says 64 (vectors 32)", lambda ws: _rewrite_transform(
        ws, "dim.safetensors", meta={"dim": 64}), "dim.safetensors"),
    transform_case("meta JSON nested 100,000 deep", lambda ws: _deep_meta(ws), "deep.safetensors"),
]


def _deep_meta(ws):
    from safetensors import safe_open
    from safetensors.numpy import save_file

    with safe_open(str(ws["root"] / "t.safetensors"), "np") as f:
        metadata = dict(f.metadata())
        arrays = {k: f.get_tensor(k) for k in f.keys()}
    metadata["meta"] = "[" * 100_000 + "]" * 100_000
    path = ws["tmp"] / "deep.safetensors"
    save_file(arrays, str(path), metadata=metadata)
    return path


# --------------------------------------------------------------------------------------- --encoder-option
def option_case(value, *needles, note=""):
    def attack(ws):
        main, argv = _encode(ws, ws["root"] / "corpus.jsonl", "--encoder-option", value)
        return cli(main, argv, *needles, unchanged=ws["tmp"])
    return Case("--encoder-option", repr(value), attack, f"exit 2, one line naming {', '.join(needles)}", note)


OPTIONS = [
    option_case("max_lenght=64", "max_lenght", "did you mean"),
    option_case("max_length=0", "max_length"),
    option_case("max_length=-5", "max_length"),
    option_case("max_length=1e9", "max_length"),
    option_case("batch_size=nan", "batch_size"),
    option_case("normalize=maybe", "normalize"),
    option_case("dtype=float128", "dtype"),
    option_case("pooling=__import__('os')", "pooling"),
    option_case("max_length", "max_length"),
    option_case("=64", "--encoder-option"),
]


# --------------------------------------------------------------------------------------- file system
def fs_case(name, build, *needles, note="", expected=None):
    def attack(ws):
        main, argv = build(ws)
        return cli(main, argv, *needles, unchanged=ws["tmp"])
    return Case("file system", name, attack, expected or f"exit 2, one line naming {', '.join(needles)}", note)


def _fifo(ws):
    path = ws["tmp"] / "fifo.jsonl"
    if not path.exists():
        os.mkfifo(path)
    return _encode(ws, path)


def _symlink_loop(ws):
    a, b = ws["tmp"] / "loop-a.jsonl", ws["tmp"] / "loop-b.jsonl"
    for p, q in ((a, b), (b, a)):
        if not p.is_symlink():
            p.symlink_to(q)
    return _encode(ws, a)


def _dev_zero_topics(ws):
    link = ws["tmp"] / "zero.tsv"
    if not link.is_symlink():
        link.symlink_to("/dev/zero")
    return _search(ws, topics=link)


def _long_name(ws):
    return _search(ws, out=ws["tmp"] / ("o" * 300 + ".trec"))


def _output_in_proc(ws):
    return _search(ws, out=Path("/proc/self/out.trec"))


def _topics_a_directory(ws):
    d = ws["tmp"] / "topics-dir"
    d.mkdir(exist_ok=True)
    (d / "junk.bin").write_bytes(b"\x00\xff" * 10)
    return _search(ws, topics=d)


def _output_symlink(ws):
    target = ws["tmp"] / "elsewhere.txt"
    target.write_text("precious\n")
    link = ws["tmp"] / "out-link.trec"
    if not link.is_symlink():
        link.symlink_to(target)
    return _search(ws, "--overwrite", out=link)


def _planted(kind):
    """An output mlirkit wrote with the user's notes.txt added; the writer asked to --overwrite it."""
    def build(ws):
        import shutil

        from mlirkit.benchmark.cli import main as benchmark_main
        from mlirkit.encode.cli import main as encode_main
        from mlirkit.index.cli import main as index_main

        out = ws["tmp"] / "mine"
        if kind == "benchmark":  # (the layout of a benchmark output: the refusal comes before any work)
            for name in ("report.md", "runs/e5/test/base.trec", "transforms/e5/x.safetensors"):
                (out / name).parent.mkdir(parents=True, exist_ok=True)
                (out / name).write_text("x")
            (out / "report.json").write_text('{"config": {}}')
            argv = benchmark_main, ["--output", str(out), "--overwrite", "--quiet"]
        elif kind == "index":
            shutil.copytree(ws["root"] / "index", out)
            argv = encode_main, ["--corpus", str(ws["root"] / "corpus.jsonl"), "--output", str(out), *ws["enc"],
                                 "--overwrite", "--quiet"]
        else:
            argv = index_main, ["qdrant", str(ws["root"] / "index"), "--output", str(out), "--quiet"]
            import contextlib
            import io

            from mlirkit.base.cli import run_cli

            with contextlib.redirect_stdout(io.StringIO()):  # (its summary line)
                assert run_cli(*argv) == 0
            argv = index_main, [*argv[1], "--overwrite"]
        (out / "notes.txt").write_text("the user's own\n")
        return argv
    return build


def _user_figure(overwrite):
    """The user's own figure.png (matplotlib's, not mlirkit's) where `eval plot alpha --output figure` writes."""
    def build(ws):
        import json as json_

        from mlirkit.eval.cli import main

        (ws["tmp"] / "figure.png").write_bytes(b"\x89PNG\r\n\x1a\n the user's own figure")
        sweep = ws["tmp"] / "sweep.json"
        sweep.write_text(json_.dumps({"0.0": {"ndcg@20": 0.5, "tlr@20": 0.1}, "1.0": {"ndcg@20": 0.6, "tlr@20": 0.2}}))
        return main, ["plot", "alpha", "--sweep", str(sweep), "--output", str(ws["tmp"] / "figure"),
                      *(["--overwrite"] if overwrite else [])]
    return build


FS = [
    fs_case("eval plot alpha --output onto the user's figure.png", _user_figure(False), "figure.png already exists"),
    fs_case("eval plot alpha --output --overwrite onto the user's figure.png", _user_figure(True),
            "figure.png exists but is not a figure written by mlirkit"),
    fs_case("encode --overwrite on an index holding the user's notes.txt", _planted("index"), "notes.txt is not mlirkit's"),
    fs_case("index qdrant --overwrite on a shard holding the user's notes.txt", _planted("qdrant"),
            "notes.txt is not mlirkit's"),
    fs_case("benchmark --output --overwrite on a report folder holding notes.txt", _planted("benchmark"),
            "notes.txt is not mlirkit's"),
    fs_case("corpus is a FIFO with no writer", _fifo, "fifo.jsonl",
            note="a FIFO would block forever; mlirkit refuses non-regular files"),
    fs_case("corpus is a symlink loop", _symlink_loop, "loop-a.jsonl"),
    fs_case("topics is a symlink to /dev/zero", _dev_zero_topics, "zero.tsv"),
    fs_case("output file name of 305 bytes", _long_name, "File name too long"),
    fs_case("output under /proc/self", _output_in_proc, "cannot write"),
    fs_case("topics is a directory of binary junk", _topics_a_directory, "topics-dir"),
    fs_case("--overwrite onto a symlink to the user's file", _output_symlink, "out-link.trec"),
]


# --------------------------------------------------------------------------------------- ids and texts
def corpus_case(name, lines, *needles, note=""):
    def attack(ws):
        path = ws["tmp"] / "c.jsonl"
        path.write_bytes(lines if isinstance(lines, bytes) else "".join(lines).encode("utf-8"))
        main, argv = _encode(ws, path)
        return cli(main, argv, *needles, unchanged=ws["tmp"])
    return Case("ids and texts", name, attack, f"exit 2, one line naming {', '.join(needles)}", note)


def _doc(i, text="a text", lang="en", **kw):
    return json.dumps({"_id": i, "text": text, "lang": lang, **kw}, ensure_ascii=False) + "\n"


def topics_case(name, text, *needles, note=""):
    def attack(ws):
        path = ws["tmp"] / "t.tsv"
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
        main, argv = _search(ws, topics=path)
        return cli(main, argv, *needles, unchanged=ws["tmp"])
    return Case("ids and texts", name, attack, f"exit 2, one line naming {', '.join(needles)}", note)


IDS = [
    corpus_case("doc id with a tab", [_doc("d\t1"), _doc("d2")], "c.jsonl"),
    corpus_case("doc id with a newline", [_doc("d\n1"), _doc("d2")], "c.jsonl"),
    corpus_case("doc id with NUL", [_doc("d\x001"), _doc("d2")], "c.jsonl"),
    corpus_case("doc id empty", [_doc(""), _doc("d2")], "c.jsonl"),
    corpus_case("doc id whitespace only", [_doc("   "), _doc("d2")], "c.jsonl"),
    corpus_case("doc id a float (1.5)", [_doc(1.5), _doc("d2")], "c.jsonl", "_id"),
    corpus_case("duplicate doc ids", [_doc("d1"), _doc("d1", "other")], "d1"),
    corpus_case("invalid UTF-8 in a line", b'{"_id": "d1", "text": "caf\xe9", "lang": "en"}\n', "c.jsonl"),
    corpus_case("lang field a number", [_doc("d1", lang=3)], "c.jsonl"),
    corpus_case("lang 'English'", [_doc("d1", lang="English")], "c.jsonl"),
    corpus_case("a JSON array line", ['["d1", "text"]\n'], "c.jsonl"),
    corpus_case("a corpus line nested 100,000 deep", ['{"_id": "d1", "text": ' + "[" * 100_000 + "]" * 100_000 + "}\n"],
                "c.jsonl"),
    corpus_case("integer of 5,000 digits as text", ['{"_id": "d1", "text": ' + "9" * 5000 + ', "lang": "en"}\n'],
                "c.jsonl"),
    corpus_case("text a lone surrogate", ['{"_id": "d1", "text": "\\ud800", "lang": "en"}\n'], "c.jsonl"),
    topics_case("query id with a space", "q 1\tferry\ten\n", "t.tsv"),
    topics_case("query text empty", "q1\t\ten\n", "t.tsv"),
    topics_case("duplicate query ids", "q1\tferry\ten\nq1\tharbour\ten\n", "q1"),
    topics_case("query language 'xx-invalid-'", "q1\tferry\txx-invalid-\n", "t.tsv"),
    topics_case("BOM and CRLF", "\ufeffq1\tferry\ten\r\nq2\tfiles\tde\r\n".encode("utf-8"), "t.tsv",
                note="expected: read (BOM and CRLF stripped) and the search runs: this case expects success"),
]
# a file with a BOM and CRLF line ends is a plain text file: it should be read, not refused
IDS[-1] = Case("ids and texts", "topics with a BOM and CRLF line ends", lambda ws: _bom_topics(ws),
               "exit 0: read as the same queries", "")


def _bom_topics(ws):
    from mlirkit.io.trec import read_run

    path = ws["tmp"] / "bom.tsv"
    path.write_bytes("\ufeffq1\tferry\ten\r\nq2\tfiles\tde\r\n".encode("utf-8"))
    main, argv = _search(ws, topics=path, out=ws["tmp"] / "bom.trec")
    outcome = cli(main, argv, expect_code=0)
    ok = outcome.held and set(read_run(ws["tmp"] / "bom.trec")) == {"q1", "q2"}
    for p in ws["tmp"].glob("bom.trec*"):
        p.unlink()
    return Outcome(ok, outcome.observed)


# --------------------------------------------------------------------------------------- language tags
def lang_case(name, build, *needles, note=""):
    def attack(ws):
        main, argv = build(ws)
        return cli(main, argv, *needles, unchanged=ws["tmp"])
    return Case("language tags", name, attack, f"exit 2, one line naming {', '.join(needles)}", note)


def _eval(ws, *extra):
    from mlirkit.eval.cli import main

    return main, ["--qrels", str(ws["root"] / "qrels.txt"), "--runs", str(ws["root"] / "run.trec"),
                  "--metrics", "ndcg@3", "--significance", "none", *extra]


def _fit(ws, *extra):
    from mlirkit.shift.cli import main

    return main, ["fit", "--pairs", str(ws["root"] / "vec.pt"), *ws["enc"], "--output", str(ws["tmp"] / "out.shift"),
                  *extra]


def _benchmark(ws, *extra):
    from mlirkit.benchmark.cli import main

    return main, ["--output", str(ws["tmp"] / "bench"), "--cache-dir", str(ws["tmp"] / "cache"), "--quick",
                  "--encoders", "usem", "--quiet", *extra]


def _train(ws, *extra):
    from mlirkit.train.cli import main

    return main, ["--backbone", str(ws["model"]), "--output", str(ws["tmp"] / "train"), "--set", "n_parallel=0",
                  "--set", "n_monolingual=0", "--set", f"triples={ws['tmp'] / 't.jsonl'}", "--quiet", *extra]


LANGS = [
    lang_case("search --default-lang English", lambda ws: _search(ws, "--default-lang", "English"), "English"),
    lang_case("search --default-lang with NUL", lambda ws: _search(ws, "--default-lang", "de\x00"), "--default-lang"),
    lang_case("search --default-lang of 300 characters", lambda ws: _search(ws, "--default-lang", "a-" * 150),
              "--default-lang"),
    lang_case("encode --default-lang 'e n'", lambda ws: _encode(ws, ws["root"] / "corpus.jsonl", "--default-lang", "e n"),
              "--default-lang"),
    lang_case("eval --default-lang 'zh_Hant'", lambda ws: _eval(ws, "--default-lang", "zh_Hant!"), "--default-lang"),
    lang_case("search --alpha 0.5 xx=0.3 (no such language)",
              lambda ws: _search(ws, "--transform", str(ws["root"] / "t.safetensors"), "--alpha", "0.5", "xx=0.3"),
              "xx"),
    lang_case("search --alpha de=nan",
              lambda ws: _search(ws, "--transform", str(ws["root"] / "t.safetensors"), "--alpha", "0.5", "de=nan"),
              "alpha nan for 'de'"),
    lang_case("shift fit --source-lang 'en;rm'", lambda ws: _fit(ws, "--source-lang", "en;rm"), "--source-lang"),
    lang_case("shift fit --source-lang und", lambda ws: _fit(ws, "--source-lang", "und"), "source language"),
    lang_case("benchmark --query-langs 'de' + NUL", lambda ws: _benchmark(ws, "--query-langs", "de\x00"), "query-langs"),
    lang_case("benchmark --langs en,English", lambda ws: _benchmark(ws, "--langs", "en,English"), "English"),
    lang_case("train --set triples_lang=English", lambda ws: _train(ws, "--set", "triples_lang=English"), "triples_lang"),
    lang_case("train --set parallel_pivot=und", lambda ws: _train(ws, "--set", "parallel_pivot=und"), "parallel_pivot"),
    lang_case("eval --query-groups with a tag 'de\\t'", lambda ws: _eval(ws, "--group-by", "family\t"), "--group-by"),
]



def ok_case(surface, name, build, expected, note=""):
    """An input that is odd but faithful: it must be read (exit 0), not refused."""
    def attack(ws):
        main, argv = build(ws)
        return cli(main, argv, expect_code=0)
    return Case(surface, name, attack, expected, note)


def _corpus(ws, name, lines):
    path = ws["tmp"] / name
    path.write_text("".join(lines), encoding="utf-8")
    return path


ACCEPTED = [
    ok_case("ids and texts", "doc id an integer (7)", lambda ws: _encode(ws, _corpus(ws, "c.jsonl", [_doc(7), _doc("d2")])),
            "exit 0: indexed as '7'", "BEIR corpora carry integer ids; a float, bool or null id is refused"),
    ok_case("ids and texts", "doc id of 100,000 characters (dense index)",
            lambda ws: _encode(ws, _corpus(ws, "c.jsonl", [_doc("d" * 100_000), _doc("d2")])),
            "exit 0: an id is opaque text; the BM25 index (Lucene's 32,766-byte term limit) is its own case"),
    ok_case("language tags", "search --alpha 0.5 'de\\n=0.3'",
            lambda ws: _search(ws, "--transform", str(ws["root"] / "t.safetensors"), "--alpha", "0.5", "de\n=0.3"),
            "exit 0: read as de=0.3", "whitespace around a code is stripped by every language option (lang_code)"),
    ok_case("--encoder-option", "'max_length=99999999999999999999999'",
            lambda ws: _encode(ws, ws["root"] / "corpus.jsonl", "--encoder-option", "max_length=99999999999999999999999"),
            "exit 0: clamped to the model's positions, with a warning",
            "mlirkit/encoders/hf.py _usable_length: a length beyond the position embeddings is clamped and said"),
    ok_case("--encoder-option", "'trust_remote_code=1'",
            lambda ws: _encode(ws, ws["root"] / "corpus.jsonl", "--encoder-option", "trust_remote_code=1"),
            "exit 0: 1 is true (mlirkit/base/options.py: 1/true/yes/on)",
            "given on the command line, as the promise requires; the tiny model ships no code"),
    ok_case("language tags", "shift fit --langs de,,fr", lambda ws: _fit(ws, "--langs", "de,,fr"),
            "exit 0: read as de, fr", "an empty item of a comma list is no language; nothing else is guessed"),
]



def _lucene_long_id(ws):
    from mlirkit.lexical.cli import main

    path = ws["tmp"] / "c.jsonl"
    path.write_text(_doc("e1") + _doc("d" * 40_000), encoding="utf-8")
    return cli(main, ["index", "--corpus", str(path), "--output", str(ws["tmp"] / "bm25"), "--quiet"],
               "40,000 bytes", unchanged=ws["tmp"])


IDS.append(Case("ids and texts", "doc id of 40,000 bytes (BM25 index, JVM)", _lucene_long_id,
                "exit 2, one line naming the id and Lucene's 32,766-byte term limit"))

CASES = [*TRANSFORM, *OPTIONS, *FS, *IDS, *LANGS, *ACCEPTED]

#!/usr/bin/env python
"""Build the bundled offline collections in ``resources/`` from the shared real-translation data.

    python scripts/build_bundled.py --data $SHARED_DATA --out resources

Reproducible: the selection depends only on the input files (ordering and sampling by SHA-1 of ids),
and the gzip files are written with mtime 0, so the same input gives byte-identical output.

Outputs (all gzip JSON Lines, UTF-8; language codes normalised: ``pt-BR`` -> ``pt``, ``zh-CN`` -> ``zh``):

- ``ddtp/benchmark.jsonl.gz``: Debian package descriptions for ``mlirkit/ddtp/...``; one record per
  (id, lang): ``{"id", "lang", "package", "split", "short", "long"}``.
  Groups: ids with an English long description of >= 100 characters, no ``dup_of``/``near_dup_of``,
  present in all 8 core languages (en de fr it ja ru uk pl), then greedy near-duplicate removal
  (same normalised English short, or Jaccard >= 0.5 of English long word 3-shingles with a kept group);
  every language version of a kept group is included (also es, pt, zh, ko, cs, sk where present).
  ``long`` is truncated to at most 1,000 characters (at a line break, else a sentence end, else a
  space, never below 500 characters). ``split``: "dev" when sha1("mlirkit-ddtp-split:" + id) mod 10 < 3,
  else "test" (group level, so dev and test query groups are disjoint).
- ``parallel/ddtp.jsonl.gz``: ``{"id", "lang", "text", "package"}`` (text = long description, same truncation),
  1,200 groups disjoint from the benchmark and not near-duplicates of it (same rule), preferring groups
  with more core languages (then SHA-1 order); at least English and one more language.
- ``parallel/libreoffice-help.jsonl.gz``: 2,000 aligned help paragraphs (ids without ``dup_of``,
  English text >= 50 characters, present in en de fr it ja ru pl), SHA-1 order, all their languages.
- ``parallel/gettext.jsonl.gz``: 3,000 aligned messages (ids without ``dup_of``, English text >= 40
  characters, present in all 8 core languages), SHA-1 order, all their languages.
- ``xquad-r.tar.xz``: the 11 XQuAD-R files ``xquad-r/{lang}.json`` of the LAReQA release, byte for
  byte (the shared copies are gzip files of the upstream bytes; here they are one xz-compressed tar).
- ``tatoeba.tar.xz``: the 224 Tatoeba test files ``tatoeba/tatoeba.{xxx}-eng.{xxx,eng}`` of the LASER
  release (112 languages with English), byte for byte, one xz-compressed tar.
- ``manifest.json``: counts per file and language, input SHA-256, parameters; for the two archives
  the size, SHA-256 and MD5 of every member (the checksums of the upstream files) and their counts.

The archives are deterministic: members in name order, USTAR headers with mtime 0, uid/gid 0, mode
0444, no user names; xz preset 9e with a CRC64 check.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import lzma
import re
import tarfile
import sys
from collections import defaultdict
from pathlib import Path

CORE = ("en", "de", "fr", "it", "ja", "ru", "uk", "pl")
LANG_MAP = {"pt-BR": "pt", "zh-CN": "zh"}
MAX_LONG = 1000
MIN_CUT = 500
MIN_EN_LONG = 100
JACCARD = 0.5
DEV_PERCENT = 30
N_PARALLEL_DDTP = 1200
N_LIBREOFFICE = 2000
LO_REQUIRED = ("en", "de", "fr", "it", "ja", "ru", "pl")
LO_MIN_EN = 50
N_GETTEXT = 3000
GT_MIN_EN = 40


def sha1_key(s: str) -> str:
    return hashlib.sha1(s.encode("utf-8")).hexdigest()


def split_of(group_id: str) -> str:
    return "dev" if int(sha1_key("mlirkit-ddtp-split:" + group_id), 16) % 100 < DEV_PERCENT else "test"


def norm_lang(lang: str) -> str:
    return LANG_MAP.get(lang, lang)


def truncate(text: str, limit: int = MAX_LONG) -> str:
    """At most ``limit`` characters, cut at the last line break, else sentence end, else space
    between ``MIN_CUT`` and ``limit``; a hard cut if none."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    for pattern in ("\n", ". ", "。", "! ", "? ", " "):
        cut = head.rfind(pattern)
        if cut >= MIN_CUT:
            end = cut + (1 if pattern in (". ", "! ", "? ", "。") else 0)
            return head[:end].rstrip()
    return head.rstrip()


def normalise(text: str) -> str:
    return re.sub(r"[^\w]+", " ", text.casefold()).strip()


def shingles(text: str, n: int = 3) -> frozenset[str]:
    words = normalise(text).split()
    if len(words) < n:
        return frozenset({" ".join(words)})
    return frozenset(" ".join(words[i:i + n]) for i in range(len(words) - n + 1))


def jaccard(a: frozenset, b: frozenset) -> float:
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def read_groups(path: Path) -> dict[str, dict[str, dict]]:
    groups: dict[str, dict[str, dict]] = defaultdict(dict)
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            groups[r["id"]][norm_lang(r["lang"])] = r
    return groups


def write_jsonl_gz(path: Path, records: list[dict]) -> None:
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
        for r in records:
            gz.write((json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n").encode("utf-8"))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(buf.getvalue())
    tmp.replace(path)


def lang_counts(records: list[dict]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for r in records:
        counts[r["lang"]] += 1
    return dict(sorted(counts.items()))


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class NearDupIndex:
    """Greedy near-duplicate filter over English descriptions (short equality or long shingle Jaccard)."""

    def __init__(self) -> None:
        self.shorts: set[str] = set()
        self.sigs: list[frozenset] = []
        self.by_shingle: dict[str, list[int]] = defaultdict(list)

    def is_dup(self, short: str, long: str) -> bool:
        if normalise(short) in self.shorts:
            return True
        sig = shingles(long)
        candidates = {i for s in sig for i in self.by_shingle.get(s, ())}
        return any(jaccard(sig, self.sigs[i]) >= JACCARD for i in candidates)

    def add(self, short: str, long: str) -> None:
        self.shorts.add(normalise(short))
        sig = shingles(long)
        idx = len(self.sigs)
        self.sigs.append(sig)
        for s in sig:
            self.by_shingle[s].append(idx)


def build_ddtp(path: Path) -> tuple[list[dict], list[dict], dict]:
    groups = read_groups(path)
    reps = [gid for gid, g in groups.items()
            if "en" in g and "dup_of" not in g["en"] and "near_dup_of" not in g["en"]
            and len(g["en"]["long"]) >= MIN_EN_LONG]
    ncore = {gid: sum(lang in groups[gid] for lang in CORE) for gid in reps}
    # benchmark: every core language present; greedy near-dup removal in SHA-1 order
    bench_ids, index, dropped = [], NearDupIndex(), 0
    for gid in sorted((g for g in reps if ncore[g] == len(CORE)), key=sha1_key):
        en = groups[gid]["en"]
        if index.is_dup(en["short"], en["long"]):
            dropped += 1
            continue
        index.add(en["short"], en["long"])
        bench_ids.append(gid)
    bench_set = set(bench_ids)
    bench = []
    for gid in sorted(bench_ids):
        for lang in sorted(groups[gid]):
            r = groups[gid][lang]
            if not r["long"].strip() or not r["short"].strip():
                continue
            bench.append({"id": gid, "lang": lang, "package": r["package"], "split": split_of(gid),
                          "short": r["short"], "long": truncate(r["long"])})
    # every member of a near-dup group whose representative is in the benchmark is excluded too
    near_groups = {gid for gid, g in groups.items() if "en" in g and
                   (g["en"].get("near_dup_of") in bench_set or g["en"].get("dup_of") in bench_set)}
    par_ids = []
    for gid in sorted((g for g in reps if g not in bench_set and g not in near_groups and ncore[g] >= 2),
                      key=lambda g: (-ncore[g], sha1_key(g))):
        en = groups[gid]["en"]
        if index.is_dup(en["short"], en["long"]):
            continue
        index.add(en["short"], en["long"])  # also keeps the parallel set free of near-duplicates
        par_ids.append(gid)
        if len(par_ids) == N_PARALLEL_DDTP:
            break
    par = [{"id": gid, "lang": lang, "text": truncate(groups[gid][lang]["long"]), "package": groups[gid][lang]["package"]}
           for gid in sorted(par_ids) for lang in sorted(groups[gid]) if groups[gid][lang]["long"].strip()]
    n_trunc = sum(1 for gid in bench_ids for r in groups[gid].values() if len(r["long"]) > MAX_LONG)
    stats = {"candidate_groups": sum(1 for g in reps if ncore[g] == len(CORE)),
             "near_duplicates_dropped": dropped, "groups": len(bench_ids),
             "dev_groups": sum(split_of(g) == "dev" for g in bench_ids),
             "test_groups": sum(split_of(g) == "test" for g in bench_ids),
             "truncated_long_descriptions": n_trunc, "parallel_groups": len(par_ids)}
    return bench, par, stats


def build_aligned(path: Path, required: tuple[str, ...], min_en: int, n: int) -> list[dict]:
    """``n`` groups (SHA-1 order of ids) that have every ``required`` language, no ``dup_of`` and an
    English text of at least ``min_en`` characters; all their language versions."""
    groups = read_groups(path)
    ok = [gid for gid, g in groups.items()
          if all(lang in g for lang in required) and "dup_of" not in g["en"] and len(g["en"]["text"]) >= min_en]
    chosen = sorted(sorted(ok, key=sha1_key)[:n])
    return [{"id": gid, "lang": lang, "text": groups[gid][lang]["text"]} for gid in chosen for lang in sorted(groups[gid])]


XQUAD_R_LANGS = ("ar", "de", "el", "en", "es", "hi", "ru", "th", "tr", "vi", "zh")
ARCHIVES = {"xquad-r": "xquad-r.tar.xz", "tatoeba": "tatoeba.tar.xz"}


def upstream_files(data: Path) -> dict[str, dict[str, Path]]:
    """archive name -> {member name (the upstream relative path): shared gzip file holding its bytes}."""
    tatoeba = sorted((data / "tatoeba").glob("tatoeba.*-eng.*.gz"))
    return {"xquad-r": {f"xquad-r/{lang}.json": data / "xquad-r" / f"{lang}.json.gz" for lang in XQUAD_R_LANGS},
            "tatoeba": {f"tatoeba/{p.name[:-3]}": p for p in tatoeba}}


def write_tar_xz(path: Path, members: dict[str, bytes]) -> None:
    """A deterministic xz-compressed tar of ``members`` (name -> bytes), written atomically."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name in sorted(members):
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(members[name]), 0, 0o444
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(members[name]))
    data = lzma.compress(buf.getvalue(), format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64,
                         preset=9 | lzma.PRESET_EXTREME)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def xquad_r_counts(members: dict[str, bytes]) -> dict:
    """Articles, paragraphs, questions and sentences per language of the XQuAD-R files."""
    out: dict = {"articles": {}, "paragraphs": {}, "questions": {}, "sentences": {}}
    for name, raw in sorted(members.items()):
        lang = name.split("/")[1].split(".")[0]
        paras = [p for art in json.loads(raw)["data"] for p in art["paragraphs"]]
        out["articles"][lang] = len(json.loads(raw)["data"])
        out["paragraphs"][lang] = len(paras)
        out["questions"][lang] = sum(len(p["qas"]) for p in paras)
        out["sentences"][lang] = sum(len(p["sentences"]) for p in paras)
    return out


TATOEBA_NAME = re.compile(r"tatoeba/tatoeba\.([a-z]{3})-eng\.([a-z]{3})")


def tatoeba_counts(members: dict[str, bytes]) -> dict:
    """Pairs per language (ISO 639-3 code of the file names); both sides of a language have as many lines."""
    pairs: dict[str, int] = {}
    for name, raw in sorted(members.items()):
        code = TATOEBA_NAME.fullmatch(name).group(1)
        n = raw.count(b"\n")
        if pairs.setdefault(code, n) != n:
            raise SystemExit(f"error: {name}: {n} lines, the other side of {code} has {pairs[code]}")
    return {"languages": len(pairs), "pairs": pairs}


def build_upstream(data: Path, out: Path) -> dict:
    """Write the archives of upstream files; their manifest entries."""
    entries = {}
    for kind, files in upstream_files(data).items():
        members = {name: gzip.decompress(p.read_bytes()) for name, p in files.items()}
        write_tar_xz(out / ARCHIVES[kind], members)
        counts = xquad_r_counts(members) if kind == "xquad-r" else tatoeba_counts(members)
        entries[ARCHIVES[kind]] = {
            "bytes": (out / ARCHIVES[kind]).stat().st_size, "counts": counts,
            "members": {name: {"bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest(),
                               "md5": hashlib.md5(raw).hexdigest()} for name, raw in sorted(members.items())}}
    return entries


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True,
                    help="the shared data set ($SHARED_DATA, usually ../shared/data beside the checkout)")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "resources")
    args = ap.parse_args(argv)
    inputs = {"ddtp": args.data / "ddtp/descriptions.jsonl.gz",
              "libreoffice-help": args.data / "libreoffice-help/segments.jsonl.gz",
              "gettext": args.data / "gettext/messages.jsonl.gz"}
    for p in [*inputs.values(), *(f for files in upstream_files(args.data).values() for f in files.values())]:
        if not p.is_file():
            print(f"error: missing input {p}", file=sys.stderr)
            return 2
    bench, par_ddtp, ddtp_stats = build_ddtp(inputs["ddtp"])
    lo = build_aligned(inputs["libreoffice-help"], LO_REQUIRED, LO_MIN_EN, N_LIBREOFFICE)
    gt = build_aligned(inputs["gettext"], CORE, GT_MIN_EN, N_GETTEXT)
    outputs = {"ddtp/benchmark.jsonl.gz": bench, "parallel/ddtp.jsonl.gz": par_ddtp,
               "parallel/libreoffice-help.jsonl.gz": lo, "parallel/gettext.jsonl.gz": gt}
    manifest = {"format": 1, "language_map": LANG_MAP,
                "inputs": {k: {"path": str(p.relative_to(args.data)), "sha256": file_sha256(p)} for k, p in inputs.items()},
                "parameters": {"core_langs": list(CORE), "max_long_chars": MAX_LONG, "min_en_long": MIN_EN_LONG,
                               "jaccard": JACCARD, "dev_percent": DEV_PERCENT, "parallel_ddtp": N_PARALLEL_DDTP,
                               "libreoffice": N_LIBREOFFICE, "libreoffice_required": list(LO_REQUIRED),
                               "gettext": N_GETTEXT},
                "ddtp": ddtp_stats, "files": {}}
    for rel, records in outputs.items():
        write_jsonl_gz(args.out / rel, records)
        manifest["files"][rel] = {"records": len(records), "groups": len({r["id"] for r in records}),
                                  "langs": lang_counts(records), "bytes": (args.out / rel).stat().st_size}
    manifest["sources"] = {
        "parallel/ddtp.jsonl.gz": {"packages": len({r["package"] for r in par_ddtp})},
        "ddtp/benchmark.jsonl.gz": {"packages": len({r["package"] for r in bench})},
        "parallel/libreoffice-help.jsonl.gz": {"pages": len({r["id"].split("#")[0] for r in lo})},
        "parallel/gettext.jsonl.gz": {"domains": dict(sorted(lang_counts([{"lang": r["id"].split(":")[0]} for r in gt if r["lang"] == "en"]).items()))},
    }
    for split in ("dev", "test"):
        sub = [r for r in bench if r["split"] == split]
        manifest["ddtp"][f"{split}_queries_per_lang"] = lang_counts(sub)
    manifest["upstream"] = build_upstream(args.data, args.out)
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in manifest.items() if k in ("ddtp", "files")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Which cases of the pass were fixed, and by which commit (each failed before it: the same harness run
against the checkout before the commit fails exactly these), and which are judgement calls (argued in their
note and in experiments/notes/hostile-pass-4.md). Keyed by case name (unique across the modules)."""
from __future__ import annotations

__all__ = ["ARGUED", "FIXED"]

FIXED = {
    "eval plot alpha --output onto the user's figure.png": '085f845',
    "eval plot alpha --output --overwrite onto the user's figure.png": '085f845',
    'output under /proc/self': 'c090aa2',
    "encode --overwrite on an index holding the user's notes.txt": '8778ff1',
    "index qdrant --overwrite on a shard holding the user's notes.txt": '8778ff1',
    'benchmark --output --overwrite on a report folder holding notes.txt': '8778ff1',
    'doc id of 40,000 bytes (BM25 index, JVM)': 'd6dabc8',
    '--set max_steps=10**400 (digits)': '90f4a3b',
    'config: seed -1': '90f4a3b',
    'a question id with a space': 'd43b0c6',
    'a context of spaces only': 'd43b0c6',
    'sentence_breaks reversed (LAReQA pool)': 'd43b0c6',
    'sentence_breaks overlapping (LAReQA pool)': 'd43b0c6',
    'de.json a symlink to /dev/zero': 'bf113b1',
    'query of spaces only': 'f10197f',
    'query of zero-width spaces only': 'f10197f',
    'a 20 MB body (padding in whitespace)': 'f10197f',
    'a 20 MB unknown field': 'f10197f',
    'k = true': 'f10197f',
    "lang 'DE' (canonical case de)": 'f10197f',
    "lang 'de-CH' (meets de by lookup)": 'f10197f',
    'batch: a query of spaces among good ones': 'f10197f',
    "document id '../../etc/passwd'": 'f10197f',
    'GET on /v1/search': 'f10197f',
    "the shard's segment files cut in half": '45adef8',
    "the shard's segments removed": '45adef8',
    'no shard/ folder': '45adef8',
    'mlirkit_qdrant.json nested 100,000 deep': '45adef8',
    'mlirkit_qdrant.json a symlink to /dev/zero': '45adef8',
    'forged documents count (999)': '45adef8',
    "doc_languages 'de' + NUL": '45adef8',
    'doc_languages missing a language': '45adef8',
    'lang_means.npy a pickled object array': '45adef8',
    'lang_means.npy with NaN': '45adef8',
    'search_text with a lone surrogate': 'cd4c03c',
    'Indexer on a Doc whose text is None': 'cd4c03c',
    'search_text of zero-width spaces': 'f10197f',
}
ARGUED = {
    "search --alpha 0.5 'de\\n=0.3'",
    'shift fit --langs de,,fr',
    'PEER of a query with nothing to test (one language relevant)',
    'a German question English lacks (MLQA: every question is in English)',
}

"""A small trilingual toy collection for the Pyserini integration tests (no JVM, no model)."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

#: (English, German, French) renderings of the same sentence: the corpus and the SHIFT fitting pairs
PARALLEL: list[tuple[str, str, str]] = [
    ("the cat sleeps on the warm mat", "die Katze schläft auf der warmen Matte", "le chat dort sur le tapis chaud"),
    ("a dog barks loudly at night", "ein Hund bellt nachts laut", "un chien aboie fort la nuit"),
    ("the weather is nice today", "das Wetter ist heute schön", "il fait beau aujourd'hui"),
    ("install the package with apt", "installiere das Paket mit apt", "installez le paquet avec apt"),
    ("the library opens at nine", "die Bibliothek öffnet um neun", "la bibliothèque ouvre à neuf heures"),
    ("trains are late because of snow", "Züge haben wegen Schnee Verspätung", "les trains sont en retard à cause de la neige"),
    ("she reads a book about history", "sie liest ein Buch über Geschichte", "elle lit un livre d'histoire"),
    ("the server stores backups every day", "der Server speichert täglich Sicherungen", "le serveur stocke des sauvegardes chaque jour"),
    ("fresh bread from the bakery", "frisches Brot vom Bäcker", "du pain frais de la boulangerie"),
    ("the river floods the old town", "der Fluss überflutet die Altstadt", "la rivière inonde la vieille ville"),
]
LANGS = ("en", "de", "fr")
QUERIES: list[tuple[str, str, int]] = [  # (query id, English text, index of the relevant sentence)
    ("q1", "cat sleeping on a mat", 0),
    ("q2", "barking dog", 1),
    ("q3", "sunny weather", 2),
    ("q4", "how to install a package", 3),
    ("q5", "late trains in winter", 5),
    ("q6", "daily server backups", 7),
]


@dataclass(frozen=True)
class ToyCollection:
    corpus: Path        # JSONL: id, text, lang
    topics: Path        # TSV: qid, text (the format both Pyserini and mlirkit read)
    qrels: Path         # TREC qrels: the English version gets grade 2, the translations grade 1
    doc_langs: dict[str, str]


def doc_id(i: int, lang: str) -> str:
    return f"s{i:02d}-{lang}"


def write_toy_collection(directory: str | os.PathLike) -> ToyCollection:
    """Write the toy corpus (30 documents in en/de/fr), 6 English queries and graded qrels."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    corpus, topics, qrels = directory / "corpus.jsonl", directory / "topics.tsv", directory / "qrels.txt"
    doc_langs: dict[str, str] = {}
    with open(corpus, "w", encoding="utf-8") as f:
        for i, texts in enumerate(PARALLEL):
            for lang, text in zip(LANGS, texts):
                doc_langs[doc_id(i, lang)] = lang
                f.write(json.dumps({"id": doc_id(i, lang), "text": text, "lang": lang}, ensure_ascii=False) + "\n")
    with open(topics, "w", encoding="utf-8") as f:
        f.writelines(f"{qid}\t{text}\n" for qid, text, _ in QUERIES)
    with open(qrels, "w", encoding="utf-8") as f:
        for qid, _, rel in QUERIES:
            for lang in LANGS:
                f.write(f"{qid} 0 {doc_id(rel, lang)} {2 if lang == 'en' else 1}\n")
    return ToyCollection(corpus, topics, qrels, doc_langs)


__all__ = ["LANGS", "PARALLEL", "write_toy_collection"]

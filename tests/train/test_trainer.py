"""DCL model, trainer, config, data and the ``dcl`` encoder on a tiny random model."""
from __future__ import annotations

import dataclasses
import itertools
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from tests.helpers import copy_model, no_dropout, write_tiny_data  # noqa: E402
from mlirkit.base.errors import MlirkitError  # noqa: E402
from mlirkit.train.config import ABLATIONS, TrainConfig  # noqa: E402
from mlirkit.train.data import (  # noqa: E402
    Batch, BatchComposer, MonoSentence, ParallelPair, RetrievalExample, read_monolingual, read_parallel, read_triples,
)
from mlirkit.encoders.dcl_model import DisentangledEncoder  # noqa: E402
from mlirkit.train.trainer import Trainer  # noqa: E402


@pytest.fixture(scope="module")
def base_model(tiny_model_dir):
    return DisentangledEncoder.from_backbone(str(tiny_model_dir), head_dim=16, query_prefix="query: ",
                                             doc_prefix="passage: ", max_length=32, seed=0)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return write_tiny_data(tmp_path_factory.mktemp("dcl_data"))


def make_cfg(tmp_path, data, **kw):
    base = dict(backbone="tiny", output_dir=str(tmp_path / "run"), head_dim=16, triples=data["triples"],
                parallel=[data["parallel"]], monolingual=[data["mono"]], n_retrieval=4, n_parallel=4,
                n_monolingual=4, n_hard_negatives=1, max_length=32, lr=1e-3, max_steps=4, lambda_d=1.0,
                query_prefix="query: ", doc_prefix="passage: ", shuffle_buffer=8, seed=3,
                freeze_word_embeddings=True)
    base.update(kw)
    return TrainConfig(**base)


def fixed_batch():
    return Batch(
        retrieval=[RetrievalExample("apple house", "a text about apple and house", ("stone things",)),
                   RetrievalExample("green river", "a text about green and river", ("paper words",)),
                   RetrievalExample("music light", "a text about music and light", ("water here",))],
        parallel=[ParallelPair("apple and house", "Apfel und Haus", "en", "de"),
                  ParallelPair("green river", "grüner Fluss", "en", "de"),
                  ParallelPair("the music", "la musique", "en", "fr")],
        monolingual=[MonoSentence("il giardino", "it"), MonoSentence("la pierre", "fr"),
                     MonoSentence("das Fenster", "de")],
    )


# ---------------------------------------------------------------- model
def test_identity_head_init_reproduces_backbone_pooling(base_model):
    m = base_model
    enc = m.tokenize(["hello world"], "query: ")
    with torch.no_grad():
        h, _ = m.encode_hidden(enc["input_ids"], enc["attention_mask"])
    r = m.embed(["hello world"], side="query", normalize=False)
    np.testing.assert_allclose(r.numpy(), h[:, :16].numpy(), rtol=1e-5, atol=1e-6)


def test_save_load_round_trip_and_load_encoder(base_model, tmp_path):
    from mlirkit.encoders import load_encoder
    from mlirkit.encoders.dcl import DCLEncoder

    m = copy_model(base_model)
    with torch.no_grad():
        m.language.weight.normal_()
        m.semantic.weight.add_(0.01 * torch.randn_like(m.semantic.weight))
    out = m.save(tmp_path / "dcl")
    texts = ["hello world", "Hallo Welt, wie geht's?", "日本語のテキスト"]
    enc = load_encoder(str(out), batch_size=32)
    assert isinstance(enc, DCLEncoder) and enc.dim == 16 and enc.normalized
    np.testing.assert_array_equal(enc.encode_queries(texts), m.embed(texts, side="query").numpy())
    np.testing.assert_array_equal(enc.encode_docs(texts), m.embed(texts, side="doc").numpy())
    # other batch sizes pad differently: equal up to float rounding
    np.testing.assert_allclose(enc.encode_docs(texts, batch_size=1), enc.encode_docs(texts), atol=1e-6)
    assert not np.allclose(enc.encode_queries(texts), enc.encode_docs(texts))  # different prompts
    for (k, a), (_, b) in zip(m.state_dict().items(), enc.model.state_dict().items()):
        assert torch.equal(a, b), k
    from mlirkit.io.files import file_sha256

    fp = enc.fingerprint
    assert fp["class"] == "dcl" and fp["heads_sha256"] == file_sha256(out / "heads.safetensors")
    assert len(fp["backbone_sha256"]) == 64 and fp["head_dim"] == 16 and fp["query_prefix"] == "query: "
    assert enc.encode_docs([]).shape == (0, 16)


@pytest.mark.slow
def test_trained_model_indexes_with_mlirkit_encode(base_model, tmp_path):
    from mlirkit.encode.cli import main as encode_main
    from mlirkit.index import DenseIndex

    out = copy_model(base_model).save(tmp_path / "dcl")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"d{i}", "contents": t, "lang": lang}) + "\n"
                              for i, (t, lang) in enumerate([("the cat", "en"), ("die Katze", "de")])))
    assert encode_main(["--corpus", str(corpus), "--output", str(tmp_path / "idx"), "--encoder", str(out),
                        "--quiet"]) == 0
    index = DenseIndex(tmp_path / "idx")
    assert index.docids == ["d0", "d1"] and index.meta["encoder"]["class"] == "dcl"


def test_load_refuses_non_dcl_directory(tmp_path, tiny_model_dir):
    from mlirkit.encoders.dcl import DCLEncoder

    with pytest.raises(MlirkitError, match="not a DCL model directory"):
        DCLEncoder(str(tiny_model_dir))
    (tmp_path / "mlirkit_dcl.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(MlirkitError, match="not an mlirkit DCL model"):
        DisentangledEncoder.load(tmp_path)


# ---------------------------------------------------------------- trainer
def test_gradients_reach_heads_and_backbone(base_model, tmp_path, data):
    tr = Trainer(make_cfg(tmp_path, data), model=copy_model(base_model))
    losses = tr.compute_losses(fixed_batch())
    assert {"ret", "sent_p", "tok_p", "sent_q", "tok_q", "ldcl", "orth", "total"} <= set(losses)
    losses["total"].backward()
    m = tr.model
    for name, p in [("semantic", m.semantic.weight), ("language", m.language.weight),
                    ("backbone", m.backbone.encoder.layer[0].attention.self.query.weight)]:
        assert p.grad is not None and float(p.grad.abs().sum()) > 0, name
    assert len(tr.alignments) == 3  # one mutual-argmax alignment per parallel pair, cached


def test_gradient_checkpointing_gives_the_same_gradients(base_model, tmp_path, data):
    grads = []
    for ckpt in (False, True):
        tr = Trainer(make_cfg(tmp_path, data, gradient_checkpointing=ckpt), model=copy_model(base_model))
        no_dropout(tr.model)
        tr.compute_losses(fixed_batch())["total"].backward()
        grads.append(tr.model.backbone.encoder.layer[0].attention.self.query.weight.grad.clone())
    torch.testing.assert_close(grads[0], grads[1], rtol=1e-4, atol=1e-6)
    assert float(grads[0].abs().sum()) > 0


def test_few_steps_reduce_total_loss(base_model, tmp_path, data):
    cfg = make_cfg(tmp_path, data, lr=3e-3, max_steps=10)
    tr = Trainer(cfg, model=copy_model(base_model))
    no_dropout(tr.model)
    batch = fixed_batch()

    def total():
        with torch.no_grad():
            return float(tr.compute_losses(batch)["total"])

    before = total()
    for _ in range(8):
        logs = tr.train_step([batch])
    after = total()
    assert set(logs) >= {"ret", "ldcl", "orth", "total", "lr", "grad_norm"}
    assert after < 0.9 * before


@pytest.mark.slow
def test_ablation_switches_remove_terms(base_model, tmp_path, data):
    cfg = make_cfg(tmp_path, data).with_updates(**ABLATIONS.get("no_hsa"))
    losses = Trainer(cfg, model=copy_model(base_model)).compute_losses(fixed_batch())
    assert set(losses) == {"ret", "ldcl", "orth", "total"}
    cfg = make_cfg(tmp_path, data).with_updates(**ABLATIONS.get("no_disentangler"), head_dim=None)
    model = DisentangledEncoder.from_backbone(base_model.config.backbone_name, use_disentangler=False, max_length=32)
    tr = Trainer(cfg, model=model)
    losses = tr.compute_losses(fixed_batch())
    assert "ldcl" not in losses and "orth" not in losses and "sent_p" in losses
    assert tr.model.semantic is None


def test_ldcl_without_hsa_still_gets_multilingual_items(base_model, tmp_path, data):
    # Table 3's "+LDCL" row (HSA off): the composer must still deliver the parallel and monolingual
    # items, or L_LDCL sees only English retrieval items, has no other-language negatives and is zero
    cfg = make_cfg(tmp_path, data).with_updates(**ABLATIONS.get("no_hsa"))
    tr = Trainer(cfg, model=copy_model(base_model))
    batch = next(iter(tr.make_batches()))
    assert len(batch.parallel) == 4 and len(batch.monolingual) == 4
    losses = tr.compute_losses(batch)
    assert set(losses) == {"ret", "ldcl", "orth", "total"} and float(losses["ldcl"].detach()) > 0.1
    base = Trainer(make_cfg(tmp_path, data).with_updates(**ABLATIONS.get("base"), head_dim=None),
                   model=DisentangledEncoder.from_backbone(base_model.config.backbone_name, use_disentangler=False,
                                                           max_length=32))
    b = next(iter(base.make_batches()))  # nothing needs them: the base fine-tune reads retrieval items only
    assert len(b.retrieval) == 4 and not b.parallel and not b.monolingual


@pytest.mark.slow
def test_train_writes_model_log_and_resume_reproduces_uninterrupted_run(base_model, tmp_path, data):
    from mlirkit.encoders import load_encoder

    cfg_a = make_cfg(tmp_path / "a", data, max_steps=4, save_every=2)
    tr_a = Trainer(cfg_a, model=copy_model(base_model))
    final = tr_a.train(show_progress=False)
    logs = [json.loads(x) for x in (tmp_path / "a" / "run" / "train_log.jsonl").read_text().splitlines()]
    assert [x["step"] for x in logs] == [1, 2, 3, 4] and all("ldcl" in x and "ret" in x for x in logs)
    assert json.loads((final / "train_config.json").read_text())["max_steps"] == 4
    assert load_encoder(str(final)).dim == 16

    # interrupted after step 2 (checkpoint), then resumed by a fresh trainer
    cfg_b = make_cfg(tmp_path / "b", data, max_steps=4, save_every=2)
    tr_b1 = Trainer(cfg_b, model=copy_model(base_model))
    batches = tr_b1.make_batches()
    for _ in range(2):
        tr_b1.train_step([next(batches)])
    tr_b1.save_checkpoint()
    tr_b2 = Trainer(cfg_b, model=copy_model(base_model))
    tr_b2.train(resume=True, show_progress=False)
    assert tr_b2.step == 4
    for (k, a), (_, b) in zip(tr_a.model.state_dict().items(), tr_b2.model.state_dict().items()):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6, msg=k)
    # a second run into the same directory is refused without --resume / --overwrite
    with pytest.raises(MlirkitError, match="already holds a run"):
        Trainer(cfg_a, model=copy_model(base_model)).train(show_progress=False)


@pytest.mark.slow
def test_cli_trains_and_prints_model_dir(tiny_model_dir, tmp_path, data, capsys):
    from mlirkit.train.cli import main

    cfg = make_cfg(tmp_path, data, backbone=str(tiny_model_dir), max_steps=1)
    path = tmp_path / "cfg.json"
    path.write_text(cfg.to_json())
    assert main([str(path), "--max-steps", "2", "--set", "use_orth=false", "--quiet"]) == 0
    out = capsys.readouterr().out.strip().splitlines()[-1]
    saved = json.loads((tmp_path / "run" / "model" / "train_config.json").read_text())
    assert out.endswith("model") and saved["max_steps"] == 2 and saved["use_orth"] is False
    assert main([str(path), "--ablation", "base", "--print-config"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["use_disentangler"] is False and printed["use_ldcl"] is False


# ---------------------------------------------------------------- config
def test_config_json_yaml_round_trip_and_errors(tmp_path):
    cfg = TrainConfig(backbone="b", output_dir="o", triples="t.jsonl", parallel=["p.jsonl"], monolingual=["m.jsonl"],
                      lr=1e-4, parallel_langs=["de", "fr"])
    p = tmp_path / "c.json"
    p.write_text(cfg.to_json())
    assert TrainConfig.load(p) == cfg
    y = tmp_path / "c.yaml"
    y.write_text("backbone: b\noutput_dir: o\ntriples: t.jsonl\nparallel: [p.jsonl]\nmonolingual: [m.jsonl]\nlr: 1\n")
    assert TrainConfig.load(y).lr == 1.0
    with pytest.raises(MlirkitError, match=r"unknown config field 'lamda_t' \(did you mean: lambda_t"):
        TrainConfig.from_dict({"lamda_t": 1})
    with pytest.raises(MlirkitError, match="'max_steps' must be int"):
        TrainConfig.from_dict({"max_steps": "10"})
    with pytest.raises(MlirkitError, match="'use_ldcl' must be bool"):
        TrainConfig.from_dict({"use_ldcl": 1})
    with pytest.raises(MlirkitError, match="'tau_sent': must be > 0"):
        cfg.with_updates(tau_sent=0.0).validate()
    with pytest.raises(MlirkitError, match="'schedule': must be one of"):
        cfg.with_updates(schedule="step").validate()
    with pytest.raises(MlirkitError, match="'triples': required"):
        cfg.with_updates(triples=None).validate()
    with pytest.raises(MlirkitError, match="'alignment': 'pharaoh' needs"):
        cfg.with_updates(alignment="pharaoh").validate()
    with pytest.raises(MlirkitError, match="no such config file"):
        TrainConfig.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(MlirkitError, match="cannot parse config"):
        TrainConfig.load(bad)


# ---------------------------------------------------------------- data
def test_readers_and_errors(tmp_path, data):
    ex = list(read_triples(data["triples"]))
    assert len(ex) == 24 and len(ex[0].negatives) == 2
    pairs = list(read_parallel(data["parallel"]))
    assert len(pairs) == 24 and pairs[0].src_lang == "en" and pairs[0].tgt_lang == "de"
    assert list(read_parallel(data["parallel"], langs=["fr"])) == []
    assert {m.lang for m in read_monolingual(data["mono"])} <= {"fr", "it"}

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "q", "positive": "p"}\n{"query": "q"}\n')
    with pytest.raises(MlirkitError, match=r"bad\.jsonl:2: missing field 'positive'"):
        list(read_triples(str(bad)))
    bad.write_text('{"id": "a", "lang": "en", "text": "x"}\n{"id": "b", "lang": "en", "text": "y"}\n'
                   '{"id": "a", "lang": "de", "text": "z"}\n')
    with pytest.raises(MlirkitError, match=r"bad\.jsonl:3: records of id 'a' are not adjacent"):
        list(read_parallel(str(bad)))
    bad.write_text('{"text": "x"}\n')
    with pytest.raises(MlirkitError, match=r"bad\.jsonl:1: missing field 'lang'"):
        list(read_monolingual(str(bad)))
    bad.write_text("not json\n")
    with pytest.raises(MlirkitError, match=r"bad\.jsonl:1: invalid JSON"):
        list(read_monolingual(str(bad)))
    with pytest.raises(MlirkitError, match="no such file"):
        list(read_monolingual(str(tmp_path / "nope.jsonl")))


def test_parallel_set_id_through_datasets_helper():
    pairs = list(itertools.islice(read_parallel("mlirkit/parallel/gettext", langs=["de"]), 5))
    assert len(pairs) == 5 and all(p.src_lang == "en" and p.tgt_lang == "de" and p.src and p.tgt for p in pairs)
    with pytest.raises(MlirkitError):
        list(read_parallel("mlirkit/parallel/no-such-set"))


def test_freeze_layers(base_model, tmp_path, data):
    tr = Trainer(make_cfg(tmp_path, data, freeze_layers=1), model=copy_model(base_model))
    bb = tr.model.backbone
    assert not any(p.requires_grad for p in bb.embeddings.parameters())
    assert not any(p.requires_grad for p in bb.encoder.layer[0].parameters())
    assert all(p.requires_grad for p in bb.encoder.layer[1].parameters())
    with pytest.raises(MlirkitError, match="only 2 layers"):
        Trainer(make_cfg(tmp_path, data, freeze_layers=5), model=copy_model(base_model))


def test_wikimatrix_tsv_and_pharaoh_alignments(tmp_path):
    tsv = tmp_path / "WikiMatrix.en-de.tsv"
    tsv.write_text("1.05\tthe cat\tdie Katze\n1.01\ta dog\tein Hund\n")
    al = tmp_path / "al.txt"
    al.write_text("0-0 1-1\n0-0\n")
    pairs = list(read_parallel(str(tsv), alignments=str(al)))
    assert pairs == [ParallelPair("the cat", "die Katze", "en", "de", ((0, 0), (1, 1))),
                     ParallelPair("a dog", "ein Hund", "en", "de", ((0, 0),))]
    tsv2 = tmp_path / "pairs.tsv"
    tsv2.write_text("x\ty\tz\n")
    with pytest.raises(MlirkitError, match="cannot tell the languages"):
        list(read_parallel(str(tsv2)))
    with pytest.raises(MlirkitError, match=r"pairs\.tsv:1: first of 3 columns must be a score"):
        list(read_parallel(str(tsv2), tsv_langs=("en", "de")))
    al.write_text("0-0\n")
    with pytest.raises(MlirkitError, match="fewer alignment lines"):
        list(read_parallel(str(tsv), alignments=str(al)))


def test_pharaoh_alignments_are_used_on_subwords(base_model, tmp_path, data):
    cfg = make_cfg(tmp_path, data)
    tr = Trainer(cfg, model=copy_model(base_model))
    batch = Batch(retrieval=fixed_batch().retrieval,
                  parallel=[ParallelPair("the cat sleeps", "die Katze schläft", "en", "de", ((1, 1), (2, 2)))])
    tr.compute_losses(batch)
    al = tr.alignments.get("passage: the cat sleeps", "passage: die Katze schläft")
    assert len(al) == 2 and all(i > 0 and j > 0 for i, j in al) and al[0][0] < al[1][0]


def test_composer_is_deterministic_and_sharded(data):
    def make(rank=0, world=1, seed=1):
        return BatchComposer(retrieval=lambda: read_triples(data["triples"]),
                             parallel=lambda: read_parallel(data["parallel"]),
                             monolingual=lambda: read_monolingual(data["mono"]), n_retrieval=3, n_parallel=2,
                             n_monolingual=2, n_hard_negatives=1, seed=seed, shuffle_buffer=5, rank=rank, world_size=world)

    a, b = make(), make()
    first = [next(a) for _ in range(20)]  # > one epoch of every stream
    assert first == [next(b) for _ in range(20)]
    assert all(len(x.retrieval) == 3 and len(x.parallel) == 2 and len(x.monolingual) == 2 for x in first)
    assert all(len(e.negatives) == 1 for x in first for e in x.retrieval)
    c = make()
    c.skip(5)
    assert next(c) == first[5]
    assert [next(make(seed=2)) for _ in range(1)] != first[:1]
    r0, r1 = make(0, 2), make(1, 2)
    q0 = {e.query + e.positive for _ in range(4) for e in next(r0).retrieval}
    q1 = {e.query + e.positive for _ in range(4) for e in next(r1).retrieval}
    everything = {e.query + e.positive for e in read_triples(data["triples"])}
    assert q0 <= everything and q1 <= everything and q0 != q1
    empty = BatchComposer(retrieval=lambda: iter(()), parallel=None, monolingual=None, n_retrieval=1,
                          n_parallel=0, n_monolingual=0)
    with pytest.raises(MlirkitError, match="retrieval: the data source is empty"):
        next(empty)
    assert Batch.concat([first[0], first[1]]).retrieval == first[0].retrieval + first[1].retrieval
    assert list(itertools.islice(make(), 0)) == []


# ---------------------------------------------------------------- what the trainer may replace
def _plant_previous_run(out, planted):
    """A finished earlier run in ``out`` (every file mlirkit's trainer writes) plus one user file."""
    (out / "model" / "backbone").mkdir(parents=True)
    (out / "model" / "mlirkit_dcl.json").write_text("{}", encoding="utf-8")
    (out / "checkpoint-0000002" / "model").mkdir(parents=True)
    (out / "checkpoint-0000002" / "trainer_state.pt").write_bytes(b"")
    (out / "train_log.jsonl").write_text('{"step": 1, "total": 1.0}\n', encoding="utf-8")
    (out / "train_config.json").write_text(TrainConfig(backbone="x", output_dir=str(out)).to_json(), encoding="utf-8")
    user = out / planted
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('{"lr": 0.5}\n' if user.suffix == ".json" else "mine\n", encoding="utf-8")
    return user


@pytest.mark.parametrize("planted", ["model/notes.txt", "checkpoint-0000002/notes.txt", "train_config.json",
                                     "train_log.jsonl"])
def test_overwrite_never_removes_a_user_file(base_model, tmp_path, data, planted):
    cfg = make_cfg(tmp_path, data, triples=str(tmp_path / "missing.jsonl"))
    out = tmp_path / "run"
    user = _plant_previous_run(out, planted)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    with pytest.raises(MlirkitError, match=f"{user.name}.*refusing to replace") as e:
        Trainer(cfg, model=copy_model(base_model)).train(overwrite=True, show_progress=False)
    assert "\n" not in str(e.value)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_a_user_config_in_the_output_folder_is_not_replaced(base_model, tmp_path, data):
    cfg = make_cfg(tmp_path, data, max_steps=1)
    out = tmp_path / "run"
    out.mkdir()
    (out / "train_config.json").write_text('{"lr": 0.5}\n', encoding="utf-8")
    with pytest.raises(MlirkitError, match="train_config.json already exists"):
        Trainer(cfg, model=copy_model(base_model)).train(show_progress=False)
    assert (out / "train_config.json").read_text(encoding="utf-8") == '{"lr": 0.5}\n'


# ---------------------------------------------------------------- non-finite hyperparameters, losses, weights
@pytest.mark.parametrize("name", [f.name for f in dataclasses.fields(TrainConfig) if "float" in str(f.type)])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_every_float_field_refuses_non_finite_values(tmp_path, data, name, value):
    with pytest.raises(MlirkitError, match=f"config field '{name}': must be a finite number"):
        make_cfg(tmp_path, data, **{name: value}).validate()


@pytest.mark.parametrize("changes, field", [({"head_lr": 0.0}, "head_lr"), ({"head_lr": -1.0}, "head_lr"),
                                            ({"lr": 0.5, "weight_decay": 2.0}, "weight_decay"),
                                            ({"lr": 1e-3, "head_lr": 10.0, "weight_decay": 0.1}, "weight_decay")])
def test_out_of_range_hyperparameters_are_refused(tmp_path, data, changes, field):
    with pytest.raises(MlirkitError, match=f"config field '{field}'"):
        make_cfg(tmp_path, data, **changes).validate()


@pytest.mark.parametrize("name", [f.name for f in dataclasses.fields(TrainConfig)
                                  if str(f.type).startswith("int") and f.name != "seed"])
def test_every_int_field_refuses_what_no_run_needs(tmp_path, data, name):
    """A 400-digit max_steps passed validation and ended in an OverflowError of the progress bar (float())."""
    with pytest.raises(MlirkitError, match=f"config field '{name}': must be at most 2147483647 .got 10000") as e:
        make_cfg(tmp_path, data, **{name: 10**400}).validate()
    assert len(str(e.value)) < 200


@pytest.mark.parametrize("seed", [-1, 2**32])
def test_a_seed_numpy_cannot_take_is_refused(tmp_path, data, seed):
    """seed -1 passed validation and ended in numpy's ValueError traceback when training started."""
    with pytest.raises(MlirkitError, match="config field 'seed': must be in 0 .. 2[*][*]32 - 1"):
        make_cfg(tmp_path, data, seed=seed).validate()


@pytest.mark.parametrize("poison", ["loss", "weight"])
def test_a_non_finite_loss_or_weight_stops_training_without_a_model(base_model, tmp_path, data, poison):
    cfg = make_cfg(tmp_path, data, max_steps=3)
    tr = Trainer(cfg, model=copy_model(base_model))
    step = tr.train_step

    def poisoned(batches):
        logs = step(batches)
        if poison == "loss":
            logs["total"] = float("nan")
        else:
            with torch.no_grad():
                tr.model.semantic.weight[0, 0] = float("inf")
        return logs

    tr.train_step = poisoned
    with pytest.raises(MlirkitError, match=f"step 1: {poison} .*stopping without saving a model") as e:
        tr.train(show_progress=False)
    assert "\n" not in str(e.value)
    assert not (tmp_path / "run" / "model").exists()


def test_the_finite_check_sees_a_frozen_weight_once_and_ignores_a_finite_overflowing_sum(base_model, tmp_path, data):
    """check_finite clears weights by their sums: a non-finite frozen weight still stops the first check, and
    finite weights whose sum overflows to inf are no error."""
    tr = Trainer(make_cfg(tmp_path, data), model=copy_model(base_model))
    emb = tr.model.backbone.get_input_embeddings().weight
    assert not emb.requires_grad
    with torch.no_grad():
        tr.model.semantic.weight[:2] = 3e38  # finite, the sum is inf
        emb[5, 0] = float("nan")
    with pytest.raises(MlirkitError, match="step 0: weight 'backbone.embeddings.word_embeddings.weight' is no longer"):
        tr.check_finite({})
    with torch.no_grad():
        emb[5, 0] = 0.0
    tr.check_finite({"total": 1.0})
    with torch.no_grad():
        tr.model.semantic.weight[3, 1] = float("-inf")
    with pytest.raises(MlirkitError, match="weight 'semantic.weight' is no longer finite"):
        tr.check_finite({})


def per_tensor_adamw(tr: Trainer) -> Trainer:
    """``tr`` stepping with torch's default CPU AdamW (the per-tensor Python loop), as before the fused kernel."""
    for group in tr.optimizer.param_groups:
        group.update(fused=None, foreach=False)
    return tr


def test_fused_adamw_matches_the_per_tensor_loop_and_its_checkpoints_resume_fused(base_model, tmp_path, data):
    cfg = make_cfg(tmp_path, data, weight_decay=0.1, head_lr=1e-2, max_grad_norm=0.5)
    model = copy_model(base_model)
    no_dropout(model)
    fused = Trainer(cfg, model=copy_model(model))
    assert all(g["fused"] for g in fused.optimizer.param_groups) and len(fused.optimizer.param_groups) == 3
    loop = per_tensor_adamw(Trainer(cfg, model=copy_model(model)))
    for _ in range(2):
        for tr in (fused, loop):
            tr.train_step([fixed_batch()])
        for k, a in fused.model.state_dict().items():  # atol: 1e-5 of one step at lr 1e-3
            torch.testing.assert_close(a, loop.model.state_dict()[k], rtol=1e-6, atol=1e-8, msg=k)
        # the next step from the same weights: the same gradients (a weight whose gradient is rounding noise,
        # such as a key bias, would otherwise take steps of full size in directions the noise picks)
        fused.model.load_state_dict(loop.model.state_dict())
    moved = [k for k, v in loop.model.state_dict().items() if not torch.equal(v, model.state_dict()[k])]
    assert len(moved) > 10 and "semantic.weight" in moved and "backbone.embeddings.word_embeddings.weight" not in moved

    loop.save_checkpoint()  # a checkpoint of the per-tensor loop (written before the fused kernel was used)
    resumed = Trainer(cfg, model=copy_model(model))
    resumed.resume_latest()
    assert resumed.step == 2 and all(g["fused"] and not g["foreach"] for g in resumed.optimizer.param_groups)
    for a, b in zip(resumed.optimizer.state.values(), loop.optimizer.state.values()):
        assert torch.equal(a["exp_avg_sq"], b["exp_avg_sq"]) and float(a["step"]) == float(b["step"]) == 2
    for tr in (resumed, loop):
        tr.train_step([fixed_batch()])
    for (k, a), (_, b) in zip(resumed.model.state_dict().items(), loop.model.state_dict().items()):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-8, msg=k)


def test_a_model_with_a_non_finite_weight_is_never_saved(base_model, tmp_path):
    model = copy_model(base_model)
    with torch.no_grad():
        model.semantic.weight[1, 2] = float("nan")
    with pytest.raises(MlirkitError, match="weight 'semantic.weight' holds NaN"):
        model.save(tmp_path / "m")
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("error", ["safetensors", "oserror"])
def test_the_final_save_on_a_full_disk_is_one_line(base_model, tmp_path, data, monkeypatch, error):
    import errno

    import safetensors.torch

    def full(*args, **kwargs):
        if error == "oserror":
            raise OSError(errno.ENOSPC, "No space left on device")
        raise safetensors.SafetensorError('Error while serializing: IoError(Os { code: 28, kind: StorageFull, '
                                          'message: "No space left on device" })')

    monkeypatch.setattr(safetensors.torch, "save_file", full)
    cfg = make_cfg(tmp_path, data, max_steps=1)
    with pytest.raises(MlirkitError, match="cannot write .*model: .*No space left on device") as e:
        Trainer(cfg, model=copy_model(base_model)).train(show_progress=False)
    assert "\n" not in str(e.value)
    assert not (tmp_path / "run" / "model").exists()

"""Cached-feature DCL training (frozen backbone, top-K layers) equals the uncached path."""
from __future__ import annotations


import numpy as np
import pytest

torch = pytest.importorskip("torch")

from tests.helpers import copy_model, no_dropout, write_tiny_data  # noqa: E402
from mlirkit.base.errors import MlirkitError  # noqa: E402
from mlirkit.encoders.dcl_model import DisentangledEncoder  # noqa: E402
from mlirkit.train.config import TrainConfig  # noqa: E402
from mlirkit.train.data import Batch, MonoSentence, ParallelPair, RetrievalExample  # noqa: E402
from mlirkit.train.feature_cache import (  # noqa: E402
    FeatureCache, TextInput, build_feature_cache, embed_cached, training_inputs,
)
from mlirkit.train.trainer import Trainer  # noqa: E402


@pytest.fixture(scope="module")
def base_model(tiny_model_dir):
    m = DisentangledEncoder.from_backbone(str(tiny_model_dir), head_dim=16, query_prefix="query: ",
                                          doc_prefix="passage: ", max_length=32, seed=0)
    no_dropout(m)
    return m


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return write_tiny_data(tmp_path_factory.mktemp("dcl_fc_data"))


def make_cfg(tmp_path, data, **kw):
    base = dict(backbone="tiny", output_dir=str(tmp_path / "run"), head_dim=16, triples=data["triples"],
                parallel=[data["parallel"]], monolingual=[data["mono"]], n_retrieval=3, n_parallel=3,
                n_monolingual=3, n_hard_negatives=1, max_length=32, lr=1e-3, max_steps=3, lambda_d=1.0,
                query_prefix="query: ", doc_prefix="passage: ", shuffle_buffer=8, seed=3,
                freeze_word_embeddings=True, feature_cache_dir=str(tmp_path / "fc"))
    base.update(kw)
    return TrainConfig(**base)


def fixed_batch():
    return Batch(
        retrieval=[RetrievalExample("apple house", "a text about apple and house", ("stone things",)),
                   RetrievalExample("green river", "a much longer text about green and river and more", ("paper",))],
        parallel=[ParallelPair("apple and house", "Apfel und Haus", "en", "de"),
                  ParallelPair("green river", "grüner Fluss", "en", "de"),
                  ParallelPair("the music", "la musique", "en", "fr")],
        monolingual=[MonoSentence("il giardino", "it"), MonoSentence("la pierre", "fr"),
                     MonoSentence("das Fenster ist offen", "de")],
    )


def batch_inputs(cfg, batch):
    sp, ml = cfg.effective_sentence_prefix, cfg.max_length
    items = [TextInput(e.query, cfg.query_prefix, ml) for e in batch.retrieval]
    items += [TextInput(t, cfg.doc_prefix, ml) for e in batch.retrieval for t in (e.positive, *e.negatives)]
    pairs = [(TextInput(p.src, sp, ml), TextInput(p.tgt, sp, ml)) for p in batch.parallel]
    items += [t for p in pairs for t in p] + [TextInput(m.text, sp, ml) for m in batch.monolingual]
    return items, pairs


def losses_and_grads(tr):
    losses = tr.compute_losses(fixed_batch())
    losses["total"].backward()
    grads = {n: p.grad.clone() for n, p in tr.model.named_parameters() if p.requires_grad}
    return {k: float(v.detach()) for k, v in losses.items()}, grads


@pytest.mark.parametrize("top", [0, 1])
def test_cached_path_gives_the_same_losses_and_gradients(base_model, tmp_path, data, top):
    n_layers = len(base_model.backbone.encoder.layer)
    ref = Trainer(make_cfg(tmp_path, data, freeze_layers=n_layers - top), model=copy_model(base_model))
    ref_losses, ref_grads = losses_and_grads(ref)
    cfg = make_cfg(tmp_path, data, train_top_layers=top, feature_cache_dtype="float32")
    tr = Trainer(cfg, model=copy_model(base_model))
    with pytest.raises(MlirkitError, match="prepare_features"):
        tr.compute_losses(fixed_batch())
    tr.prepare_features(*batch_inputs(cfg, fixed_batch()))
    assert len(tr.alignments) == 3  # preloaded from the cache, not recomputed
    losses, grads = losses_and_grads(tr)
    assert set(losses) == set(ref_losses) >= {"ret", "sent_p", "tok_p", "sent_q", "tok_q", "ldcl", "orth"}
    for k in ref_losses:
        assert losses[k] == pytest.approx(ref_losses[k], rel=1e-4, abs=1e-6), k
    assert set(grads) == set(ref_grads)
    if top == 0:
        assert set(grads) == {"semantic.weight", "language.weight"}
    else:
        assert any(n.startswith(f"backbone.encoder.layer.{n_layers - 1}.") for n in grads)
        assert not any(n.startswith("backbone.encoder.layer.0.") for n in grads)
    for n in grads:
        torch.testing.assert_close(grads[n], ref_grads[n], rtol=1e-3, atol=1e-5)


def test_fp16_cache_is_close_and_reused_across_trainers(base_model, tmp_path, data):
    cfg = make_cfg(tmp_path, data, train_top_layers=1)
    ref = Trainer(make_cfg(tmp_path, data, freeze_layers=1), model=copy_model(base_model))
    ref_losses, _ = losses_and_grads(ref)
    tr = Trainer(cfg, model=copy_model(base_model))
    tr.prepare_features(*batch_inputs(cfg, fixed_batch()))
    losses, _ = losses_and_grads(tr)
    for k in ("ret", "sent_p", "ldcl"):
        assert losses[k] == pytest.approx(ref_losses[k], rel=2e-2, abs=1e-3), k
    states = tr.features.states
    assert states.dtype == np.float16 and isinstance(states, np.memmap)
    # a second trainer (another seed of the heads) finds the same directory; a changed layer does not
    tr2 = Trainer(cfg.with_updates(seed=9), model=copy_model(base_model))
    tr2.prepare_features(*batch_inputs(cfg, fixed_batch()))
    assert tr2.features.dir == tr.features.dir
    tr3 = Trainer(cfg.with_updates(train_top_layers=0), model=copy_model(base_model))
    tr3.prepare_features(*batch_inputs(cfg, fixed_batch()))
    assert tr3.features.dir != tr.features.dir


def test_cache_key_changes_with_frozen_weights_and_data(base_model, tmp_path):
    items = [TextInput("hello world", "passage: ", 32), TextInput("Hallo Welt", "passage: ", 32)]
    a = build_feature_cache(base_model, items, tmp_path, layer=1)
    assert build_feature_cache(base_model, list(reversed(items)), tmp_path, layer=1).dir == a.dir
    assert build_feature_cache(base_model, items[:1], tmp_path, layer=1).dir != a.dir
    m2 = copy_model(base_model)
    with torch.no_grad():
        m2.backbone.encoder.layer[0].output.dense.weight.add_(0.01)
    assert build_feature_cache(m2, items, tmp_path, layer=1).dir != a.dir
    # the top layer's weights do not enter the key of layer-1 states
    m3 = copy_model(base_model)
    with torch.no_grad():
        m3.backbone.encoder.layer[1].output.dense.weight.add_(0.01)
    assert build_feature_cache(m3, items, tmp_path, layer=1).dir == a.dir
    assert FeatureCache(a.dir).get(items[0]).shape[1] == 32
    with pytest.raises(MlirkitError, match="not cached"):
        a.get(TextInput("never seen", "passage: ", 32))


def test_embed_cached_equals_model_embed(base_model, tmp_path):
    texts = ["hello world", "Hallo Welt, wie geht's?", "日本語のテキスト", "a"]
    model = copy_model(base_model)
    with torch.no_grad():
        model.semantic.weight.add_(0.05 * torch.randn_like(model.semantic.weight))
    for side, prefix in (("doc", "passage: "), ("query", "query: ")):
        cache = build_feature_cache(model, [TextInput(t, prefix, 32) for t in texts], tmp_path, layer=1,
                                    dtype="float32")
        got = embed_cached(model, cache, texts, side=side, max_length=32)
        np.testing.assert_allclose(got, model.embed(texts, side=side, max_length=32).numpy(), rtol=1e-4, atol=1e-5)


def test_training_inputs_cover_every_configured_source_and_train_runs(base_model, tmp_path, data):
    cfg = make_cfg(tmp_path, data, train_top_layers=1, max_steps=2)
    inputs, pairs = training_inputs(cfg)
    assert len(pairs) == 24 and len({x.key for x in inputs}) > 48
    tr = Trainer(cfg, model=copy_model(base_model))
    final = tr.train(overwrite=True, show_progress=False)
    assert (final / "mlirkit_dcl.json").is_file() and tr.features is not None


def test_config_refuses_frozen_backbone_without_heads(tmp_path, data):
    with pytest.raises(MlirkitError, match="nothing to train"):
        make_cfg(tmp_path, data, train_top_layers=0, use_disentangler=False).validate()
    with pytest.raises(MlirkitError, match="train_top_layers"):
        make_cfg(tmp_path, data, train_top_layers=-1).validate()

"""``hf``: any Hugging Face encoder (by id or local directory) with mean / CLS / last-token pooling.

Embedding of text ``x`` with prompt ``p`` (query or document side)::

    H = f(tokenize(p + x)[:max_length])            # (L, d) last hidden states
    e = mean_t H_t      (pooling="mean", over non-padding tokens)
      | H_0             (pooling="cls")
      | H_{L-1}         (pooling="last", last non-padding token)
    e = e / ||e||_2     (normalize=True)

Texts are tokenised once, sorted by length (longest first) and batched, so a batch pads only to
the longest text in it; results are returned in the input order. A batch holds at most
``batch_size`` texts and ``max_batch_tokens`` padded tokens (B x L), so activation memory is bounded
whatever the text lengths (long texts go in smaller batches) and peak memory does not grow with
the corpus. In reduced-precision arithmetic (bf16, fp16) a batch holds texts of one token length only
(:data:`EQUAL_LENGTH_PRECISIONS`): padding moves a bf16 vector by up to 7e-4 per element (the kernels'
blocking follows the padded length), while the number of texts in a batch does not move it at all, so
without padding a text's vector is the same whatever it is batched with (``mlirkit.encode``'s sorted
chunks, Pyserini's batches of 32, one query alone); the fingerprint says so (``"batches":
"equal-length"``, a runtime field: such vectors are equivalent to padded ones). Pooling, normalisation and the
prompts default to the model family's (:mod:`mlirkit.encoders.prefixes`); explicit options win.

Names resolve through explicit registries, never by guessing: ``OFFLINE_MODELS`` (e.g.
``multilingual-e5-small-q4``, built from local package data by :mod:`mlirkit.encoders.e5_q4`), then
a local directory, then a Hugging Face id (offline when ``HF_HUB_OFFLINE=1``). A directory may carry
``mlirkit_encoder.json`` naming its family, original model id and source.

``backend`` (:mod:`mlirkit.encoders.backends`) chooses what computes ``f``: torch, OpenVINO or ONNX
Runtime (``auto``: OpenVINO on the CPU, torch elsewhere); ``precision`` the OpenVINO arithmetic
(fp32, bf16; ``auto``: bf16 where the CPU has it natively). The fingerprint records both.
"""
from __future__ import annotations

import importlib
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from mlirkit.encoders.base import Encoder
from mlirkit.encoders.family_detect import resolve_family
from mlirkit.encoders.prefixes import FAMILIES, POOLINGS, ModelFamily, family_for
from mlirkit.base.errors import MlirkitError
from mlirkit.base.registry import Registry, did_you_mean
from mlirkit.base.threads import torch_threads

logger = logging.getLogger(__name__)

#: models built on this machine from package data: name -> "module:function" returning a directory
OFFLINE_MODELS: Registry[str] = Registry("offline model")
OFFLINE_MODELS.register("multilingual-e5-small-q4", "mlirkit.encoders.e5_q4:converted_model_dir")

SIDECAR = "mlirkit_encoder.json"
DTYPES = ("float32", "bfloat16", "float16")
QUANTIZE = ("int8",)
#: model types whose position ids start after the padding index (usable length = positions - pad - 1)
_OFFSET_POSITION_TYPES = frozenset({"xlm-roberta", "roberta", "camembert", "xlm-roberta-xl"})


def offline_model_dir(name: str) -> Path:
    """Build (or reuse) the directory of an ``OFFLINE_MODELS`` entry."""
    module, _, attr = OFFLINE_MODELS.get(name).partition(":")
    builder: Callable[[], Path] = getattr(importlib.import_module(module), attr)
    return Path(builder())


def pool(hidden: "torch.Tensor", mask: "torch.Tensor", method: str) -> "torch.Tensor":  # noqa: F821
    """Pool ``hidden`` (B, L, d) over the tokens where ``mask`` (B, L) is 1 -> (B, d).

    mean: ``sum_t m_t H_t / sum_t m_t``; cls: ``H_0``; last: ``H_{t*}`` with ``t*`` the last
    position where ``m_t = 1`` (any padding side).
    """
    import torch

    if method == "mean":
        m = mask.to(hidden.dtype).unsqueeze(-1)  # (B, L, 1)
        return (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)  # (B, d)
    if method == "cls":
        return hidden[:, 0]  # (B, d)
    if method == "last":
        positions = torch.arange(mask.shape[1], device=mask.device).expand_as(mask)  # (B, L)
        last = torch.where(mask.bool(), positions, torch.zeros_like(positions)).max(1).values  # (B,)
        return hidden[torch.arange(hidden.shape[0], device=hidden.device), last]  # (B, d)
    raise MlirkitError(f"unknown pooling {method!r}; choose one of {', '.join(POOLINGS)}")


class HFEncoder(Encoder):
    """A Hugging Face ``AutoModel`` encoder; see the module docstring for the formula."""

    class_name = "hf"

    def __init__(
        self,
        model: str,
        *,
        pooling: str | None = None,
        normalize: bool | None = None,
        query_prefix: str | None = None,
        doc_prefix: str | None = None,
        max_length: int = 512,
        batch_size: int = 32,
        max_batch_tokens: int = 4096,
        device: str = "auto",
        dtype: str = "float32",
        threads: int | None = None,
        revision: str | None = None,
        trust_remote_code: bool = False,
        quantize: str | None = None,
        family: str | None = None,
        backend: str | None = None,
        precision: str | None = None,
    ) -> None:
        import torch

        if pooling is not None and pooling not in POOLINGS:
            raise MlirkitError(f"unknown pooling {pooling!r}; choose one of {', '.join(POOLINGS)}")
        if dtype not in DTYPES:
            raise MlirkitError(f"unknown dtype {dtype!r}; choose one of {', '.join(DTYPES)}")
        if quantize is not None and quantize not in QUANTIZE:
            raise MlirkitError(f"unknown quantize {quantize!r}; choose one of {', '.join(QUANTIZE)}")
        if int(max_length) < 2:
            raise MlirkitError(f"max_length must be at least 2, got {max_length}")
        if int(batch_size) < 1:
            raise MlirkitError(f"batch_size must be positive, got {batch_size}")
        if int(max_batch_tokens) < 1:
            raise MlirkitError(f"max_batch_tokens must be positive, got {max_batch_tokens}")
        if threads is not None:
            if int(threads) < 1:
                raise MlirkitError(f"threads must be positive, got {threads}")
        self.name = model
        self.batch_size = int(batch_size)
        self.max_batch_tokens = int(max_batch_tokens)
        self.threads = threads
        self.device = _pick_device(device)
        self.dtype = dtype
        self.quantize = quantize
        if quantize and self.device.type != "cpu":
            raise MlirkitError("quantize='int8' (dynamic quantisation) runs on the CPU only; use device='cpu'")
        from mlirkit.encoders.backends import resolve_backend

        self.backend, self.precision = resolve_backend(backend, precision, device_type=self.device.type,
                                                       dtype=dtype, quantize=quantize)
        if self.backend == "torch":
            self.precision = _torch_precision(dtype, quantize)
        self.equal_length_batches = self.precision in EQUAL_LENGTH_PRECISIONS

        path, model_id, source, found, local = self._resolve(model)
        self.model_id = model_id
        self.source = source
        self.model, self.config, self.tokenizer = self._load(path, model, revision, trust_remote_code, local)
        self._revision = revision
        self.family = family = resolve_family(found, family, path if local else None, explicit=(
            pooling, normalize, query_prefix, doc_prefix), model=model)  # mlirkit.encoders.family_detect

        self.pooling = pooling or (family.pooling if family else "mean")
        self.normalize = bool(family.normalize if (normalize is None and family) else (normalize or False))
        self.query_prefix = query_prefix if query_prefix is not None else (family.query_prefix if family else "")
        self.doc_prefix = doc_prefix if doc_prefix is not None else (family.doc_prefix if family else "")
        if family is not None and family.note:
            logger.info("%s (%s family): %s", model, family.name, family.note)
        self.max_length = self._usable_length(int(max_length))

        pad = getattr(self.config, "pad_token_id", None)
        self._pad_id = int(pad if pad is not None else self.tokenizer.pad_id)
        self._weights = self._weights_id(path, local)
        self._runner = self._load_runner(path, revision, trust_remote_code)
        self._dim = int(getattr(self.config, "hidden_size", 0)) or self._probe_dim()

    # ------------------------------------------------------------------ resolution and loading
    def _resolve(self, model: str) -> tuple[str, str, str | None, ModelFamily | None, bool]:
        """-> (path or id to load, model id for the fingerprint, source, family, is_local)."""
        if model in OFFLINE_MODELS:
            path = offline_model_dir(model)
        elif Path(model).expanduser().is_dir():
            path = Path(model).expanduser().resolve()
        elif model.startswith(("/", "./", "../", "~")) or model.count("/") > 1 or "\\" in model:
            raise self._unknown(model, f"no such directory {model!r}")
        else:
            return model, model, None, family_for(model), False
        meta: dict[str, Any] = {}
        if (path / SIDECAR).is_file():
            try:
                meta = json.loads((path / SIDECAR).read_text())
            except ValueError as e:
                raise MlirkitError(f"{path / SIDECAR}: invalid JSON ({e})") from None
        family = meta["family"] if meta.get("family") == "none" else (  # "none": no family, on purpose
            FAMILIES.get(meta["family"]) if meta.get("family") else family_for(meta.get("model")))
        return str(path), meta.get("model") or str(path), meta.get("source"), family, True

    def _unknown(self, model: str, reason: str) -> MlirkitError:
        from mlirkit.encoders import PRESETS

        names = sorted(set(PRESETS.names()) | set(OFFLINE_MODELS.names()))
        offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")
        hint = ("HF_HUB_OFFLINE is set, so only models already in the Hugging Face cache load"
                if offline else "if the machine is offline, download the model elsewhere and pass its directory")
        return MlirkitError(f"unknown encoder {model!r}: {reason}{did_you_mean(model, names)}; "
                            f"presets: {', '.join(names)}; {hint}")

    def _load(self, path: str, name: str, revision: str | None, trust_remote_code: bool, local: bool):
        """-> (torch model or None, config, tokenizer); the other backends load only the config here
        (the torch model only when they convert it, see :meth:`_load_runner`); for a local directory
        that is its ``config.json`` read directly (:func:`_read_config`), so they never import transformers."""
        from mlirkit.encoders.model_code import ALLOW, is_model_code_error, refuse_model_code

        if local:
            from mlirkit.encoders.weights_hash import check_weight_files

            refuse_model_code(path, trust_remote_code)
            check_weight_files(path)
        kwargs = self._hub_kwargs(revision, trust_remote_code)
        try:
            if self.backend == "torch":
                model = self._torch_model(path, revision, trust_remote_code)
                config = model.config
            elif local:
                model, config = None, _read_config(Path(path))
            else:
                from transformers import AutoConfig

                model, config = None, AutoConfig.from_pretrained(path, **kwargs)
            tokenizer = _Tokenizer.load(path, local, kwargs)
        except (OSError, ValueError, KeyError) as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            if is_model_code_error(e) and not trust_remote_code:
                raise MlirkitError(f"{name}: the model ships its own code, which mlirkit runs only when asked: "
                                   f"{ALLOW}") from None
            if local:
                raise MlirkitError(f"cannot load a Hugging Face model from {path}: {first}") from None
            raise self._unknown(name, f"not a preset, not a local directory, and not loadable from "
                                      f"the Hugging Face hub or cache ({first})") from None
        return model, config, tokenizer

    @staticmethod
    def _hub_kwargs(revision: str | None, trust_remote_code: bool) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"trust_remote_code": trust_remote_code}
        if revision is not None:
            kwargs["revision"] = revision
        return kwargs

    def _torch_model(self, path: str, revision: str | None, trust_remote_code: bool):
        import torch
        from transformers import AutoModel

        from safetensors import SafetensorError

        try:
            model = AutoModel.from_pretrained(path, dtype=getattr(torch, self.dtype),
                                              **self._hub_kwargs(revision, trust_remote_code))
        except (RuntimeError, EOFError, SafetensorError) as e:  # weights cut short or corrupt (a hub snapshot)
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise MlirkitError(f"{path}: cannot read the model weights ({first})") from None
        model.eval()
        if self.quantize == "int8":
            model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
        return model.to(self.device)

    def _load_runner(self, path: str, revision: str | None, trust_remote_code: bool):
        from mlirkit.encoders.backends import load_runner

        return load_runner(self.backend, model=self.model, precision=self.precision, threads=self.threads,
                           pad_id=self._pad_id, key={"model": self.model_id, "weights": self._weights},
                           load_model=lambda: self._torch_model(path, revision, trust_remote_code))

    def _usable_length(self, max_length: int) -> int:
        config = self.config
        positions = getattr(config, "max_position_embeddings", None)
        if not positions:
            return max_length
        if getattr(config, "model_type", "") in _OFFSET_POSITION_TYPES:
            positions -= int(getattr(config, "pad_token_id", 1) or 0) + 1
        if max_length > positions:
            logger.warning("max_length %d exceeds the %d positions of %s; using %d",
                        max_length, positions, self.name, positions)
            return int(positions)
        return max_length

    def _probe_dim(self) -> int:
        return int(self._encode(["x"], "", 1, False).shape[1])

    def _weights_id(self, path: str, local: bool) -> str:
        if local:
            from mlirkit.encoders.weights_hash import directory_weights_sha256

            digest = directory_weights_sha256(path)
            if digest:
                return f"sha256:{digest}"
        commit = getattr(self.config, "_commit_hash", None)
        if commit:
            return f"revision:{commit}"
        return f"revision:{self._revision or 'unknown'}"

    # ------------------------------------------------------------------ interface
    @property
    def dim(self) -> int:
        return self._dim

    @property
    def fingerprint(self) -> dict[str, Any]:
        fp: dict[str, Any] = {
            "class": self.class_name,
            "model": self.model_id,
            "weights": self._weights,
            "pooling": self.pooling,
            "normalize": self.normalize,
            "query_prefix": self.query_prefix,
            "doc_prefix": self.doc_prefix,
            "max_length": self.max_length,
            "dtype": self.dtype,
            "backend": self.backend,
            "precision": self.precision,
        }
        if self.source:
            fp["source"] = self.source
        if self.quantize:
            fp["quantize"] = self.quantize
        if self.equal_length_batches:
            fp["batches"] = "equal-length"
        return fp

    def encode_queries(self, texts: Sequence[str], langs: Sequence[str | None] | None = None, *,
                       batch_size: int | None = None, show_progress: bool = False) -> np.ndarray:
        return self._encode(texts, self.query_prefix, batch_size or self.batch_size, show_progress)

    def encode_docs(self, texts: Sequence[str], langs: Sequence[str | None] | None = None, *,
                    batch_size: int | None = None, show_progress: bool = False) -> np.ndarray:
        return self._encode(texts, self.doc_prefix, batch_size or self.batch_size, show_progress)

    def __repr__(self) -> str:
        return (f"HFEncoder({self.name!r}, pooling={self.pooling!r}, normalize={self.normalize}, "
                f"max_length={self.max_length}, device={self.device.type!r}, dtype={self.dtype!r}, "
                f"backend={self.backend!r}, precision={self.precision!r})")

    # ------------------------------------------------------------------ encoding
    def _encode(self, texts: Sequence[str], prefix: str, batch_size: int, show_progress: bool) -> np.ndarray:
        import torch

        texts = list(texts)
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise MlirkitError(f"text {i} is a {type(t).__name__}, not a string")
        n = len(texts)
        if n == 0:
            return np.zeros((0, self._dim), dtype=np.float32)
        from mlirkit.encoders.limits import clip_for_tokenizer

        ids = self.tokenizer.encode(clip_for_tokenizer(texts, self.max_length, prefix), self.max_length)
        lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=n)
        order = np.argsort(-lengths, kind="stable")  # longest first: peak memory shows up at once
        sorted_lengths = lengths[order]
        out: np.ndarray | None = None
        bar = None
        if show_progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=n, unit="text", desc="encoding", dynamic_ncols=True)
        try:
            with torch_threads(self.threads), torch.inference_mode():
                start = 0
                while start < n:
                    width = int(lengths[order[start]])  # the longest text of the batch comes first
                    size = max(1, min(batch_size, self.max_batch_tokens // width))
                    stop = start + size
                    if self.equal_length_batches:  # no padding: texts of this very length only
                        stop = min(stop, int(np.searchsorted(-sorted_lengths, -width, side="right")))
                    idx = order[start:stop]
                    start = stop
                    input_ids = torch.full((len(idx), width), self._pad_id, dtype=torch.long)  # (B, L)
                    mask = torch.zeros((len(idx), width), dtype=torch.long)  # (B, L)
                    for row, i in enumerate(idx):
                        input_ids[row, :lengths[i]] = torch.as_tensor(ids[i], dtype=torch.long)
                        mask[row, :lengths[i]] = 1
                    input_ids, mask = input_ids.to(self.device), mask.to(self.device)
                    hidden = self._runner(input_ids, mask)  # (B, L, d) last hidden states
                    emb = pool(hidden.float(), mask, self.pooling)  # (B, d)
                    if self.normalize:
                        emb = torch.nn.functional.normalize(emb, p=2, dim=-1)
                    emb_np = emb.cpu().numpy().astype(np.float32, copy=False)
                    if out is None:
                        out = np.empty((n, emb_np.shape[1]), dtype=np.float32)
                    out[idx] = emb_np
                    if bar is not None:
                        bar.update(len(idx))
        finally:
            if bar is not None:
                bar.close()
        return out


class _Tokenizer:
    """Token ids with special tokens, truncated, unpadded.

    A local ``tokenizer.json`` is read with the ``tokenizers`` library directly (and kept per
    process, keyed by path, size and mtime): transformers' ``AutoTokenizer`` re-parses the 17 MB
    XLM-R file in Python on every load. Anything else goes through ``AutoTokenizer``.
    """

    _cache: dict[tuple[str, int, int], Any] = {}

    def __init__(self, fast: Any = None, auto: Any = None, pad_id: int = 0) -> None:
        self.fast, self.auto, self.pad_id = fast, auto, pad_id

    @classmethod
    def load(cls, path: str, local: bool, kwargs: dict[str, Any]) -> "_Tokenizer":
        file = Path(path) / "tokenizer.json"
        if local and file.is_file():
            from tokenizers import Tokenizer

            st = file.stat()
            key = (str(file.resolve()), st.st_size, st.st_mtime_ns)
            if key not in cls._cache:
                cls._cache[key] = Tokenizer.from_file(str(file))
            return cls(fast=cls._cache[key], pad_id=_pad_from_config(Path(path), cls._cache[key]))
        from transformers import AutoTokenizer

        auto = AutoTokenizer.from_pretrained(path, **kwargs)
        pad = auto.pad_token_id if auto.pad_token_id is not None else auto.eos_token_id
        return cls(auto=auto, pad_id=int(pad or 0))

    def encode(self, texts: list[str], max_length: int) -> list[list[int]]:
        if self.fast is not None:
            self.fast.no_padding()
            self.fast.enable_truncation(max_length)
            return [e.ids for e in self.fast.encode_batch(texts)]
        return self.auto(texts, truncation=True, max_length=max_length, padding=False,
                         return_attention_mask=False)["input_ids"]


def _read_config(directory: Path) -> Any:
    """``config.json`` of a local model directory as attributes (what the encoder reads: ``model_type``,
    ``hidden_size``, ``max_position_embeddings``, ``pad_token_id``). Importing transformers for
    ``AutoConfig`` costs about as long as compiling the converted model."""
    from types import SimpleNamespace

    with open(directory / "config.json", encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict):
        raise ValueError(f"{directory / 'config.json'} is not a JSON object")
    return SimpleNamespace(**{k: v for k, v in data.items() if isinstance(k, str) and k.isidentifier()})


def _pad_from_config(directory: Path, tokenizer: Any) -> int:
    """The pad id named in tokenizer_config.json / special_tokens_map.json, else eos, else 0."""
    for name in ("tokenizer_config.json", "special_tokens_map.json"):
        try:
            config = json.loads((directory / name).read_text())
        except (OSError, ValueError):
            continue
        for key in ("pad_token", "eos_token"):
            token = config.get(key)
            token = token.get("content") if isinstance(token, dict) else token
            if isinstance(token, str) and tokenizer.token_to_id(token) is not None:
                return int(tokenizer.token_to_id(token))
    return 0


#: precisions whose vectors depend on the padded length of the batch (by up to 7e-4 per element in bf16):
#: encoded in batches of equal-length texts (module docstring)
EQUAL_LENGTH_PRECISIONS = ("bf16", "bfloat16", "float16")


def _torch_precision(dtype: str, quantize: str | None) -> str:
    """The fingerprint's ``precision`` of the torch backend: int8, else its weights dtype."""
    return quantize or {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}[dtype]


_MALLOC_FIXED = False


def pin_malloc_threshold() -> None:
    """Pin glibc's mmap threshold at its 128 KiB default (process-wide, once, Linux/glibc only): called by
    the command lines that encode (:func:`mlirkit.encoders.options.encoder_from_args`, the benchmark), never
    by building an encoder; a Python caller who encodes a large corpus may call it too.

    glibc raises the threshold each time a large block is freed, after which activation tensors of
    varying shapes come from the heap, fragment it and are never returned: the peak RSS of a long
    encode run then grows with the corpus (measured +37% from 400 to 4,000 DDTP documents with
    e5-small). A fixed threshold keeps large tensors in mmap'd blocks that are returned on free.
    ``MALLOC_MMAP_THRESHOLD_`` set in the environment leaves malloc alone.
    """
    global _MALLOC_FIXED
    if _MALLOC_FIXED or not sys.platform.startswith("linux") or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return
    _MALLOC_FIXED = True
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        m_mmap_threshold = -3
        libc.mallopt(m_mmap_threshold, 128 * 1024)
    except (OSError, AttributeError):  # not glibc
        logger.debug("could not pin the malloc mmap threshold")


def _pick_device(device: str) -> "torch.device":  # noqa: F821
    import torch

    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        return torch.device(device)
    except (RuntimeError, TypeError) as e:
        raise MlirkitError(f"unknown device {device!r} ({e})") from None


__all__ = ["DTYPES", "HFEncoder", "OFFLINE_MODELS", "offline_model_dir", "pin_malloc_threshold", "pool"]

"""Models and drafts for the Serving lab, sized from their configs.

A :class:`ModelSpec` holds what one decoding step touches:

- ``layer_params``: the linear weights of one decoder layer (Q, K, V and O projections and
  the MLP), read from memory once per step whatever the batch;
- the LM head (``vocab x d_model``), read once per step too;
- the input embedding: a lookup of one row per token, so it is *not* streamed (it is in
  ``params`` and in memory, not in the step's bytes); with ``tied`` embeddings it is the
  same matrix as the LM head;
- the KV cache: 2 (K and V) x ``kv_heads`` x ``head_dim`` values per layer and token, kept
  in bf16 (``KV_BYTES``) whatever the weights' ``bytes_per_param``.

Factories build a spec from a config: :func:`decoder_model` (Llama-style: fused gate/up,
so 3 d d_ff MLP weights), :func:`t5_v1_1` (an encoder-decoder whose decoding step runs the
decoder only) and :func:`model_from_params` (a parameter count and the attention shape,
when the MLP size is unknown: what the page's typed model is).

A :class:`DraftSpec` says how a round's drafts are made: a model (its own step), an
EAGLE-style head (one layer of the target), the target itself with a small KV cache
(self-speculation, MagicDec), or a fixed c (prompt lookup: c = 0).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .errors import InvalidParameterError
from .serving_checks import finite_in, whole_in

BF16 = 2.0  # bytes per parameter
KV_BYTES = 2.0  # bytes per cached value: the KV cache stays in bf16
DRAFT_VOCAB_EAGLE3 = 32_000  # EAGLE-3 drafts over a reduced vocabulary (its released configs)
BYTES_PER_PARAM = {"bf16": 2.0, "fp8": 1.0, "int4": 0.5}

MODEL_LIMITS = {
    "params": (1e3, 1e13),
    "layers": (1, 1_000),
    "q_heads": (1, 1_024),
    "kv_heads": (1, 1_024),
    "head_dim": (1, 1_024),
    "d_model": (1, 131_072),
    "vocab": (1, 10_000_000),
    "bytes_per_param": (0.125, 8.0),
}


@dataclass(frozen=True)
class ModelSpec:
    """A transformer decoder as the cost model sees it (sizes from its config).

    ``params``: every weight (memory); ``layer_params``: the linear weights of one decoder
    layer, streamed each step; the LM head is ``vocab x d_model``.
    """

    label: str
    params: float
    layers: int
    q_heads: int
    kv_heads: int
    head_dim: int
    d_model: int
    vocab: int
    layer_params: float
    tied: bool = False
    bytes_per_param: float = BF16
    source: str = ""

    def __post_init__(self) -> None:
        for name in ("params", "bytes_per_param"):
            lo, hi = MODEL_LIMITS[name]
            finite_in(f"{self.label}: {name.replace('_', ' ')}", getattr(self, name), lo, hi)
        for name in ("layers", "q_heads", "kv_heads", "head_dim", "d_model", "vocab"):
            lo, hi = MODEL_LIMITS[name]
            whole_in(f"{self.label}: {name.replace('_', ' ')}", getattr(self, name), lo, hi)
        if self.kv_heads > self.q_heads:
            raise InvalidParameterError(
                f"{self.label}: {self.kv_heads} KV heads but {self.q_heads} query heads; "
                "a model has at most as many KV heads as query heads (grouped-query attention)."
            )
        _check_budget(self)

    @property
    def head_params(self) -> float:
        """The LM head: vocab x d_model weights, read once per step."""
        return float(self.vocab * self.d_model)

    @property
    def streamed_params(self) -> float:
        """Weights one step reads: layers x layer_params + the LM head (no embedding)."""
        return self.layers * self.layer_params + self.head_params

    @property
    def weight_bytes(self) -> float:
        """Every weight in memory: params x bytes per parameter."""
        return self.params * self.bytes_per_param

    @property
    def streamed_bytes(self) -> float:
        """What one step reads of the weights, whatever b and m."""
        return self.streamed_params * self.bytes_per_param

    @property
    def kv_bytes_per_token(self) -> float:
        """layers x 2 (K and V) x kv_heads x head_dim x 2 bytes: the cache of one token."""
        return self.layers * 2 * self.kv_heads * self.head_dim * KV_BYTES

    @property
    def d_attn(self) -> int:
        """q_heads x head_dim (Kaplan et al. 2020's d_attn)."""
        return self.q_heads * self.head_dim

    def quantized(self, bytes_per_param: float, name: str = "") -> ModelSpec:
        """The same model with weights of ``bytes_per_param`` bytes (fp8 1, int4 0.5)."""
        label = self.label.replace("(bf16)", f"({name})") if name else self.label
        return dataclasses.replace(self, bytes_per_param=bytes_per_param, label=label)


def _check_budget(model: ModelSpec) -> None:
    """Refuse a model whose layers and LM head need more weights than it has."""
    embedding = 0.0 if model.tied else model.head_params
    needed = model.streamed_params + embedding
    if model.layer_params <= 0 or needed > model.params * (1 + 1e-9):
        raise InvalidParameterError(
            f"{model.label}: {model.params / 1e9:,.3g} B parameters cannot hold its "
            f"{model.vocab:,} x {model.d_model:,} embedding and LM head "
            f"({(model.head_params + embedding) / 1e9:,.3g} B) and {model.layers} layers; "
            "type more parameters, a smaller vocabulary or a smaller hidden size."
        )


def attention_params(d_model: int, q_heads: int, kv_heads: int, head_dim: int) -> int:
    """Q and O (d x d_attn each) plus K and V (d x kv_heads head_dim each)."""
    return 2 * d_model * q_heads * head_dim + 2 * d_model * kv_heads * head_dim


def decoder_model(
    label: str,
    *,
    shape: tuple[int, int, int, int, int],
    d_ff: int,
    vocab: int,
    tied: bool,
    source: str = "",
) -> ModelSpec:
    """A Llama-style decoder from its config: ``shape`` = (layers, d_model, q_heads,
    kv_heads, head_dim); MLP gate, up and down = 3 d_model d_ff weights per layer.

    params = layers (attention + MLP) + vocab d_model (x 2 unless ``tied``).
    """
    layers, d, q, kv, hd = shape
    layer = attention_params(d, q, kv, hd) + 3 * d * d_ff
    params = layers * layer + vocab * d * (1 if tied else 2)
    return ModelSpec(
        label, float(params), layers, q, kv, hd, d, vocab, float(layer), tied, BF16, source
    )


def t5_v1_1(
    label: str, *, layers: int, d_model: int, heads: int, d_ff: int, source: str = ""
) -> ModelSpec:
    """A T5 v1.1 encoder-decoder (Raffel et al. 2020; head size 64, gated-GELU MLP of 3
    d d_ff weights, 32,128-token vocabulary, shared input embedding, untied LM head).

    A decoding step runs the decoder: per layer self-attention (4 d d_attn), the
    cross-attention's Q and O (2 d d_attn; its K and V of the encoder output are computed
    once and cached) and the MLP. The encoder (4 d d_attn + 3 d d_ff per layer) and the
    cross-attention's K and V projections are in memory, not in the step.
    """
    hd, vocab = 64, 32_128
    d_attn = heads * hd
    mlp = 3 * d_model * d_ff
    decoder_layer = 6 * d_model * d_attn + mlp
    frozen = layers * (4 * d_model * d_attn + mlp) + layers * 2 * d_model * d_attn
    params = layers * decoder_layer + frozen + 2 * vocab * d_model
    return ModelSpec(
        label,
        float(params),
        layers,
        heads,
        heads,
        hd,
        d_model,
        vocab,
        float(decoder_layer),
        False,
        BF16,
        source,
    )


def model_from_params(
    label: str,
    params: float,
    *,
    shape: tuple[int, int, int, int, int],
    vocab: int,
    tied: bool,
    bytes_per_param: float = BF16,
    source: str = "",
) -> ModelSpec:
    """A decoder known by its parameter count and ``shape`` = (layers, d_model, q_heads,
    kv_heads, head_dim): layer_params = (params - embedding - LM head) / layers."""
    layers, d, q, kv, hd = shape
    embeddings = vocab * d * (1 if tied else 2)
    layer = (params - embeddings) / layers
    return ModelSpec(
        label,
        float(params),
        layers,
        q,
        kv,
        hd,
        d,
        vocab,
        float(layer),
        tied,
        bytes_per_param,
        source,
    )


# Checked: oumi configs/recipes/llama3_1/README.md (the 8B and 70B config tables) and the
# Ollama metadata of Llama 3.1 8B (head_count 32, head_count_kv 8, rope dimension 128).
TARGETS: dict[str, ModelSpec] = {
    "llama-3.1-8b": decoder_model(
        "Llama-3.1-8B (bf16)",
        shape=(32, 4096, 32, 8, 128),
        d_ff=14_336,
        vocab=128_256,
        tied=False,
        source="meta-llama/Llama-3.1-8B config.json: 32 layers, hidden 4096, 32 heads, 8 KV "
        "heads (head size 128), MLP 14,336, vocabulary 128,256 untied: 8.03 B parameters",
    ),
    "llama-3.1-70b": decoder_model(
        "Llama-3.1-70B (bf16)",
        shape=(80, 8192, 64, 8, 128),
        d_ff=28_672,
        vocab=128_256,
        tied=False,
        source="meta-llama/Llama-3.1-70B config.json: 80 layers, hidden 8192, 64 heads, 8 KV "
        "heads (head size 128), MLP 28,672, vocabulary 128,256 untied: 70.6 B parameters",
    ),
}
# Checked: the Llama-3.2-1B-Instruct config.json copied in kevinstephano/thunder_model_blocks
# (head_dim 64, tie_word_embeddings true); 1.236 B parameters computed from the shapes.
LLAMA_3_2_1B = decoder_model(
    "Llama-3.2-1B (bf16)",
    shape=(16, 2048, 32, 8, 64),
    d_ff=8_192,
    vocab=128_256,
    tied=True,
    source="meta-llama/Llama-3.2-1B config.json: 16 layers, hidden 2048, 32 heads, 8 KV heads "
    "(head size 64), MLP 8,192, tied 128,256-token embeddings: 1.24 B parameters",
)
# Checked: huggingface.co/JackFram/llama-68m (model card) and the config.json of its copy
# Xenova/llama-68m (2 layers, 768, 12 heads, 3072, 32000); 68.0 M computed from the shapes.
LLAMA_68M = decoder_model(
    "llama-68m (bf16)",
    shape=(2, 768, 12, 12, 64),
    d_ff=3_072,
    vocab=32_000,
    tied=False,
    source="JackFram/llama-68m (SpecInfer's small speculative model) config.json: 2 layers, "
    "hidden 768, 12 heads, MLP 3,072, 32,000-token vocabulary untied: 68 M parameters",
)


@dataclass(frozen=True)
class DraftSpec:
    """How a round's K draft tokens are made.

    Exactly one of ``model`` (its own step on the same hardware), ``eagle`` (one layer of
    the target plus a small LM head, sized from the target), ``self_draft`` (the target
    itself) or ``fixed_c`` (c itself: prompt lookup's c = 0, or a typed value, the same at
    every batch size). ``kv_budget``: the draft keeps only this many tokens of KV cache
    (a StreamingLLM window, as MagicDec's self-speculation does); None: the whole context.
    """

    label: str
    model: ModelSpec | None = None
    eagle: bool = False
    self_draft: bool = False
    fixed_c: float | None = None
    kv_budget: int | None = None
    source: str = ""
    note: str = ""

    def __post_init__(self) -> None:
        kinds = (self.model is not None) + self.eagle + self.self_draft + (self.fixed_c is not None)
        if kinds != 1:
            raise InvalidParameterError(
                f"{self.label}: give exactly one of a draft model, an EAGLE head, the target "
                "itself or a fixed c."
            )
        if self.fixed_c is not None:
            finite_in(f"{self.label}: c", self.fixed_c, 0.0, 2.0, "(draft step / target step)")
        if self.kv_budget is not None:
            whole_in(f"{self.label}: draft KV budget", self.kv_budget, 1, 1_000_000)

    def draft_model(self, target: ModelSpec) -> ModelSpec | None:
        """The model whose step is a draft step (None for a fixed c)."""
        if self.eagle:
            return eagle_head(target)
        return target if self.self_draft else self.model


def eagle_head(target: ModelSpec) -> ModelSpec:
    """An EAGLE-3-style draft head for ``target``, as the cost model sees it.

    One decoder layer of the target (its ``layer_params``), the layer that fuses three
    target hidden states (3 d^2) and an LM head over a 32,000-token draft vocabulary
    (Li et al. 2025, EAGLE-3; the released Llama-3.1-8B head has ``draft_vocab_size``
    32000); its input embedding is the target's: N_head = layer + 3 d^2 + 32,000 d.
    """
    d = target.d_model
    layer = target.layer_params + 3 * d * d
    return ModelSpec(
        f"EAGLE-style head of {target.label}",
        layer + DRAFT_VOCAB_EAGLE3 * d,
        1,
        target.q_heads,
        target.kv_heads,
        target.head_dim,
        d,
        DRAFT_VOCAB_EAGLE3,
        layer,
        True,
        target.bytes_per_param,
    )


MAGICDEC_BUDGET = 512  # MagicDec's StreamingLLM draft cache (its blog's Figure 6: budget 512)
DRAFTS: dict[str, DraftSpec] = {
    "llama-3.2-1b": DraftSpec(
        "Llama-3.2-1B draft",
        model=LLAMA_3_2_1B,
        source=LLAMA_3_2_1B.source,
        note="Same tokenizer as Llama 3.1: a drop-in draft for the 8B and 70B.",
    ),
    "llama-68m": DraftSpec(
        "llama-68m draft",
        model=LLAMA_68M,
        source=LLAMA_68M.source,
        note="Very cheap, but it has the Llama 2 tokenizer (32,000 tokens): with a Llama 3 "
        "target the tokens must be translated, and alpha is low.",
    ),
    "eagle-head": DraftSpec(
        "one-layer EAGLE-style head",
        eagle=True,
        source="Li et al. 2025 (EAGLE-3, arXiv 2503.01840): one decoder layer on the "
        "target's hidden states; c from its size",
        note="Trained on the target's own features: high alpha for a tiny cost.",
    ),
    "self-512": DraftSpec(
        "the target itself with a 512-token cache",
        self_draft=True,
        kv_budget=MAGICDEC_BUDGET,
        source="MagicDec (Chen et al. 2024, arXiv 2408.11049): self-speculation with a "
        "StreamingLLM cache of 512 tokens; acceptance 0.79-0.84 at 4K-100K tokens (its blog)",
        note="It reads the target's weights but only 512 tokens of cache: cheap only when "
        "long contexts make the KV cache the bulk of a step.",
    ),
    "ngram": DraftSpec(
        "n-gram / prompt lookup",
        fixed_c=0.0,
        source="vLLM's n-gram proposer and prompt lookup: a search in the text, no model "
        "step, so c is about 0",
        note="Free, but it proposes only when the text already holds the next words: on "
        "text that does not repeat it proposes nothing in most rounds.",
    ),
}

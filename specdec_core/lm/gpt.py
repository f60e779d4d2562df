"""A tiny decoder-only transformer (GPT) in numpy: float16 storage, float32 compute.

The forward pass mirrors ``tools/train_gpt.py`` (pre-LayerNorm blocks, causal multi-head
attention, tanh-GELU MLP, tied output embedding; Radford et al. 2019). It keeps a
key/value cache, so one call :meth:`GPTModel.extend` feeds m new tokens (m = 1 for a
decoding step, m = K+1 to verify a drafted block, m = prompt length for a prefill) and
returns the m rows of next-token logits; :meth:`GPTModel.rollback` forgets the cached
positions of rejected tokens (it only moves the length: the next call overwrites them).

Lean for CPU (the per-call Python overhead is a large part of a step of a model this
small): each LayerNorm's gain and bias are folded into the matrix that follows it,
LN(x) @ W + c = ((x - mean) / std) @ (g * W) + (b @ W + c); q, k and v come from one
fused matrix; the cache is preallocated.
"""

from __future__ import annotations

import copy
import functools
import json
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np

from ..errors import InvalidParameterError
from .errors import ContextLengthError
from .tokenizer import Tokenizer

LN_EPS = 1e-5  # torch.nn.LayerNorm default
GELU_C = np.float32(np.sqrt(2.0 / np.pi))
ROW_BLOCK = 4  # matmuls of 2+ rows are padded to a multiple of this (see _mm)


@dataclass(frozen=True)
class GPTConfig:
    vocab: int
    ctx: int
    layers: int
    dim: int
    heads: int


@dataclass(frozen=True)
class Block:
    """One transformer layer, LayerNorm gains and biases folded into the next matrix.

    attention: qkv = LN(x) @ w_qkv + b_qkv, then (heads) @ w_proj + b_proj;
    MLP: GELU(LN(x) @ w_fc + b_fc) @ w_out + b_out (pre-LN block, Radford et al. 2019).
    """

    w_qkv: np.ndarray  # (d, 3d)
    b_qkv: np.ndarray  # (3d,)
    w_proj: np.ndarray  # (d, d)
    b_proj: np.ndarray  # (d,)
    w_fc: np.ndarray  # (d, 4d)
    b_fc: np.ndarray  # (4d,)
    w_out: np.ndarray  # (4d, d)
    b_out: np.ndarray  # (d,)

    @classmethod
    def from_arrays(cls, f32: dict[str, np.ndarray], i: int) -> Block:
        """Layer i of the exported arrays (train_gpt.export), with the LayerNorms folded:
        LN(x) @ W + c = ((x - mean) / std) @ (g * W) + (b @ W + c)."""
        g1, b1 = f32[f"h{i}_ln1_g"], f32[f"h{i}_ln1_b"]
        g2, b2 = f32[f"h{i}_ln2_g"], f32[f"h{i}_ln2_b"]
        qkv_w, fc_w = f32[f"h{i}_qkv_w"], f32[f"h{i}_fc_w"]
        return cls(
            w_qkv=np.ascontiguousarray(g1[:, None] * qkv_w),
            b_qkv=b1 @ qkv_w + f32[f"h{i}_qkv_b"],
            w_proj=f32[f"h{i}_proj_w"],
            b_proj=f32[f"h{i}_proj_b"],
            w_fc=np.ascontiguousarray(g2[:, None] * fc_w),
            b_fc=b2 @ fc_w + f32[f"h{i}_fc_b"],
            w_out=f32[f"h{i}_out_w"],
            b_out=f32[f"h{i}_out_b"],
        )

    def arrays(self) -> tuple[np.ndarray, ...]:
        return tuple(getattr(self, f.name) for f in fields(self))


def _normalise(x: np.ndarray) -> np.ndarray:
    """(x - mean) / sqrt(var + eps) over the last axis (LayerNorm without gain/bias)."""
    inv_d = np.float32(1.0 / x.shape[1])
    xc = x - np.add.reduce(x, axis=1, keepdims=True) * inv_d
    var = np.add.reduce(xc * xc, axis=1, keepdims=True)
    var *= inv_d
    var += np.float32(LN_EPS)
    xc /= np.sqrt(var, out=var)
    return xc


def _mm(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """x @ w, with a block of 2+ rows padded with zero rows to a multiple of ROW_BLOCK.

    OpenBLAS's small-matrix kernels handle 4 rows at a time here: 2-3 rows and 5-7 rows
    took as long as or longer than 4 and 8 (measured with per-thread CPU time on this
    project's machine, 192 x 768 float32: 2 rows 67 us, 3 rows 86 us, 4 rows 49 us;
    whole K+1 verify of the 4-layer GPT, v(2) 1.69 -> 1.45, v(8) 2.42 -> 1.90). Zero
    rows change no real row (each output row depends on its own input row only).
    """
    m = x.shape[0]
    if m == 1 or m % ROW_BLOCK == 0:
        return x @ w
    padded = np.zeros((m + ROW_BLOCK - m % ROW_BLOCK, x.shape[1]), np.float32)
    padded[:m] = x
    return (padded @ w)[:m]


@functools.lru_cache(maxsize=64)
def _causal_mask(m: int) -> np.ndarray:
    """(m, m) additive mask: -inf above the diagonal (a new token never sees later ones)."""
    mask = np.triu(np.full((m, m), -np.inf, np.float32), 1)
    mask.flags.writeable = False
    return mask


def _gelu(x: np.ndarray) -> np.ndarray:
    """tanh approximation of GELU (Hendrycks & Gimpel 2016), as torch approximate='tanh'."""
    inner = x * x
    inner *= np.float32(0.044715)
    inner += np.float32(1.0)
    inner *= x
    inner *= GELU_C
    np.tanh(inner, out=inner)
    inner += np.float32(1.0)
    inner *= x
    inner *= np.float32(0.5)
    return inner


class GPTModel:
    """Numpy GPT with a KV cache. ``length`` tokens are cached; logits rows are (m, V)."""

    parallel_verify = True  # K+1 positions in one call

    def __init__(
        self,
        arrays: dict[str, np.ndarray],
        *,
        tokenizer: Tokenizer | None = None,
        name: str = "gpt",
    ) -> None:
        """``tokenizer``: the pair's shared tokenizer (None only for a bare parity check)."""
        cfg = json.loads(str(arrays["config"]))
        self.config = GPTConfig(cfg["vocab"], cfg["ctx"], cfg["layers"], cfg["dim"], cfg["heads"])
        self.name = name
        self.tokenizer = tokenizer
        c = self.config
        f32 = {k: np.asarray(v, dtype=np.float32) for k, v in arrays.items() if k != "config"}
        self.wte = f32["wte"]  # (V, d)
        self.wpe = f32["wpe"]  # (T, d)
        self.blocks = tuple(Block.from_arrays(f32, i) for i in range(c.layers))
        gf, bf = f32["lnf_g"], f32["lnf_b"]
        self.head_w = np.ascontiguousarray(gf[:, None] * self.wte.T)  # (d, V)
        self.head_b = bf @ self.wte.T  # (V,)
        hd = c.dim // c.heads
        self.scale = np.float32(1.0 / np.sqrt(hd))
        self.k_cache = np.zeros((c.layers, c.heads, c.ctx, hd), np.float32)
        self.v_cache = np.zeros((c.layers, c.heads, c.ctx, hd), np.float32)
        self.length = 0
        for arr in (self.wte, self.wpe, self.head_w, self.head_b):
            arr.flags.writeable = False
        for arr in (a for b in self.blocks for a in b.arrays()):
            arr.flags.writeable = False

    @classmethod
    def load(
        cls, path: str | Path, *, tokenizer: Tokenizer | None = None, name: str | None = None
    ) -> GPTModel:
        """Read an exported .npz (float16 weights + JSON config)."""
        with np.load(path) as data:
            arrays = {k: data[k] for k in data.files}
        return cls(arrays, tokenizer=tokenizer, name=name or Path(path).stem)

    @property
    def context_length(self) -> int:
        return self.config.ctx

    def fresh(self) -> GPTModel:
        """A new runner that shares the (read-only) weights and has its own empty cache."""
        other = copy.copy(self)
        other.k_cache = np.empty_like(self.k_cache)  # only positions < length are read
        other.v_cache = np.empty_like(self.v_cache)
        other.length = 0
        return other

    def rollback(self, length: int) -> None:
        """Forget cached positions length.. (the rejected tokens)."""
        if not 0 <= length <= self.length:
            raise InvalidParameterError(
                f"{self.name}: cannot roll back to {length} tokens; allowed: 0 to "
                f"{self.length} (the tokens it has cached)."
            )
        self.length = length

    def extend(self, tokens, *, last_only: bool = False) -> np.ndarray:
        """Feed m tokens after the cached ones; return next-token logits (m, V) float32.

        Row i is the logits of the token that follows tokens[: i + 1]. ``last_only``
        computes just the last row (a prefill or a draft step needs no other): the last
        layer then stores every row's key and value but runs attention and the MLP for
        the last row only. logits = h @ head_w + head_b with h = :meth:`final_hidden`
        (the final LayerNorm's gain and bias folded into head_w and head_b).
        """
        logits = _mm(self.final_hidden(tokens, last_only=last_only), self.head_w)  # (m, V)
        logits += self.head_b
        return logits

    def final_hidden(self, tokens, *, last_only: bool = False) -> np.ndarray:
        """:meth:`extend` without the output layer: the normalised final hidden states
        (m, d) float32, before the folded LayerNorm gain (or (1, d) with ``last_only``)."""
        ids = np.asarray(tokens, dtype=np.intp).reshape(-1)
        m, n, c = ids.size, self.length, self.config
        if n + m > c.ctx:
            raise ContextLengthError(
                f"{self.name}: {n + m} tokens do not fit its context of {c.ctx} tokens."
            )
        h, hd, d, end = c.heads, c.dim // c.heads, c.dim, n + m
        x = self.wte[ids] + self.wpe[n:end]  # (m, d)
        mask = _causal_mask(m) if m > 1 else None  # row i sees cached + new[: i + 1]
        last_layer = len(self.blocks) - 1
        for li, blk in enumerate(self.blocks):
            qkv = _mm(_normalise(x), blk.w_qkv)  # (m, 3d)
            qkv += blk.b_qkv
            qkv = qkv.reshape(m, 3, h, hd).transpose(1, 2, 0, 3)  # (3, h, m, hd)
            kc, vc = self.k_cache[li], self.v_cache[li]
            kc[:, n:end] = qkv[1]
            vc[:, n:end] = qkv[2]
            q = qkv[0]  # (h, m, hd)
            if last_only and li == last_layer and m > 1:  # only the last row is used
                q, x, mask, m = q[:, -1:], x[-1:], None, 1
            att = q @ kc[:, :end].transpose(0, 2, 1)  # (h, m, n+m)
            att *= self.scale
            if mask is not None:
                att[:, :, n:] += mask
            att -= att.max(axis=-1, keepdims=True)
            np.exp(att, out=att)
            att /= att.sum(axis=-1, keepdims=True)
            y = (att @ vc[:, :end]).transpose(1, 0, 2).reshape(m, d)  # (m, d)
            x = x + (_mm(y, blk.w_proj) + blk.b_proj)
            hid = _mm(_normalise(x), blk.w_fc)  # (m, 4d)
            hid += blk.b_fc
            x = x + (_mm(_gelu(hid), blk.w_out) + blk.b_out)
        self.length = end
        if last_only:
            x = x[-1:]
        return _normalise(x)  # (m or 1, d)

"""Time a Llama-3.1-8B-shaped decoding step on a GPU (torch), for the Serving lab's measured curve.

Not a test and never needed by the app: the Serving lab's model is pure arithmetic. Run
this where a GPU is at hand; it prints a table and writes JSON that
``benchmarks/results_gpu.md`` and ``specdec_core/serving_measured.py`` quote.

What one step is here (as in a serving engine's decode step, CUDA graphs on):
  for each of the L layers: RMSNorm, fused QKV projection, the new K/V written into the
  cache, attention of the m new tokens over n cached ones (grouped-query attention as two
  batched GEMMs over the KV cache: every sequence's cache is read once), output
  projection, residual, RMSNorm, fused gate/up projection, SiLU x up, down projection,
  residual; then the final norm, the LM head and an argmax. The input embedding is a
  lookup (one row per token), so it is not timed.
Left out: rotary embeddings and the causal mask among the m new tokens (elementwise, a
few microseconds), paged KV-cache indexing, the engine's scheduler and sampler.

Every layer reads its own slice of one KV pool (slices repeat only when 32 layers'
caches exceed the pool, and then every slice is far larger than the L2 cache), and its
own weights, so no layer finds its bytes in the L2 cache.

Usage:
    python3 benchmarks/gpu_decoder_step.py --out results.json     # on a GPU
    python3 benchmarks/gpu_decoder_step.py --smoke                # tiny shapes on the CPU
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class Shape:
    """A Llama-style decoder: sizes from the model's config.json."""

    name: str
    layers: int
    d_model: int
    q_heads: int
    kv_heads: int
    head_dim: int
    d_ff: int
    vocab: int


LLAMA_31_8B = Shape("Llama-3.1-8B", 32, 4096, 32, 8, 128, 14336, 128256)
LLAMA_32_1B = Shape("Llama-3.2-1B", 16, 2048, 32, 8, 64, 8192, 128256)
SMOKE = Shape("smoke", 2, 64, 4, 2, 16, 128, 512)


class Decoder:
    """Random bf16 weights of ``shape`` and a KV pool; ``step(b, m, n)`` is one decode step."""

    def __init__(self, shape: Shape, device: str, dtype, kv_pool_gib: float, sdpa=False) -> None:
        self.s, self.device, self.dtype, self.sdpa = shape, device, dtype, sdpa
        d, hd = shape.d_model, shape.head_dim
        qkv_out = (shape.q_heads + 2 * shape.kv_heads) * hd

        def w(out_f, in_f):
            return torch.randn(out_f, in_f, device=device, dtype=dtype) * (in_f**-0.5)

        self.layers = [
            {
                "qkv": w(qkv_out, d),
                "o": w(d, shape.q_heads * hd),
                "gate_up": w(2 * shape.d_ff, d),
                "down": w(d, shape.d_ff),
                "n1": torch.ones(d, device=device, dtype=dtype),
                "n2": torch.ones(d, device=device, dtype=dtype),
            }
            for _ in range(shape.layers)
        ]
        self.lm_head = w(shape.vocab, d)
        self.final_norm = torch.ones(d, device=device, dtype=dtype)
        elems = int(kv_pool_gib * 2**30 / torch.finfo(dtype).bits * 8)
        self.pool = torch.empty(elems, device=device, dtype=dtype).normal_(0, 0.02)

    def weight_bytes(self) -> int:
        per_layer = sum(t.numel() for t in self.layers[0].values())
        return (per_layer * self.s.layers + self.lm_head.numel()) * self.pool.element_size()

    def kv_views(self, b: int, n: int):
        """Per layer (K, V), each (b, kv_heads, n, head_dim), slices of the pool."""
        s = self.s
        size = b * s.kv_heads * n * s.head_dim  # elements of K (V alike)
        slots = self.pool.numel() // (2 * size)
        if slots < 1:
            raise ValueError(f"KV pool too small for batch {b}, context {n}")
        views = []
        for layer in range(s.layers):
            off = (layer % slots) * 2 * size
            k = self.pool[off : off + size].view(b, s.kv_heads, n, s.head_dim)
            v = self.pool[off + size : off + 2 * size].view(b, s.kv_heads, n, s.head_dim)
            views.append((k, v))
        return views

    def step(self, x, kv, attention: bool = True):
        """x (b, m, d) -> next token ids (b, m). Attention over the n cached tokens."""
        s = self.s
        b, m, d = x.shape
        group = s.q_heads // s.kv_heads
        for w, (k_cache, v_cache) in zip(self.layers, kv, strict=True):
            h = F.rms_norm(x, (d,), w["n1"])
            qkv = F.linear(h, w["qkv"])  # (b, m, (q + 2 kv) * hd)
            q, k_new, v_new = qkv.split(
                [s.q_heads * s.head_dim, s.kv_heads * s.head_dim, s.kv_heads * s.head_dim], -1
            )
            n = k_cache.shape[2]
            if attention:
                k_cache[:, :, n - m :].copy_(
                    k_new.view(b, m, s.kv_heads, s.head_dim).transpose(1, 2)
                )
                v_cache[:, :, n - m :].copy_(
                    v_new.view(b, m, s.kv_heads, s.head_dim).transpose(1, 2)
                )
                if self.sdpa:  # torch's fused kernel (flash / memory-efficient), GQA native
                    qh = q.view(b, m, s.q_heads, s.head_dim).transpose(1, 2)
                    att = F.scaled_dot_product_attention(qh, k_cache, v_cache, enable_gqa=True)
                    att = att.transpose(1, 2)
                else:  # (b, kv, group * m, hd): the query heads of one KV head share its cache
                    qg = q.view(b, m, s.kv_heads, group, s.head_dim).permute(0, 2, 3, 1, 4)
                    qg = qg.reshape(b, s.kv_heads, group * m, s.head_dim)
                    scores = torch.matmul(qg, k_cache.transpose(-1, -2)) * s.head_dim**-0.5
                    att = torch.matmul(torch.softmax(scores.float(), -1).to(x.dtype), v_cache)
                    att = att.view(b, s.kv_heads, group, m, s.head_dim).permute(0, 3, 1, 2, 4)
                q = att.reshape(b, m, s.q_heads * s.head_dim)
            x = x + F.linear(q, w["o"])
            h = F.rms_norm(x, (d,), w["n2"])
            gate, up = F.linear(h, w["gate_up"]).chunk(2, -1)
            x = x + F.linear(F.silu(gate) * up, w["down"])
        logits = F.linear(F.rms_norm(x, (d,), self.final_norm), self.lm_head)
        return logits.argmax(-1)


def _timer(device: str):
    if device == "cuda":

        def run(fn, repeats: int) -> list[float]:
            out = []
            for _ in range(repeats):
                a, z = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                fn()
                z.record()
                z.synchronize()
                out.append(a.elapsed_time(z) * 1e-3)
            return out

        return run

    def run_cpu(fn, repeats: int) -> list[float]:
        out = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
        return out

    return run_cpu


def time_step(model: Decoder, b: int, m: int, n: int, *, graph: bool, attention=True, repeats=15):
    """Median seconds of one step (CUDA graph replay when ``graph``), and the spread."""
    x = torch.randn(b, m, model.s.d_model, device=model.device, dtype=model.dtype)
    kv = model.kv_views(b, n)
    timer = _timer(model.device)
    if graph:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):
                model.step(x, kv, attention)
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            model.step(x, kv, attention)
        for _ in range(3):
            g.replay()
        times = timer(g.replay, repeats)
        del g
    else:
        for _ in range(2):
            model.step(x, kv, attention)
        times = timer(lambda: model.step(x, kv, attention), repeats)
    return statistics.median(times), min(times), max(times)


def attention_kernels(device: str, shape: Shape, dtype, smoke: bool) -> list[dict]:
    """One layer's attention alone: the two-GEMM form used above against torch's SDPA."""
    out = []
    timer = _timer(device)
    grid = (
        [(1, 32, 1), (4, 64, 5)]
        if smoke
        else [(b, n, m) for b in (1, 16, 256) for n in (1024, 4096) for m in (1, 5)]
    )
    for b, n, m in grid:
        group = shape.q_heads // shape.kv_heads
        q = torch.randn(b, shape.q_heads, m, shape.head_dim, device=device, dtype=dtype)
        k = torch.randn(b, shape.kv_heads, n, shape.head_dim, device=device, dtype=dtype)
        v = torch.randn_like(k)

        def two_gemm(q=q, k=k, v=v, b=b, m=m, group=group, s=shape):
            qg = q.view(b, s.kv_heads, group * m, s.head_dim)
            sc = torch.matmul(qg, k.transpose(-1, -2)) * s.head_dim**-0.5
            return torch.matmul(torch.softmax(sc.float(), -1).to(dtype), v)

        def sdpa(q=q, k=k, v=v):
            return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)

        row = {"batch": b, "context": n, "tokens": m, "kv_bytes": 2 * k.numel() * k.element_size()}
        for name, fn in (("two_gemm_s", two_gemm), ("sdpa_s", sdpa)):
            try:
                for _ in range(3):
                    fn()
                row[name] = statistics.median(timer(fn, 10))
            except RuntimeError as exc:  # a backend that refuses the shape
                row[name] = None
                row[name + "_error"] = str(exc)[:200]
        out.append(row)
        print(json.dumps(row), flush=True)
        del q, k, v
    return out


def peaks(device: str) -> dict:
    """Achieved HBM copy bandwidth and bf16 GEMM rate on this device (the model's ceilings)."""
    if device != "cuda":
        return {}
    timer = _timer(device)
    buffers = [torch.empty(2**31, device=device, dtype=torch.uint8) for _ in range(2)]  # 2 GiB

    def copy():
        buffers[1].copy_(buffers[0])

    for _ in range(3):
        copy()
    copy_s = statistics.median(timer(copy, 10))
    buffers.clear()
    out = {"copy_read_plus_write_bytes_per_s": 2 * 2**31 / copy_s}
    for mm, kk, nn in [(8192, 8192, 8192), (256, 4096, 28672), (1280, 4096, 28672)]:
        a = torch.randn(mm, kk, device=device, dtype=torch.bfloat16)
        bmat = torch.randn(kk, nn, device=device, dtype=torch.bfloat16)
        for _ in range(3):
            a @ bmat
        t = statistics.median(timer(lambda a=a, bmat=bmat: a @ bmat, 10))
        out[f"bf16_gemm_{mm}x{kk}x{nn}_flops_per_s"] = 2 * mm * kk * nn / t
    torch.cuda.empty_cache()
    return out


def measure(model: Decoder, rows: list, b: int, m: int, n: int, **how) -> None:
    """Time one (batch, tokens, context) step and append its row (``how``: graph, attention)."""
    med, lo, hi = time_step(model, b, m, n, **how)
    row = dict(model=model.s.name, batch=b, tokens=m, context=n, median_s=med, min_s=lo, max_s=hi)
    rows.append(row | how)
    print(f"{model.s.name:14s} b={b:4d} m={m} n={n:5d} {how} {med * 1e3:8.3f} ms", flush=True)


def sweep(model: Decoder, grid: dict, graph: bool, role: str) -> list[dict]:
    """Every (context, batch, tokens) of ``grid``; for the target also the linear layers
    alone (the attention share is the rest) and a few eager steps (launch overhead)."""
    rows: list[dict] = []
    for n in grid["contexts"]:
        for b in grid["batches"]:
            for m in grid["tokens"] if role == "target" else [1]:
                measure(model, rows, b, m, n, graph=graph, attention=True)
    if role == "target":
        for b in grid["batches"]:
            for m in (1, 5):
                measure(model, rows, b, m, grid["contexts"][0], graph=graph, attention=False)
        if graph:
            for b, m in ((1, 1), (1, 5), (64, 1), (64, 5)):
                measure(model, rows, b, m, grid["contexts"][0], graph=False, attention=True)
    for r in rows:
        r["role"] = role
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true", help="tiny shapes on the CPU (a self-check)")
    ap.add_argument("--out", default="", help="write the results as JSON here")
    ap.add_argument("--kv-pool-gib", type=float, default=48.0)
    ap.add_argument(
        "--sdpa", action="store_true", help="attention by torch's SDPA instead of two GEMMs"
    )
    args = ap.parse_args()
    torch.manual_seed(0)
    if args.smoke:
        device, dtype, pool, shapes = "cpu", torch.float32, 0.01, (SMOKE, SMOKE)
        grid = {"batches": [1, 2, 4], "contexts": [32, 64], "tokens": [1, 2, 5]}
    else:
        device, dtype, pool = "cuda", torch.bfloat16, args.kv_pool_gib
        shapes = (LLAMA_31_8B, LLAMA_32_1B)
        grid = {
            "batches": [1, 2, 4, 8, 16, 32, 64, 128, 256],
            "contexts": [1024, 4096],
            "tokens": [1, 2, 3, 4, 5, 9],
        }
    graph = device == "cuda"
    info = {"torch": torch.__version__, "device": device, "sdpa": args.sdpa}
    if graph:
        info["gpu"] = torch.cuda.get_device_name()
        info["peaks"] = peaks(device)
    print(json.dumps(info, indent=1), flush=True)
    rows = []
    for shape, role in zip(shapes, ("target", "draft"), strict=True):
        model = Decoder(shape, device, dtype, pool, sdpa=args.sdpa)
        print(f"# {shape.name} ({role}): {model.weight_bytes() / 1e9:.2f} GB of weights")
        rows += sweep(model, grid, graph, role)
        del model
        if graph:
            torch.cuda.empty_cache()
    info["attention_per_layer"] = attention_kernels(device, shapes[0], dtype, args.smoke)
    result = {"info": info, "shapes": [asdict(LLAMA_31_8B), asdict(LLAMA_32_1B)], "rows": rows}
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Accelerators for the Serving lab: spec-sheet peaks, achieved shares, links between chips.

A :class:`Hardware` is one chip (or ``chips`` of them in tensor parallel) as the cost model
of :mod:`specdec_core.serving_cost` sees it:

- the spec sheet's memory bandwidth, dense bf16 FLOP/s and memory per chip;
- the share of those peaks that real kernels reach (``bw_fraction``, ``flops_fraction``):
  a step is priced at ``bandwidth x bw_fraction`` and ``peak_flops x flops_fraction``;
- a fixed time per forward pass (``overhead_s``: kernel launches, the sampler, the
  engine's bookkeeping);
- the link between chips (``link_bandwidth`` bytes/s per direction, ``link_latency_s`` per
  all-reduce) that tensor parallelism pays twice per layer.

Default shares and overhead, measured on an H200 for this project (benchmarks/results_gpu.md,
benchmarks/gpu_decoder_step.py: a Llama-3.1-8B-shaped decode step, torch 2.11, CUDA graphs):

- bandwidth 0.67: the 8B's linear layers alone read their 15.0 GB of weights in 4.65 ms at
  batch 1, 3.23 TB/s of the 4.8 TB/s spec (a plain device copy reached 4.10-4.19 TB/s,
  0.85-0.87: a step's many smaller reads do not);
- FLOP/s 0.50: decoder-shaped bf16 GEMMs (256 x 4096 x 28672 and 1280 x 4096 x 28672)
  reached 495-710 TFLOP/s of the 989 dense, 0.50-0.72, and the linear layers of a 320- to
  1,280-token step 0.50-0.59. Published: Bekman's "Maximum Achievable Matmul FLOPS" table
  (github.com/stas00/ml-engineering, compute/accelerator) finds 0.80 on an H100 SXM and 0.86
  on an A100 SXM for the best large square-ish GEMM shape: the ceiling, not a decode step;
- overhead 0.5 ms: the 8B step at batch 1 (5.13 ms) and the Llama-3.2-1B step (1.29 ms)
  each take about 0.5 ms more than their weights at 0.67 of the bandwidth.

The same defaults are used for every preset (not measured on the others: say so on screen).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .serving_checks import MAX_CHIPS, finite_in, share_in, whole_in
from .serving_kernels import DEFAULT_KERNEL, AttentionKernel

GB = 1e9  # bytes (spec sheets count decimal gigabytes)
GIB = 2.0**30
MAX_OVERHEAD_S = 1.0
DEFAULT_OVERHEAD_S = 5e-4  # 0.5 ms per forward pass: measured on an H200 (module doc)
DEFAULT_BW_FRACTION = 0.67  # measured on an H200 (module doc)
DEFAULT_FLOPS_FRACTION = 0.50  # measured on an H200 (module doc)
H200_MEASURED = "measured on an H200 for this project (benchmarks/results_gpu.md)"

# Range of each typed value: (lowest, highest, unit for messages). The page offers the same.
HARDWARE_LIMITS = {
    "bandwidth": (1e8, 1e14, "bytes/s"),  # 0.1 GB/s .. 100 TB/s per chip
    "peak_flops": (1e9, 1e17, "FLOP/s"),  # 1 GFLOP/s .. 100 PFLOP/s per chip
    "memory": (1e8, 1e13, "bytes"),  # 0.1 GB .. 10 TB per chip
    "link_bandwidth": (1e8, 1e13, "bytes/s"),  # 0.1 GB/s .. 10 TB/s per direction
    "link_latency_s": (0.0, 1e-2, "s"),  # 0 .. 10 ms per all-reduce
}


@dataclass(frozen=True)
class Link:
    """How chips in tensor parallel talk: bytes/s per direction per chip, seconds per call."""

    label: str
    bandwidth: float
    latency_s: float
    source: str


# Checked: NVIDIA H100 datasheet (NVLink 900 GB/s, both directions: 450 GB/s each way).
# NVIDIA/nccl issue #1259 (HGX 8 x H100, CUDA graphs): a small all-reduce on 2 GPUs takes
# about 6 us; we assume 8 us for 2-8 GPUs.
NVLINK4 = Link(
    "NVLink 4",
    450e9,
    8e-6,
    "NVIDIA H100 datasheet: NVLink 900 GB/s (450 GB/s each way); NCCL issue #1259: about "
    "6 us for a small all-reduce on 2 H100s with CUDA graphs, 8 us assumed for up to 8",
)
NVLINK3 = Link(
    "NVLink 3",
    300e9,
    8e-6,
    "NVIDIA A100 datasheet: NVLink 600 GB/s (300 GB/s each way); latency assumed as NVLink 4",
)
PCIE4 = Link(
    "PCIe 4.0 x16",
    32e9,
    25e-6,
    "PCIe 4.0 x16: 16 GT/s x 16 lanes, about 32 GB/s each way; 25 us per all-reduce is an "
    "assumption (no peer-to-peer NVLink: through the host)",
)
# Checked: glennklockwood.com/garden/processors/TPUv4 (ICI: 400G each direction per link).
ICI_V4 = Link(
    "TPU v4 ICI",
    50e9,
    10e-6,
    "TPU v4 ICI: 400 Gb/s (50 GB/s) each way per link (glennklockwood.com, TPUv4); 10 us per "
    "all-reduce assumed",
)


@dataclass(frozen=True)
class Hardware:
    """An accelerator (or ``chips`` of them in tensor parallel), per-chip spec-sheet figures.

    ``bandwidth`` bytes/s, ``peak_flops`` dense bf16 FLOP/s, ``memory`` bytes, each per
    chip; ``bw_fraction`` and ``flops_fraction`` the shares of those peaks that kernels
    reach; ``overhead_s`` seconds added to every forward pass; ``link_bandwidth`` bytes/s
    each way and ``link_latency_s`` seconds per all-reduce between chips; ``kernel`` the
    attention kernel (:mod:`specdec_core.serving_kernels`). Checked on creation.
    """

    label: str
    bandwidth: float
    peak_flops: float
    memory: float
    chips: int = 1
    overhead_s: float = DEFAULT_OVERHEAD_S
    bw_fraction: float = DEFAULT_BW_FRACTION
    flops_fraction: float = DEFAULT_FLOPS_FRACTION
    link_bandwidth: float = PCIE4.bandwidth
    link_latency_s: float = PCIE4.latency_s
    link: str = PCIE4.label
    source: str = ""
    kernel: AttentionKernel = DEFAULT_KERNEL  # how attention pays for the KV cache

    def __post_init__(self) -> None:
        for name, (lo, hi, unit) in HARDWARE_LIMITS.items():
            finite_in(f"{self.label}: {name.replace('_', ' ')}", getattr(self, name), lo, hi, unit)
        whole_in(f"{self.label}: number of chips", self.chips, 1, MAX_CHIPS)
        finite_in(f"{self.label}: overhead per step", self.overhead_s, 0.0, MAX_OVERHEAD_S, "s")
        share_in(f"{self.label}: achieved share of peak bandwidth", self.bw_fraction)
        share_in(f"{self.label}: achieved share of peak FLOP/s", self.flops_fraction)

    @property
    def achieved_bandwidth(self) -> float:
        """bytes/s per chip that a step's reads reach: bandwidth x bw_fraction."""
        return self.bandwidth * self.bw_fraction

    @property
    def achieved_flops(self) -> float:
        """FLOP/s per chip that a step's matrix products reach: peak x flops_fraction."""
        return self.peak_flops * self.flops_fraction

    @property
    def total_memory(self) -> float:
        return self.memory * self.chips

    @property
    def ridge(self) -> float:
        """The spec sheet's ridge point: peak / bandwidth, FLOPs per byte (Williams 2009)."""
        return self.peak_flops / self.bandwidth

    @property
    def achieved_ridge(self) -> float:
        """The ridge point of the achieved ceilings, FLOPs per byte."""
        return self.achieved_flops / self.achieved_bandwidth

    def with_overhead(self, overhead_s: float) -> Hardware:
        """The same hardware with another per-step overhead (checked)."""
        return dataclasses.replace(self, overhead_s=overhead_s)

    def with_kernel(self, kernel: AttentionKernel) -> Hardware:
        """The same hardware with another attention kernel."""
        return dataclasses.replace(self, kernel=kernel)

    def with_fractions(self, bw_fraction: float, flops_fraction: float) -> Hardware:
        """The same hardware with other achieved shares of its peaks (checked)."""
        return dataclasses.replace(self, bw_fraction=bw_fraction, flops_fraction=flops_fraction)


def tensor_parallel(hw: Hardware, chips: int) -> Hardware:
    """``chips`` copies of ``hw`` in tensor parallel over its link."""
    label = f"{chips} x {hw.label}" if chips > 1 else hw.label
    return dataclasses.replace(hw, label=label, chips=chips)


def _nvlink4(label: str, bandwidth: float, memory: float, source: str) -> Hardware:
    return Hardware(
        label,
        bandwidth,
        989e12,
        memory,
        link_bandwidth=NVLINK4.bandwidth,
        link_latency_s=NVLINK4.latency_s,
        link=NVLINK4.label,
        source=source,
    )


# Spec sheets, dense (no 2:4 sparsity) bf16 tensor throughput. Checked against the sources.
# Checked: glennklockwood.com/garden/processors/h100 (NVIDIA's table: BF16 989.4 dense,
# 1978.9 sparse, 3.35 TB/s) and hpctech.co.jp's copy of NVIDIA's H100 spec table.
H100_SXM = _nvlink4(
    "H100 SXM",
    3.35e12,
    80 * GB,
    "NVIDIA H100 datasheet (SXM): 80 GB HBM3, 3.35 TB/s, BF16 Tensor Core 1,979 TFLOPS with "
    "sparsity, so 989 dense; NVLink 900 GB/s",
)
# Checked: aiminingco.com/gpu/h200/specs and openmetal.io (141 GB HBM3e, 4.8 TB/s, same
# GH100 die and Tensor Cores as the H100). The machine of benchmarks/gpu: 143,771 MiB.
H200 = _nvlink4(
    "H200 SXM",
    4.8e12,
    141 * GB,
    "NVIDIA H200 datasheet: 141 GB HBM3e, 4.8 TB/s, BF16 Tensor Core 1,979 TFLOPS with "
    "sparsity (989 dense), the same Hopper die as the H100; NVLink 900 GB/s",
)
GPUS: dict[str, Hardware] = {
    # Checked: glennklockwood.com/garden/processors/A100 (BF16 312 dense, 624 sparse; 80 GB
    # SXM 2.039 TB/s) and thundercompute.com's A100 spec table (SXM 80 GB: 2,039 GB/s).
    "a100-80gb": Hardware(
        "A100 80 GB SXM",
        2.039e12,
        312e12,
        80 * GB,
        link_bandwidth=NVLINK3.bandwidth,
        link_latency_s=NVLINK3.latency_s,
        link=NVLINK3.label,
        source="NVIDIA A100 datasheet: 80 GB HBM2e, 2,039 GB/s (SXM), BF16 Tensor Core "
        "312 TFLOPS dense (624 with sparsity); NVLink 600 GB/s",
    ),
    "h100-sxm": H100_SXM,
    "h200": H200,
    # Checked: grokipedia "NVIDIA L4 vs L40S" quoting the datasheet (24 GB GDDR6, 300 GB/s,
    # 242 TFLOPS FP16 tensor with sparsity); sourcecode.com spec sheet (300 GB/s).
    "l4": Hardware(
        "L4",
        300e9,
        121e12,
        24 * GB,
        source="NVIDIA L4 datasheet: 24 GB GDDR6, 300 GB/s, BF16 Tensor Core 242 TFLOPS "
        "with sparsity, so 121 dense; PCIe 4.0 x16, no NVLink",
    ),
    # Checked: waredb.com/processor/nvidia-geforce-rtx-4090 (1008 GB/s, 24 GB, BF16 tensor
    # 165.15 TFLOPS dense, 330.30 with sparsity).
    "rtx-4090": Hardware(
        "GeForce RTX 4090",
        1.008e12,
        165.2e12,
        24 * GB,
        source="NVIDIA Ada Lovelace architecture whitepaper (RTX 4090): 24 GB GDDR6X, "
        "1,008 GB/s, BF16 tensor 165.2 TFLOPS dense with FP32 accumulate; PCIe 4.0 x16",
    ),
    # Checked: macmegasite.com (M3 Max 400 GB/s), wikipedia (de) Apple M3 Max (128 GB),
    # hmc-tech.com (40-core M3 Max 14.32 TFLOPS FP16 = FP32, a computed estimate).
    "m3-max": Hardware(
        "Apple M3 Max (40-core GPU)",
        400e9,
        14.2e12,
        128 * GB,
        source="Apple (Oct 2023): up to 128 GB unified memory, 400 GB/s. Apple publishes "
        "no FLOP/s figure: 14.2 TFLOPS fp16 is a third-party estimate (5,120 ALUs x 2 x "
        "about 1.4 GHz)",
    ),
    "2x-h100": tensor_parallel(H100_SXM, 2),
    "4x-h100": tensor_parallel(H100_SXM, 4),
    "8x-h100": tensor_parallel(H100_SXM, 8),
}
# Checked: cloud.google.com/tpu/docs/v4 ("275 teraflops (bf16 or int8)", "32 GiB, 1200 GBps").
TPU_V4 = Hardware(
    "TPU v4",
    1.2e12,
    275e12,
    32 * GIB,
    link_bandwidth=ICI_V4.bandwidth,
    link_latency_s=ICI_V4.latency_s,
    link=ICI_V4.label,
    source="Google Cloud TPU v4 documentation: 275 TFLOPS (bf16) per chip, 32 GiB HBM2 at "
    "1,200 GB/s; ICI 50 GB/s each way per link",
)  # not offered on the page: only the published checks use it
# Checked: NVIDIA A100 datasheet, PCIe 80 GB column: 1,935 GB/s, 312 TFLOPS BF16 dense.
A100_PCIE = Hardware(
    "A100 80 GB PCIe",
    1.935e12,
    312e12,
    80 * GB,
    source="NVIDIA A100 datasheet: 80 GB HBM2e, 1,935 GB/s (PCIe), BF16 Tensor Core 312 TFLOPS "
    "dense",
)  # Sequoia's GPU (published checks only)

"""The Serving lab's settings: every input's page unit, range and default, its presets'
values, the engine-log presets, and how a shared link is read back (no widgets here).

A setting lives in three places that must agree: the widget (page units, this module's
ranges), the link (text, read by :func:`values_from_link`) and the core (SI units, checked
again by :mod:`specdec_core.serving`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import specdec_core as sc
from specdec_core import serving as sv
from specdec_core.serving_checks import MAX_CHIPS, MAX_PREFILL, MAX_VERIFIED
from specdec_ui.kit.share import LinkReader, probability
from specdec_ui.presets import SERVING_K_MAX, SERVING_LOG_K_MAX

PREFIX = "serve"
CUSTOM = "custom"
K_MAX = SERVING_K_MAX  # the pages offer K = 1..8 (the Model pair lab measures these too)
# Typed hardware in page units: name -> (label, core field, scale to SI, lo, hi, step).
# Every step is 0.001 with each minimum on that grid: a browser flags a number input whose
# value is off the grid of min + n * step as "invalid" (issue 33 item 6), and presets such as
# 3,350 GB/s or 165.2 TFLOP/s must read as valid.
HW_FIELDS = {
    "hw_bw": ("memory bandwidth (GB/s per chip)", "bandwidth", 1e9, 0.1, 100_000.0, 0.001),
    "hw_tflops": ("dense bf16 (TFLOP/s per chip)", "peak_flops", 1e12, 0.001, 100_000.0, 0.001),
    "hw_mem": ("memory (GB per chip)", "memory", 1e9, 0.1, 10_000.0, 0.001),
    "hw_link": ("link between chips (GB/s each way)", "link_bandwidth", 1e9, 0.1, 10_000.0, 0.001),
    "hw_lat": ("all-reduce latency (µs)", "link_latency_s", 1e-6, 0.0, 10_000.0, 0.001),
}
# Typed target: name -> (label, lo, hi) of a whole number.
TARGET_INTS = {
    "t_layers": ("layers", 1, 1_000),
    "t_d": ("hidden size", 1, 131_072),
    "t_heads": ("query heads", 1, 1_024),
    "t_kv": ("KV heads", 1, 1_024),
    "t_hd": ("head size", 1, 1_024),
    "t_vocab": ("vocabulary", 1, 10_000_000),
}
TARGET_FIELDS = {  # the ModelSpec field behind each typed integer
    "t_layers": "layers",
    "t_d": "d_model",
    "t_heads": "q_heads",
    "t_kv": "kv_heads",
    "t_hd": "head_dim",
    "t_vocab": "vocab",
}
PARAMS_B = (0.001, 10_000.0)  # typed target size, billions of parameters
DRAFT_C = (0.0, 2.0)
OVERHEAD_MS = (0.0, 1_000.0)
ENGINE_WORK_MS = (0.0, 1_000.0)  # the engine's work per round (core: 0 .. 1 s)
KERNEL_LABELS = {key: kernel.label for key, kernel in sv.KERNELS.items()}
SHARE = (0.01, 1.0)
BATCH = (1, sv.MAX_BATCH)
CONTEXT = (1, sv.MAX_CONTEXT)
PREFILL = (0, MAX_PREFILL)
TAU = (1.0, float(K_MAX + 1))
VERIFIED = (2, MAX_VERIFIED)
CHIPS = (1, MAX_CHIPS)
BPP_LABELS = {"bf16": "bf16 (2 bytes)", "fp8": "fp8 (1 byte)", "int4": "int4 (half a byte)"}
DRAFT_TP = {"all": "the target's chips", "1": "one chip"}
ACC_MODES = {
    "alpha": "alpha: each draft kept with the same chance (a chain of K)",
    "tau": "tau: tokens per round, measured (a tree, an engine's AL)",
}


def hw_values(key: str) -> dict[str, object] | None:
    """The typed fields of a hardware preset, in page units."""
    hw = sv.GPUS.get(key)
    if hw is None:
        return None
    values = {
        name: round(getattr(hw, field) / scale, 6)
        for name, (_, field, scale, *_) in HW_FIELDS.items()
    }
    return {**values, "hw_chips": hw.chips}


def target_values(key: str) -> dict[str, object] | None:
    """The typed fields of a target preset (parameters in billions)."""
    model = sv.TARGETS.get(key)
    if model is None:
        return None
    ints = {name: getattr(model, field) for name, field in TARGET_FIELDS.items()}
    return {"t_params": round(model.params / 1e9, 6), **ints, "t_tied": model.tied}


# ----------------------------------------------------------------------------- engine logs
@dataclass(frozen=True)
class LogPreset:
    """A published engine log: what it gives (``mode``) and its numbers."""

    label: str
    values: dict[str, object]  # the decoder fields it sets (log_mode and that mode's inputs)
    source: str


LOG_MODES = {
    "rates": "per-position rates (vLLM, llama.cpp)",
    "counts": "vLLM's counters",
    "al": "mean acceptance length only",
}
LOG_K_MAX = SERVING_LOG_K_MAX
parse_counts = functools.partial(sc.parse_counts, name="num_accepted_tokens_per_pos")
LOG_DRAFTS_MAX = 10**12
LOG_PRESETS: dict[str, LogPreset] = {
    "llama-cpp": LogPreset(
        "llama.cpp log: rates 0.805, 0.632, 0.483 (AL 2.92)",
        {"log_mode": "rates", "log_rates": "0.805, 0.632, 0.483"},
        "a published llama.cpp log, per the project's serving notes",
    ),
    "vllm-k7": LogPreset(
        "vLLM log, K = 7: mean acceptance length 2.91",
        {"log_mode": "al", "log_al": 2.91, "log_k": 7},
        "a published vLLM log (K = 7), per the project's serving notes",
    ),
    "vllm-counts": LogPreset(
        "vLLM counters: 1,000 rounds of 3 drafts; 805, 632, 483 kept",
        {
            "log_mode": "counts",
            "log_counts": "805, 632, 483",
            "log_drafts": 1_000,
            "log_draft_tokens": 3_000,
            "log_accepted": 1_920,
        },
        "the llama.cpp rates above as vLLM's counters would print them",
    ),
    "vllm-ngram": LogPreset(
        "vLLM counters, an n-gram draft (an example): 2,400 drafts in 1,000 rounds of K = 3",
        {
            "log_mode": "counts",
            "log_counts": "700, 450, 300",
            "log_drafts": 1_000,
            "log_draft_tokens": 2_400,
            "log_accepted": 1_450,
        },
        "an illustrative n-gram run (made up): rounds that found a shorter match drafted "
        "fewer than K tokens",
    ),
}


def log_values(key: str) -> dict[str, object] | None:
    """The decoder fields a log preset sets."""
    preset = LOG_PRESETS.get(key)
    return None if preset is None else dict(preset.values)


LOG_DEFAULTS: dict[str, object] = {
    "log_preset": "llama-cpp",
    "log_mode": "rates",
    "log_rates": "0.805, 0.632, 0.483",
    "log_counts": "805, 632, 483",
    "log_drafts": 1_000,
    "log_draft_tokens": 3_000,
    "log_accepted": 1_920,
    "log_al": 2.91,
    "log_k": 7,
}
MEASURED_DEFAULTS: dict[str, object] = {"meas_n": 1_024, "meas_k": 4}
DEFAULTS: dict[str, object] = {
    "hw": "4x-h100",
    **hw_values("4x-h100"),
    "bw_frac": sv.DEFAULT_BW_FRACTION,
    "fl_frac": sv.DEFAULT_FLOPS_FRACTION,
    "overhead": round(sv.DEFAULT_OVERHEAD_S * 1e3, 6),
    "kernel": sv.DEFAULT_KERNEL.key,
    "work": round(sv.DEFAULT_ENGINE_WORK_S * 1e3, 6),
    "target": "llama-3.1-70b",
    **target_values("llama-3.1-70b"),
    "bpp": "bf16",
    "draft": "llama-3.2-1b",
    "draft_c": 0.2,
    "draft_tp": "all",
    "batch": 1,
    "context": 1_024,
    "prefill": 0,
    "acc": "alpha",
    "alpha": 0.75,
    "tau": 3.0,
    "verified": 8,
    "k": 4,
    "share": 1.0,
    **LOG_DEFAULTS,
    **MEASURED_DEFAULTS,
}


# ----------------------------------------------------------------------------- the link
def number(lo: float, hi: float, *, whole: bool = False):
    """A link parser: a number (a whole one if ``whole``) in [lo, hi]."""

    def parse(raw: str):
        text = raw.strip()
        value = int(text) if whole and text.lstrip("-").isdigit() else float(text)
        if whole and not isinstance(value, int):
            raise ValueError(f"{text[:20]!r} is not a whole number")
        if not lo <= value <= hi:
            raise ValueError(f"{value:g} is out of range; allowed: {lo:g} to {hi:g}")
        return value

    return parse


def _flag(raw: str) -> bool:
    if raw not in ("True", "False"):
        raise ValueError(f"{raw[:20]!r} is not True or False")
    return raw == "True"


def _typed_from_link(link: LinkReader) -> dict[str, object]:
    """Every typed value of the link (defaults where absent or bad)."""
    d = DEFAULTS
    values: dict[str, object] = {
        name: link.get(name, number(lo, hi), d[name])
        for name, (_, _, _, lo, hi, _) in HW_FIELDS.items()
    }
    values["hw_chips"] = link.int_in("hw_chips", *CHIPS, d["hw_chips"])
    values["t_params"] = link.get("t_params", number(*PARAMS_B), d["t_params"])
    for name, (_, lo, hi) in TARGET_INTS.items():
        values[name] = link.int_in(name, lo, hi, d[name])
    values["t_tied"] = link.get("t_tied", _flag, d["t_tied"])
    for name, parse in (
        ("bw_frac", number(*SHARE)),
        ("fl_frac", number(*SHARE)),
        ("overhead", number(*OVERHEAD_MS)),
        ("work", number(*ENGINE_WORK_MS)),
        ("draft_c", number(*DRAFT_C)),
        ("alpha", functools.partial(probability, name="alpha")),  # the kit's reader
        ("tau", number(*TAU)),
        ("share", functools.partial(probability, name="share")),
    ):
        values[name] = link.get(name, parse, d[name])
    for name, bounds in (
        ("batch", BATCH),
        ("context", CONTEXT),
        ("prefill", PREFILL),
        ("verified", VERIFIED),
        ("k", (1, K_MAX)),
    ):
        values[name] = link.int_in(name, *bounds, d[name])
    values["bpp"] = link.choice("bpp", list(sv.BYTES_PER_PARAM), d["bpp"])
    values["kernel"] = link.choice("kernel", list(sv.KERNELS), d["kernel"])
    values["draft_tp"] = link.choice("draft_tp", list(DRAFT_TP), d["draft_tp"])
    values["acc"] = link.choice("acc", list(ACC_MODES), d["acc"])
    values["meas_n"] = link.choice("meas_n", ["1024", "4096"], str(d["meas_n"]))
    values["meas_n"] = int(values["meas_n"])
    values["meas_k"] = link.choice("meas_k", ["1", "2", "3", "4", "8"], str(d["meas_k"]))
    values["meas_k"] = int(values["meas_k"])
    return values


def _checked(parse):
    """A link parser that keeps the typed text when ``parse`` accepts it."""

    def check(raw: str) -> str:
        parse(raw)
        return raw

    return check


def _log_from_link(link: LinkReader) -> dict[str, object]:
    """The engine-log decoder's fields of the link."""
    d = LOG_DEFAULTS
    return {
        "log_mode": link.choice("log_mode", list(LOG_MODES), d["log_mode"]),
        "log_rates": link.get("log_rates", _checked(sc.parse_rates), d["log_rates"]),
        "log_counts": link.get("log_counts", _checked(parse_counts), d["log_counts"]),
        "log_drafts": link.int_in("log_drafts", 1, LOG_DRAFTS_MAX, d["log_drafts"]),
        "log_draft_tokens": link.int_in(
            "log_draft_tokens", 0, LOG_DRAFTS_MAX * LOG_K_MAX, d["log_draft_tokens"]
        ),
        "log_accepted": link.int_in(
            "log_accepted", 0, LOG_DRAFTS_MAX * LOG_K_MAX, d["log_accepted"]
        ),
        "log_al": link.get("log_al", number(1.0, LOG_K_MAX + 1.0), d["log_al"]),
        "log_k": link.int_in("log_k", 1, LOG_K_MAX, d["log_k"]),
    }


PICKERS = (
    ("hw", [*sv.GPUS, CUSTOM], hw_values),
    ("target", [*sv.TARGETS, CUSTOM], target_values),
    ("log_preset", [*LOG_PRESETS, CUSTOM], log_values),
)


def values_from_link(link: LinkReader) -> dict[str, object]:
    """The link's settings; typed values that differ from the chosen preset make it custom."""
    values = {**_typed_from_link(link), **_log_from_link(link)}
    for name, options, values_of in PICKERS:
        key = link.choice(name, options, DEFAULTS[name])
        preset = values_of(key) or {}
        typed = {field: values[field] for field in preset}
        if any(field in link.params for field in preset) and typed != preset:
            key = CUSTOM
        else:
            values.update(preset)
        values[name] = key
    values["draft"] = link.choice("draft", [*sv.DRAFTS, CUSTOM], DEFAULTS["draft"])
    return values

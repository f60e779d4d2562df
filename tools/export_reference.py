"""Store torch's logits for the shipped GPT weights (assets/gpt_reference.npz).

The parity test (tests/core/lm/test_gpt.py) compares the numpy forward pass with these
logits within 1e-4, without needing torch (draft, target and the distilled draft of
tools/train_aligned_draft.py). Run after every training run:

    python tools/export_reference.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from train_gpt import GPT  # noqa: E402

from specdec_core.lm.corpus import ASSETS, load_corpus  # noqa: E402
from specdec_core.lm.tokenizer import Tokenizer  # noqa: E402

N_TOKENS = 48


def torch_model(path: Path) -> GPT:
    """A torch GPT holding exactly the float16 weights of the .npz (as float32)."""
    d = np.load(path)
    cfg = json.loads(str(d["config"]))
    model = GPT(cfg["vocab"], cfg["ctx"], cfg["layers"], cfg["dim"], cfg["heads"])
    sd = {
        "wte.weight": d["wte"],
        "wpe.weight": d["wpe"],
        "lnf.weight": d["lnf_g"],
        "lnf.bias": d["lnf_b"],
    }
    for i in range(cfg["layers"]):
        for n in ("qkv", "proj", "fc", "out"):
            sd[f"blocks.{i}.{n}.weight"] = d[f"h{i}_{n}_w"].T
            sd[f"blocks.{i}.{n}.bias"] = d[f"h{i}_{n}_b"]
        for n in ("ln1", "ln2"):
            sd[f"blocks.{i}.{n}.weight"] = d[f"h{i}_{n}_g"]
            sd[f"blocks.{i}.{n}.bias"] = d[f"h{i}_{n}_b"]
    model.load_state_dict({k: torch.tensor(np.asarray(v, np.float32)) for k, v in sd.items()})
    return model.eval()


def main() -> None:
    torch.set_num_threads(1)
    tok = Tokenizer.load(ASSETS / "tokenizer.json")
    ids = np.array(tok.encode(load_corpus().validation[0])[:N_TOKENS], dtype=np.int64)
    out = {"ids": ids.astype(np.int16)}
    for which in ("draft", "target", "draft_aligned"):
        with torch.no_grad():
            logits = torch_model(ASSETS / f"gpt_{which}.npz")(torch.tensor(ids)[None])[0]
        out[which] = logits.numpy().astype(np.float32)
    np.savez_compressed(ASSETS / "gpt_reference.npz", **out)
    print(f"stored torch {torch.__version__} logits of {len(ids)} tokens for {', '.join(out)}")


if __name__ == "__main__":
    main()

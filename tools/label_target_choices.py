"""Count the 4-layer target's own choices (its argmax) into the draft's table (issue 12).

Writes ``specdec_core/lm/assets/choice_table.npz``. The choices: for every position of

- ``corpus``: the training split's token ids (``pairs.corpus_token_ids()``), read in
  windows of the target's context (256 tokens, one prefill per window), and
- ``samples``: the target's own text (``assets/target_samples.npz``, written by
  ``tools/train_aligned_draft.py``), one prefill per sequence,

the token the shipped target would emit next at T = 0. They are counted into a
:class:`specdec_core.lm.choice_table.ChoiceTable` (most frequent choice after each
context of 1-4 tokens, and its share), shipped so that the app loads it in
milliseconds. Only numpy and the app's own :class:`GPTModel` are used (no torch), so the
choices are exactly the argmax the app computes. Deterministic (no seed). Prints the
SHA-256 for ``pairs.py``.

    OPENBLAS_NUM_THREADS=2 python tools/label_target_choices.py
"""

from __future__ import annotations

import hashlib
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from specdec_core.lm.choice_table import ChoiceTable  # noqa: E402
from specdec_core.lm.corpus import ASSETS  # noqa: E402
from specdec_core.lm.pairs import _gpt, corpus_token_ids, load_tokenizer  # noqa: E402

OUT = ASSETS / "choice_table.npz"


def choices(target, ids: np.ndarray) -> np.ndarray:
    """The target's argmax after each prefix ids[: i + 1], in windows of its context."""
    out = np.empty(ids.size, np.int16)
    step = target.context_length
    for start in range(0, ids.size, step):
        runner = target.fresh()
        block = ids[start : start + step]
        out[start : start + block.size] = runner.extend(block).argmax(axis=1)
    return out


def main() -> None:
    begin = time.perf_counter()
    target = _gpt("target")
    corpus = choices(target, corpus_token_ids())
    print(f"corpus: {corpus.size:,} positions in {time.perf_counter() - begin:.0f} s")
    with np.load(ASSETS / "target_samples.npz") as data:
        ids, lengths = data["ids"].astype(np.int64), data["lengths"]
    samples = np.split(ids, np.cumsum(lengths)[:-1])
    sample_choices = [choices(target, s) for s in samples]
    table = ChoiceTable.count(
        [corpus_token_ids(), *samples], [corpus, *sample_choices], load_tokenizer().vocab_size
    )
    np.savez_compressed(OUT, **table.to_arrays())
    print(f"contexts per order: {[k.size for k in table.keys]}")
    digest = hashlib.sha256(OUT.read_bytes()).hexdigest()
    print(f"{OUT.name}: {OUT.stat().st_size / 1e3:.0f} KB, sha256 {digest}")
    print(f"done in {time.perf_counter() - begin:.0f} s")


if __name__ == "__main__":
    main()

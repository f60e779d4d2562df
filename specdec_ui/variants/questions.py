"""What the Variants lab asks its class.

Every number in an answer is computed here by the core, never typed (the rules of
:mod:`specdec_ui.page_questions`, which finds this module through the page's registry
entry: :func:`specdec_ui.registry.PageInfo.room`, ``asks``)."""

from __future__ import annotations

import numpy as np

import specdec_core as sc
from specdec_core import variants as vr
from specdec_ui.page_questions import WORKED_P as _P
from specdec_ui.page_questions import WORKED_Q as _Q
from specdec_ui.page_questions import Question
from specdec_ui.page_questions import half_unit as _tol
from specdec_ui.page_questions import sig_text as _f
from specdec_ui.presets import (
    VARIANT_PRESETS,
)


def questions() -> tuple[Question, ...]:
    """Variants lab: the rescue preset, strict verification, typical acceptance."""
    rescue = VARIANT_PRESETS["rescue"]
    p = np.array(sc.parse_distribution(rescue.p_text, name="p"))
    q = np.array(sc.parse_distribution(rescue.q_text, name="q"))
    beta1, beta2 = (float(x) for x in vr.multidraft_acceptance(p, q, np.array([1, 2])))
    strict, alpha = vr.strict_acceptance(_P, _Q), sc.acceptance_rate(_P, _Q)
    return (
        Question(
            "In the rescue preset (p = [0.70, 0.30, 0, 0], a flat draft), how often is one "
            "candidate kept, and how often one of two?",
            f"One: alpha = Σ min(p, q) = **{_f(beta1, 2)}**. After a rejection the target "
            "shrinks to its residual and the second candidate is tried against it: "
            f"beta_2 = **{_f(beta2, 3)}**. A second candidate rescues a position the first "
            "one lost.",
            (("beta1", beta1), ("beta2", beta2)),
            number="beta2",
            tolerance=_tol(beta2),
            unit="beta_2, the chance one of two candidates is kept",
        ),
        Question(
            "Strict verification keeps a draft only when the target's own sample is the same "
            "token. With the worked round's p and q, how often is that, against alpha?",
            f"beta = Σ p q = **{_f(strict, 3)}** against alpha = Σ min(p, q) = "
            f"**{_f(alpha, 2)}**. Both rules emit exactly p, but strict rounds are much shorter.",
            (("beta", strict), ("alpha", alpha)),
            number="beta",
            tolerance=_tol(strict),
            unit="beta, the strict rule's keep chance",
        ),
        Question(
            "Typical acceptance (Medusa) never looks at q and is faster. Why does it fail the "
            "chi-square test?",
            "It keeps any draft the target finds likely enough, with no coin that corrects "
            "for how often the draft proposes it, and takes argmax p after a rejection. The "
            "output then leans towards likely tokens: fluent, fast, and not distributed as p.",
            choices=(
                "It uses too few drafts for the test",
                "The test had too few rounds",
                "It keeps likely drafts with no coin that corrects for how often the draft "
                "proposes them, so the output leans towards likely tokens",
                "It samples its bonus token from q",
            ),
            right=2,
        ),
    )

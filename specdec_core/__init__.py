"""specdec_core: the math of speculative decoding, in numpy.

Notation of the seeds: p = TARGET distribution, q = DRAFT distribution,
K = number of draft tokens per round, alpha = acceptance rate. Nothing here
imports streamlit or plotly; every random draw takes an explicit
``np.random.Generator``.
"""

from .distributions import (
    broadcast_rows,
    check_k,
    default_labels,
    parse_coins,
    parse_distribution,
    parse_labels,
    parse_number,
    validate_distribution,
    validate_rows,
)
from .errors import (
    MAX_K,
    MAX_K_THEORY,
    MAX_ROUNDS,
    MAX_TEXT_LENGTH,
    MAX_TYPED_ENTRIES,
    InvalidDistributionError,
    InvalidParameterError,
    SpecDecError,
)
from .sampling import (
    RoundResult,
    RoundStep,
    acceptance_probability,
    acceptance_rate,
    draft_from,
    residual_distribution,
    residual_mass,
    sample_index,
    verify_round,
)
from .scenarios import PUBLISHED_SPEEDUPS, SCENARIOS, SELF_TEST, RoundScenario, TheoryScenario
from .simulate import (
    VARIANTS,
    GoodnessOfFit,
    LosslessnessReport,
    SimulationResult,
    chi_square_test,
    losslessness_test,
    simulate_rounds,
)
from .theory import (
    expected_tokens,
    optimal_k,
    speedup,
    time_per_token,
    tokens_per_round_distribution,
)

__all__ = [
    "GoodnessOfFit",
    "InvalidDistributionError",
    "InvalidParameterError",
    "LosslessnessReport",
    "MAX_K",
    "MAX_K_THEORY",
    "MAX_ROUNDS",
    "MAX_TEXT_LENGTH",
    "MAX_TYPED_ENTRIES",
    "PUBLISHED_SPEEDUPS",
    "RoundResult",
    "RoundScenario",
    "RoundStep",
    "SCENARIOS",
    "SELF_TEST",
    "SimulationResult",
    "SpecDecError",
    "TheoryScenario",
    "VARIANTS",
    "acceptance_probability",
    "acceptance_rate",
    "broadcast_rows",
    "check_k",
    "chi_square_test",
    "default_labels",
    "draft_from",
    "expected_tokens",
    "losslessness_test",
    "optimal_k",
    "parse_coins",
    "parse_distribution",
    "parse_labels",
    "parse_number",
    "residual_distribution",
    "residual_mass",
    "sample_index",
    "simulate_rounds",
    "speedup",
    "time_per_token",
    "tokens_per_round_distribution",
    "validate_distribution",
    "validate_rows",
    "verify_round",
]

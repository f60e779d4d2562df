"""Issue 33, item 18: numbers as a European keyboard types them. A decimal comma is
named (which entry, what to type) instead of being read as two entries ("entries sum
to 37"); K = 2.5 is refused, never cut to 2."""

from __future__ import annotations

import numpy as np
import pytest

import specdec_core as sc
from specdec_core.engine_metrics import parse_counts, parse_rates


@pytest.mark.parametrize(
    ("text", "entry", "point"),
    [
        ("0,4; 0,25; 0,2; 0,1; 0,05", "entry 1 ('0,4')", "type 0.4 with a point"),
        ("0.4; 0,6", "entry 2 ('0,6')", "type 0.6 with a point"),
        ("0,5 0,5", "entry 1 ('0,5')", "type 0.5 with a point"),
        ("0,4", "entry 1 ('0,4')", "type 0.4 with a point"),  # alone: 0 and 4 cannot be meant
        ("12,5%; 87,5%", "entry 1 ('12,5%')", "type 12.5% with a point"),
    ],
)
def test_a_decimal_comma_is_named_not_summed(text, entry, point):
    with pytest.raises(sc.InvalidDistributionError) as info:
        sc.parse_distribution(text)
    message = str(info.value)
    assert entry in message and "decimal comma" in message and point in message
    assert "sum" not in message
    with pytest.raises(sc.InvalidDistributionError, match="decimal comma"):
        sc.parse_distribution(text, normalize=True)  # normalising would hide it


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0,1", [0.0, 1.0]),  # two entries 0 and 1: a valid distribution, kept as it was
        ("0.4,0.6", [0.4, 0.6]),
        ("0.4, 0.25, 0.2, 0.1, 0.05", [0.4, 0.25, 0.2, 0.1, 0.05]),
        ("0.4; 0.25;0.2 ;0.1,0.05", [0.4, 0.25, 0.2, 0.1, 0.05]),
        ("40%,60%", [0.4, 0.6]),
    ],
)
def test_commas_between_entries_still_separate_them(text, expected):
    assert sc.parse_distribution(text) == pytest.approx(expected)


def test_coins_and_rates_name_a_decimal_comma_but_counts_keep_thousands():
    with pytest.raises(sc.InvalidParameterError, match=r"coins: entry 2 \('0,72'\)"):
        sc.parse_coins("0.5; 0,72", 2)
    with pytest.raises(sc.InvalidParameterError, match="type 0.805 with a point"):
        parse_rates("0,805; 0,632")
    counts = parse_counts("1,200; 800")  # read as before (1, 200, 800), not as a decimal comma
    assert counts.tolist() == [1.0, 200.0, 800.0]


@pytest.mark.parametrize("k", [2.5, 2.0, np.float64(3.5)])
def test_k_must_be_a_whole_number_and_the_message_gives_the_range(k):
    with pytest.raises(sc.InvalidParameterError) as info:
        sc.check_k(k, k_max=8)
    assert f"K must be a whole number, got {k!r}; allowed: 1 to 8." == str(info.value)

"""Both labs give the same verdict for the same run: one verdict section (issue 26)."""

import pytest

from tests.app.conftest import open_page

RUN = {"p": "0.4, 0.25, 0.2, 0.1, 0.05", "q": "0.3, 0.3, 0.15, 0.15, 0.1"}
RUN |= {"k": "3", "rounds": "20000", "seed": "5"}


def _verdict(at, key: str) -> str:
    return at.get_by_key(key).children[0].value


@pytest.mark.parametrize(
    "lab_variant, variants_query",
    [
        ("strict", {"variant": "strict"}),
        ("strict_fresh_sample", {"variant": "strict", "broken": "1"}),
    ],
)
def test_the_two_labs_agree_on_the_same_run(lab_variant, variants_query):
    lab = open_page("pages/scripts/losslessness.py", RUN | {"variant": lab_variant})
    variants = open_page("pages/scripts/variants.py", RUN | variants_query)
    assert not lab.exception and not variants.exception
    said = _verdict(lab, "lab_verdict")
    assert said == _verdict(variants, "var_verdict")
    assert said.startswith("PASS" if lab_variant == "strict" else "FAIL"), said
    assert "round lengths" in said  # both tests, in both labs

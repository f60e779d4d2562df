"""Every K limit of a page lives in one place: specdec_ui/presets.py (issue 26, item 6), or
the room's ``limits.py`` for a limit only that page offers (issue 36: a page is four files).

A module of ``specdec_ui`` may name a limit (``K_MAX = presets.SERVING_K_MAX``) but never set
one to a number of its own: a slider, a link reader and a figure that each wrote 8 drifted
apart once. The limits themselves stay within what the core accepts.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import specdec_core as sc
from specdec_ui import presets
from specdec_ui.variants import limits as variant_limits

UI = Path(presets.__file__).parent
K_LIMIT = re.compile(r"(^|_)K_MAX$")


def _number_assignments(path: Path) -> list[tuple[str, int]]:
    """(name, line) of module-level ``*K_MAX = <number>`` assignments in ``path``."""
    found = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        numbers = (
            [n for n in ast.walk(node.value) if isinstance(n, ast.Constant)]
            if getattr(node, "value", None) is not None
            else []
        )
        if any(K_LIMIT.search(name) for name in names) and numbers:
            found += [(name, node.lineno) for name in names if K_LIMIT.search(name)]
    return found


def _limit_home(path: Path) -> bool:
    """presets.py, or a room's limits.py (``specdec_ui/<room>/limits.py``)."""
    rel = path.relative_to(UI)
    in_a_room = len(rel.parts) == 2 and rel.parts[0] not in ("kit", "runtime")
    return rel == Path("presets.py") or (in_a_room and rel.name == "limits.py")


def test_no_ui_module_but_presets_or_a_rooms_limits_sets_a_k_limit_to_a_number():
    offenders = {
        str(path.relative_to(UI)): _number_assignments(path)
        for path in sorted(UI.rglob("*.py"))
        if not _limit_home(path) and _number_assignments(path)
    }
    assert offenders == {}
    assert _limit_home(UI / "variants" / "limits.py") and not _limit_home(
        UI / "variants" / "view.py"
    )


def test_the_check_sees_the_limits_in_presets():
    names = {name for name, _ in _number_assignments(UI / "presets.py")}
    assert {
        "ROUND_K_MAX",
        "SPEED_K_MAX",
        "HEATMAP_K_MAX",
        "LAB_K_MAX",
        "MODEL_PAIR_K_MAX",
        "SERVING_K_MAX",
    } <= names
    in_room = {name for name, _ in _number_assignments(UI / "variants" / "limits.py")}
    assert in_room == {"VARIANT_K_MAX"}


def test_every_page_limit_is_one_the_core_accepts():
    for k in (
        presets.ROUND_K_MAX,
        presets.LAB_K_MAX,
        variant_limits.VARIANT_K_MAX,
        presets.MODEL_PAIR_K_MAX,
        presets.SERVING_K_MAX,
    ):
        assert 1 <= k <= sc.MAX_K
        assert sc.check_k(k) == k
    assert presets.SPEED_HEATMAP_K <= presets.SPEED_K_MAX <= sc.MAX_K_THEORY
    assert presets.HEATMAP_K_MAX <= sc.MAX_K_THEORY
    assert presets.SERVING_LOG_K_MAX == sc.MAX_METRIC_POSITIONS


def test_the_pages_read_their_limits_from_presets():
    from specdec_ui.model_pairs import work as model_pairs_work
    from specdec_ui.serving import settings as serving_settings
    from specdec_ui.speedup import figures as speedup_figures

    assert model_pairs_work.K_MAX == presets.MODEL_PAIR_K_MAX
    assert serving_settings.K_MAX == presets.SERVING_K_MAX
    assert serving_settings.LOG_K_MAX == presets.SERVING_LOG_K_MAX
    assert speedup_figures.HEATMAP_K_MAX == presets.HEATMAP_K_MAX

"""Many anonymized variants: evaluate_many, the risk–utility table and its Pareto marks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _toy_plugins import Classes, Fragile, MinClass, registry_with
from hypothesis import given, settings
from hypothesis import strategies as st

from anoneval.core import Evaluator, evaluate, evaluate_many
from anoneval.core.api import (
    ConfigError,
)
from anoneval.core.cli.main import main
from anoneval.core.report.model import build_risk_utility, pareto_optimal
from anoneval.core.report.numbers import higher_is_worse
from anoneval.core.run.config import load_config, validate_config
from anoneval.core.run.runner import run_plan

ROOT = Path(__file__).resolve().parents[3]

QI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass"]


@pytest.fixture
def registry():
    return registry_with(MinClass, Classes, Fragile)


def toy_data() -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    rng = np.random.default_rng(3)
    orig = pd.DataFrame({"a": rng.integers(0, 40, 400), "b": rng.integers(0, 4, 400)})
    variants = {f"a//{d}": orig.assign(a=orig["a"] // d) for d in (1, 2, 5, 10)}
    variants["b*"] = orig.assign(b=0)
    return orig, variants


MEASURES = [{"name": "MinClass", "params": {"qi": ["a", "b"]}},
            {"name": "Classes", "params": {"qi": ["a", "b"]}}]


# -- Pareto marks --------------------------------------------------------------------------------


def test_pareto_optimal_hand_cases() -> None:
    # (2,2) is beaten by (1,1) on both; the others each win on one coordinate
    assert pareto_optimal([(0, 3), (1, 1), (2, 2), (3, 0)]) == [True, True, False, True]
    assert pareto_optimal([(1, 1), (1, 1)]) == [True, True]  # equal points: no dominance
    assert pareto_optimal([(1, 1), (1, 2)]) == [True, False]  # tie on one, worse on the other
    assert pareto_optimal([(5, 5)]) == [True]
    assert pareto_optimal([]) == []


def brute_force_pareto(points: list[tuple[float, float]]) -> list[bool]:
    def dominates(q: tuple[float, float], p: tuple[float, float]) -> bool:
        return q[0] <= p[0] and q[1] <= p[1] and (q[0] < p[0] or q[1] < p[1])

    return [not any(dominates(q, p) for q in points) for p in points]


small = st.integers(-3, 3).map(float)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(small, small), max_size=12), st.data())
def test_pareto_matches_brute_force_and_ignores_order(points, data) -> None:
    marks = pareto_optimal(points)
    assert marks == brute_force_pareto(points)
    assert not points or any(marks)
    # an order drawn as distinct sort keys (Hypothesis 6.170's st.permutations warns of its
    # own use of the random module)
    keys = data.draw(st.lists(st.integers(), min_size=len(points), max_size=len(points),
                              unique=True))
    order = sorted(range(len(points)), key=keys.__getitem__)
    shuffled = pareto_optimal([points[i] for i in order])
    assert shuffled == [marks[i] for i in order]


def test_direction_orients_the_axes() -> None:
    assert higher_is_worse("higher = riskier") and higher_is_worse("higher = more loss")
    assert not higher_is_worse("higher = safer") and not higher_is_worse("higher = less loss")
    with pytest.raises(ValueError, match="unknown direction 'up'"):
        higher_is_worse("up")


# -- evaluate_many -------------------------------------------------------------------------------


def test_evaluate_many_prepares_once_and_equals_independent_evaluations(registry) -> None:
    orig, variants = toy_data()
    MinClass.prepared.clear()
    multi = evaluate_many(orig, variants, MEASURES, registry=registry, seed=4)
    assert len(MinClass.prepared) == 1
    assert [r.variant for r in multi.variants] == list(variants)
    for name, frame in variants.items():
        alone = evaluate(orig, frame, MEASURES, registry=registry, seed=4).to_dict()
        mine = multi[name].to_dict()
        assert mine.pop("variant") == name and alone.pop("variant") is None
        # a single release is the one unnamed variant: its report says where it ran
        assert alone.pop("engine") == {"name": "local", "address": None, "workers": 1}
        assert mine.pop("engine") is None  # the multi-variant report's engine covers it
        for d in (alone, mine):
            for m in d["measures"]:
                m.pop("seconds")
        assert mine == alone
    assert len(MinClass.prepared) == 1 + len(variants)
    assert multi.inputs["original"]["rows"] == 400


def test_risk_utility_table_with_higher_is_safer_risk(registry) -> None:
    orig, variants = toy_data()
    multi = evaluate_many(orig, variants, MEASURES, registry=registry)
    ru = multi.risk_utility
    assert ru is not None and (ru.risk, ru.loss) == ("MinClass", "Classes")
    assert ru.risk_direction == "higher = safer"
    # hand check: brute-force group sizes per variant; risk = -min size (higher is safer),
    # loss = classes lost; Pareto = not beaten on both by another variant
    rows = {}
    n_orig = orig.groupby(["a", "b"]).ngroups
    for name, frame in variants.items():
        sizes = frame.groupby(["a", "b"]).size()
        rows[name] = (float(sizes.min()), float(n_orig - len(sizes)))
    assert {p.variant: (p.risk, p.loss) for p in ru.points} == rows
    expected = {name for name, (k, lost) in rows.items()
                if not any(k2 >= k and l2 <= lost and (k2 > k or l2 < lost)
                           for k2, l2 in rows.values())}
    assert set(ru.pareto_variants) == expected
    # a//1 loses nothing (the best loss): always optimal; b* keeps 40 a-values only
    assert "a//1" in expected
    assert "risk-utility (* = Pareto-optimal)" in multi.summary()


def test_failed_measure_takes_no_part_in_pareto(registry) -> None:
    orig, variants = toy_data()
    variants["no_b"] = orig.drop(columns=["b"])
    multi = evaluate_many(orig, variants, [{"name": "MinClass", "params": {"qi": ["a"]}},
                                           {"name": "Fragile"}], registry=registry)
    ru = multi.risk_utility
    assert ru is not None
    points = {p.variant: p for p in ru.points}
    assert points["no_b"].loss is None and points["no_b"].pareto is None
    assert all(p.pareto is not None for v, p in points.items() if v != "no_b")


def test_explicit_and_missing_risk_utility_choice(registry) -> None:
    orig, variants = toy_data()
    measures = [*MEASURES, {"name": "Fragile", "label": "levels"}]
    multi = evaluate_many(orig, variants, measures, registry=registry,
                          ru_map=("MinClass", "levels"))
    assert multi.risk_utility is not None and multi.risk_utility.loss == "levels"
    only_risk = evaluate_many(orig, variants, MEASURES[:1], registry=registry)
    assert only_risk.risk_utility is None
    assert build_risk_utility([]) is None
    with pytest.raises(KeyError, match="no measure labelled 'nope'"):
        Evaluator(orig, MEASURES, registry=registry).evaluate_many(variants, ru_map=("nope",
                                                                                     "Classes"))


# -- config --------------------------------------------------------------------------------------


def write_toy_config(tmp_path: Path, report: Any = None) -> dict[str, Any]:
    orig, variants = toy_data()
    orig.to_csv(tmp_path / "orig.csv", index=False)
    for i, frame in enumerate(variants.values()):
        frame.to_csv(tmp_path / f"v{i}.csv", index=False)
    raw: dict[str, Any] = {
        "original": {"path": "orig.csv"},
        "anonymized": [{"name": n, "path": f"v{i}.csv"} for i, n in enumerate(variants)],
        "measures": [*MEASURES, {"name": "Fragile", "label": "levels"}],
    }
    if report is not None:
        raw["report"] = report
    return raw


def test_config_report_section_is_validated(registry, tmp_path: Path) -> None:
    bad = write_toy_config(tmp_path, {"ru_map": {"risk": "Classes", "loss": "Nope"}})
    with pytest.raises(ConfigError) as err:
        validate_config(bad, tmp_path, registry)
    problems = dict(err.value.problems)
    assert problems["report.ru_map.risk"] == ("'Classes' is not the label of a risk measure; "
                                              "allowed: MinClass")
    assert problems["report.ru_map.loss"] == ("'Nope' is not the label of a loss measure; "
                                              "allowed: Classes, levels")
    extra = write_toy_config(tmp_path, {"ru_map": {"risk": "MinClass"}, "colour": 1})
    with pytest.raises(ConfigError) as err:
        validate_config(extra, tmp_path, registry)
    paths = [p for p, _ in err.value.problems]
    assert "report.colour" in paths and "report.ru_map.loss" in paths
    rows = write_toy_config(tmp_path, {"max_rows": 0})
    with pytest.raises(ConfigError, match=r"report\.max_rows"):
        validate_config(rows, tmp_path, registry)


def test_run_uses_the_configured_pair_and_cli_prints_the_table(registry, tmp_path: Path,
                                                               capsys) -> None:
    raw = write_toy_config(tmp_path, {"ru_map": {"risk": "MinClass", "loss": "levels"}})
    plan = validate_config(raw, tmp_path, registry)
    report = run_plan(plan)
    assert report.risk_utility is not None
    assert (report.risk_utility.risk, report.risk_utility.loss) == ("MinClass", "levels")
    here = Path(__file__).resolve()
    reg_file = tmp_path / "registry.json"
    reg_file.write_text(json.dumps({
        "risk_measure": {"MinClass": {"class": f"{here}:MinClass"}},
        "loss_measure": {"Classes": {"class": f"{here}:Classes"},
                         "Fragile": {"class": f"{here}:Fragile"}}}))
    raw["output"] = "out.json"
    (tmp_path / "c.json").write_text(json.dumps(raw))
    assert main(["run", str(tmp_path / "c.json"), "--registry", str(reg_file)]) == 0
    out = capsys.readouterr().out
    assert "risk-utility (* = Pareto-optimal):" in out
    saved = json.loads((tmp_path / "out.json").read_text())
    assert saved["risk_utility"]["loss"] == "levels"
    assert [p["variant"] for p in saved["risk_utility"]["points"]] == list(toy_data()[1])


# -- the adult benchmark: Pareto marks against a hand check ------------------------------------


@pytest.fixture(scope="module")
def adult(adult_variants, adult_benchmark, tmp_path_factory) -> tuple[Path, Path]:
    """The shipped benchmark config on variants generated into a temporary folder."""
    return adult_variants, adult_benchmark(tmp_path_factory.mktemp("adult_many"))


def test_adult_variants_are_generalized_and_suppressed(adult) -> None:
    folder, _ = adult
    manifest = json.loads((folder / "variants.json").read_text())
    original = pd.read_csv(ROOT / "examples/data/adult/adult.csv", sep=";", dtype=str)
    for name, spec in manifest.items():
        v = pd.read_parquet(folder / f"{name}.parquet")
        assert len(v) == len(original) and list(v.columns) == list(original.columns)
        assert (v[["occupation", "salary-class"]] == original[["occupation",
                                                               "salary-class"]]).all().all()
        sup = (v[QI] == "*").all(axis=1)
        assert int(sup.sum()) == spec["suppressed_records"]
        assert v[~sup].groupby(QI).size().min() >= spec["k"]
        # level 1 of age maps 39 → 35-39 (hierarchy row 39: 39;35-39;30-39;20-39;*)
        age = {1: "35-39", 2: "30-39", 3: "20-39"}[spec["levels"]["age"]]
        first = v.iloc[0]
        assert first["age"] in (age, "*")


def test_variant_generation_is_deterministic(adult, make_adult_variants, tmp_path: Path) -> None:
    folder, _ = adult
    make_adult_variants.main(["--out", str(tmp_path)])
    names = sorted(p.name for p in folder.iterdir() if p.suffix in (".parquet", ".json"))
    assert len(names) == 6 and sorted(p.name for p in tmp_path.iterdir()) == names
    for name in names:
        assert (tmp_path / name).read_bytes() == (folder / name).read_bytes()


def test_adult_pareto_marks_match_a_hand_check(adult) -> None:
    folder, cfg = adult
    report = run_plan(load_config(cfg))
    n = 30162
    hand: dict[str, tuple[float, float]] = {}
    for name in ("L1_k2", "L1_k5", "L2_k5", "L3_k10", "L4_k10"):
        v = pd.read_parquet(folder / f"{name}.parquet")
        sup = (v[QI] == "*").all(axis=1)
        f = v[~sup].groupby(QI).size().to_numpy()
        # KAnonymity(k=10): records in released classes smaller than 10, over all n records;
        # DM: Σ f² over released classes + n per suppressed record (ARX output semantics)
        hand[name] = (f[f < 10].sum() / n, float((f.astype(np.int64) ** 2).sum() + n * sup.sum()))
    got = {p.variant: (p.risk, p.loss) for p in report.risk_utility.points}
    for name, (risk, dm) in hand.items():
        assert got[name][0] == pytest.approx(risk, rel=1e-12)
        assert got[name][1] == dm
    # Hand check of the marks (risk, DM in millions):
    #   L1_k2 (0.0846, 27.43)  L1_k5 (0.0461, 62.48)  L2_k5 (0.0244, 44.12)
    #   L3_k10 (0, 74.13)      L4_k10 (0, 367.71)
    # L1_k5 is beaten by L2_k5 on both (0.0244 < 0.0461, 44.1 < 62.5); L4_k10 ties L3_k10 on
    # risk and has more loss. L1_k2 has the least loss, L3_k10 the least risk with the least
    # loss among risk 0, and nothing beats L2_k5 on both (only L1_k2 has less loss, with more
    # risk; only L3_k10/L4_k10 less risk, with more loss).
    assert round(hand["L1_k5"][0], 4) == 0.0461 and round(hand["L2_k5"][1] / 1e6, 2) == 44.12
    marks = {p.variant: p.pareto for p in report.risk_utility.points}
    assert marks == {"L1_k2": True, "L1_k5": False, "L2_k5": True, "L3_k10": True,
                     "L4_k10": False}


def test_reports_write_their_html_page_and_draw_the_ru_map(registry, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    import re

    from anoneval.core.report.html import render_html

    orig, variants = toy_data()
    multi = evaluate_many(orig, variants, MEASURES, registry=registry)
    multi.to_html(tmp_path / "many.html", registry=registry)
    page = (tmp_path / "many.html").read_text(encoding="utf-8")
    stamp = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")
    assert stamp.sub("T", page) == stamp.sub("T", render_html(multi, registry=registry))
    assert "ru-section" in page and all(name in page for name in variants)
    one = multi["a//2"]
    one.to_html(tmp_path / "one.html", registry=registry)
    assert stamp.sub("T", (tmp_path / "one.html").read_text(encoding="utf-8")) == stamp.sub(
        "T", render_html(one, registry=registry))
    fig = multi.risk_utility_figure(registry)
    ax = fig.axes[0]
    # MinClass: higher = safer, so its axis is reversed; Classes: higher = more loss
    assert "MinClass" in ax.get_xlabel() and "axis reversed" in ax.get_xlabel()
    assert "Classes" in ax.get_ylabel() and "reversed" not in ax.get_ylabel()
    drawn = np.concatenate([c.get_offsets() for c in ax.collections])
    assert sorted(map(tuple, drawn.tolist())) == sorted(
        (p.risk, p.loss) for p in multi.risk_utility.points)
    import matplotlib.pyplot as plt

    plt.close(fig)
    no_ru = evaluate_many(orig, {"x": orig}, MEASURES[:1], registry=registry)
    with pytest.raises(ValueError, match="no risk–utility table"):
        no_ru.risk_utility_figure(registry)

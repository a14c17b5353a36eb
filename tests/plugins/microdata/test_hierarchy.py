"""Tests of the hierarchy helpers: reading ARX hierarchies, level detection, generalization.

Oracles: ARX's 7-row example hierarchies (tests/data/microdata/arx7_*.csv) and adult's
hierarchies (examples/data/adult), with the expected values read off the CSV files by eye.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anoneval.core.api import Microdata
from anoneval.core.errors import DataError
from anoneval.plugins.microdata._common import column
from anoneval.plugins.microdata._hierarchy import (
    HierarchyParams,
    detect_level,
    generalize,
    generalize_column,
    level_matrix,
    read_hierarchies,
    read_hierarchy,
    release_codes,
    release_levels,
)
from anoneval.plugins.reidentification.reidentification_risk import ReidentificationRisk

HERE = Path(__file__).resolve().parents[2] / "data" / "microdata"
ADULT = Path(__file__).resolve().parents[3] / "examples" / "data" / "adult"
ZIP = HERE / "arx7_zipcode.csv"
AGE = HERE / "arx7_age.csv"


def test_read_and_level_matrix():
    h = read_hierarchy(ZIP)
    assert h.height == 5
    occ = level_matrix(h)
    assert occ[h.values.get_loc("816**")].tolist() == [False, False, True, False, False, False]
    assert occ[h.values.get_loc("81667")].tolist() == [True] + [False] * 5


def test_detect_level():
    h = read_hierarchy(ZIP)
    assert detect_level(h, np.array(["816**", "819**"], dtype=object), "zip") == 2
    assert detect_level(h, np.array(["81667", "81931", "*"], dtype=object), "zip") == 0
    assert detect_level(h, np.array(["*"], dtype=object), "zip") == 5  # all suppressed: top
    with pytest.raises(DataError, match=r"column 'zip'.*'99999'.*no level"):
        detect_level(h, np.array(["816**", "99999"], dtype=object), "zip")
    with pytest.raises(DataError, match=r"column 'zip'.*no common level"):
        detect_level(h, np.array(["816**", "8193*"], dtype=object), "zip")


def test_detect_level_adult_age():
    h = read_hierarchy(ADULT / "adult_hierarchy_age.csv")  # 1;0-4;0-9;0-19;*
    assert h.height == 4
    assert detect_level(h, np.array(["0-4", "35-39"], dtype=object), "age") == 1
    assert detect_level(h, np.array(["20-39", "40-59"], dtype=object), "age") == 3


def test_generalize_values_and_missing_value_error():
    h = read_hierarchy(AGE)
    assert generalize(h, np.array(["34", "70", "45"], dtype=object), 1, "age").tolist() == [
        "<50", ">=50", "<50"]
    with pytest.raises(DataError, match=r"column 'age'.*'99'"):
        generalize(h, np.array(["34", "99"], dtype=object), 1, "age")
    with pytest.raises(DataError, match=r"level 3 outside 0\.\.2"):
        generalize(h, np.array(["34"], dtype=object), 3, "age")


def test_generalize_column_codes_and_release_codes():
    raw = Microdata(pd.DataFrame({"age": [34, 45, 66, 70, 34, 70, 45, "*"]}))
    h = read_hierarchy(AGE)
    gen = generalize_column(raw, "age", h, 1)
    assert gen.texts[gen.codes].tolist() == ["<50", "<50", ">=50", ">=50", "<50", ">=50", "<50",
                                             "*"]
    assert gen.texts[gen.token] == "*"
    rel = Microdata(pd.DataFrame({"age": [">=50", "*", ">=50"]}))
    rc = column(rel, "age", "*", "value")
    codes = release_codes(gen, rc)
    # <50 is absent from the release (-1); >=50 and * take the release's codes
    expect = [-1, -1, 0, 0, -1, 0, -1, 1]
    assert codes.tolist() == expect
    assert generalize_column(raw, "age", None, 0).codes.tolist() == column(
        raw, "age", "*", "value").codes.tolist()


def test_release_levels_detected_and_given():
    hs = read_hierarchies({"age": AGE, "zipcode": ZIP})
    rel = Microdata(pd.DataFrame({"age": ["<50", "*", ">=50"], "zipcode": ["816**", "*", "819**"],
                                  "sex": ["m", "*", "f"]}))
    qi = ["age", "zipcode", "sex"]
    assert release_levels(rel, qi, hs) == {"age": 1, "zipcode": 2, "sex": 0}
    assert release_levels(rel, qi, hs, {"zipcode": 2}) == {"age": 1, "zipcode": 2, "sex": 0}
    with pytest.raises(DataError, match=r"column 'zipcode'.*'816\*\*' is not at level 3"):
        release_levels(rel, qi, hs, {"zipcode": 3})
    with pytest.raises(DataError, match=r"level 9 outside"):
        release_levels(rel, qi, hs, {"zipcode": 9})


def test_bad_hierarchies(tmp_path):
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("a;x;*\nb;*\n")
    with pytest.raises(DataError, match="row 2 has 2 columns"):
        read_hierarchy(ragged)
    not_tree = tmp_path / "not_tree.csv"
    not_tree.write_text("a;x;*\nb;x;y\n")  # x generalizes to * and to y
    with pytest.raises(DataError, match=r"'x' at level 1 generalizes to several"):
        read_hierarchy(not_tree)
    with pytest.raises(DataError, match=r"hierarchy of column 'q'.*cannot read"):
        read_hierarchies({"q": tmp_path / "absent.csv"})


def test_params():
    p = HierarchyParams(quasi_identifiers=["a"], hierarchies={"a": "h.csv"}, levels={"a": 1})
    assert p.levels == {"a": 1}
    with pytest.raises(ValueError, match="no hierarchy"):
        HierarchyParams(quasi_identifiers=["a"], levels={"a": 1})


def test_contradicting_rows_are_refused_naming_file_and_rows(tmp_path):
    # issue 23: Male at level 0 of row 1 and at level 1 of row 2 (a release "Female" could be
    # raw or generalized): accepted before, and a generalized release was scored as raw
    bad = tmp_path / "h_sex.csv"
    bad.write_text("Male;Female;*\nFemale;Male;*\n")
    with pytest.raises(DataError, match=r"h_sex\.csv: rows 1 and 2 contradict each other: "
                                        r"'Male' is a level-0 value of row 1"):
        read_hierarchy(bad)
    with pytest.raises(DataError, match=r"hierarchy of column 'sex'.*rows 1 and 2 contradict"):
        read_hierarchies({"sex": bad})
    # a value kept at a higher level as the same, growing group is fine
    grows = tmp_path / "grows.csv"
    grows.write_text("Male;Male;*\nOther;Male;*\nFemale;Female;*\n")
    assert read_hierarchy(grows).height == 2
    # but not when the raw value's own row leaves the group its name has at a higher level
    leaves = tmp_path / "leaves.csv"
    leaves.write_text("a;b;*\nb;x;*\n")
    with pytest.raises(DataError, match=r"rows 2 and 1 contradict each other: 'b' is a "
                                        r"level-0 value of row 2 \(which generalizes to 'x'"):
        read_hierarchy(leaves)


def test_prosecutor_refuses_levels_and_population():
    with pytest.raises(ValueError, match=r"levels apply to the journalist and marketer"):
        ReidentificationRisk.Params(quasi_identifiers=["a"], hierarchies={"a": "h.csv"},
                                    levels={"a": 1})
    with pytest.raises(ValueError, match=r"population apply to the journalist"):
        ReidentificationRisk.Params(quasi_identifiers=["a"], population="pop.csv")
    ok = ReidentificationRisk.Params(quasi_identifiers=["a"], hierarchies={"a": "h.csv"},
                                     levels={"a": 1}, attacker="journalist")
    assert ok.levels == {"a": 1}

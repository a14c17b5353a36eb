"""Make ``synthcity_privacy.json``: synthcity's IdentifiabilityScore and DOMIAS (KDE) on the
shared files (``original.csv``, ``released.csv``, ``control.csv``).

Run once in a throwaway environment; the test suite only reads the JSON. Made with Python
3.11.7, the CPU build of torch 2.13.0 (``pip install torch==2.13.0``), then ``pip install
synthcity`` constrained to that torch (pip settles on synthcity 0.2.4, whose pins allow it)
and ``pip install --no-deps synthcity==0.2.12`` over it (0.2.12 pins torch < 2.3; its metrics
run unchanged on 2.13). PyPI's torchvision does not load beside the CPU torch (``operator
torchvision::nms does not exist``); synthcity imports it only for image data loaders, so a
stub stands in for it here; numpy 2.4 and scipy 1.17 lack ``trapz``, which synthcity's
survival metrics import, so ``trapezoid`` stands in (:func:`shim_trapz`). Versions are
recorded in the JSON.

- ``identifiability``: ``Metrics.evaluate``'s encoding (categories and numbers with fewer than
  15 distinct values over both sides label-encoded on the union of the two sides), then
  ``IdentifiabilityScore._compute_scores`` (key ``score``; not ``score_OC``, which trains a
  one-class network). Three cases: the six shared columns; the three numbers; the six plus
  ``hours10`` = hours rounded to tens (a number with few distinct values, which synthcity
  label-encodes).
- ``domias``: ``DomiasMIAKDE._evaluate`` on the three numbers (KDE is affine invariant, so no
  encoding question arises): members ``original[:300]``, ``X_gt`` = ``control[:600]`` (its
  first 300 the non-members, its last 300 the reference sample), the release all 1,000 rows.

    python tests/data/synthetic/run_synthcity_privacy.py
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import json
import sys
import types
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
OUT = HERE / "synthcity_privacy.json"


class _Stub(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds every ``torchvision`` module as an empty package whose attributes are dummy
    classes: what synthcity's import chain (fastai, tsai) asks of torchvision at load time."""

    def find_spec(self, name, path=None, target=None):
        if name == "torchvision" or name.startswith("torchvision."):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__ = []  # type: ignore[attr-defined]
        module.__file__ = __file__

        def dummy(attr: str) -> type:
            if attr.startswith("__"):
                raise AttributeError(attr)
            return type(attr, (), {})

        module.__getattr__ = dummy  # type: ignore[attr-defined]
        return module

    def exec_module(self, module):
        return None


def stub_torchvision() -> None:
    try:
        import torchvision  # noqa: F401
    except Exception:
        for name in [m for m in sys.modules if m.startswith("torchvision")]:
            del sys.modules[name]
        sys.meta_path.insert(0, _Stub())


def shim_trapz() -> None:
    """numpy 2.4 and scipy 1.17 dropped ``trapz`` (now ``trapezoid``), which synthcity's
    survival-analysis metrics import at load time; they are not used here."""
    import scipy.integrate

    for module in (np, scipy.integrate):
        if not hasattr(module, "trapz"):
            module.trapz = module.trapezoid  # type: ignore[attr-defined]


def main() -> None:
    stub_torchvision()
    shim_trapz()
    from synthcity.metrics.eval_privacy import DomiasMIAKDE, IdentifiabilityScore
    from synthcity.plugins.core.dataloader import GenericDataLoader, create_from_info

    ori, syn, ctl = (pd.read_csv(HERE / f"{n}.csv") for n in ("original", "released",
                                                              "control"))
    for f in (ori, syn):
        f["hours10"] = (f["hours"] / 10).round() * 10
    base = ["age", "income", "hours", "job", "region", "smoker"]
    cases = {"all": base, "numbers": ["age", "income", "hours"], "hours10": [*base, "hours10"]}
    ident = {}
    for case, cols in cases.items():
        x, y = GenericDataLoader(ori[cols]), GenericDataLoader(syn[cols])
        # Metrics.evaluate's encoding: encoders fitted on both sides, applied to each
        both = create_from_info(pd.concat([x.dataframe(), y.dataframe()]), x.info())
        _, encoders = both.encode()
        xe, ye = x.encode(encoders)[0], y.encode(encoders)[0]
        score = IdentifiabilityScore(use_cache=False)._compute_scores(xe, ye)["score"]
        ident[case] = {"columns": cols, "score": float(score),
                       "label_encoded": sorted(encoders)}
    nums = ["age", "income", "hours"]
    dom = DomiasMIAKDE(use_cache=False)._evaluate(
        GenericDataLoader(ctl[nums].iloc[:600].reset_index(drop=True)),
        GenericDataLoader(syn[nums]).dataframe(),
        GenericDataLoader(ori[nums].iloc[:300].reset_index(drop=True)),
        GenericDataLoader(syn[nums]).dataframe(), reference_size=300)
    OUT.write_text(json.dumps({
        "made_with": {p: version(p) for p in ("synthcity", "torch", "numpy", "scipy",
                                              "scikit-learn", "pandas")}
        | {"python": sys.version.split()[0]},
        "identifiability": ident,
        "domias": {"columns": nums, "members": "original[:300]", "non_members": "control[:300]",
                   "reference": "control[300:600]", "released": "released (all rows)",
                   "aucroc": float(dom["aucroc"]), "accuracy": float(dom["accuracy"])},
    }, indent=1) + "\n")
    print(OUT.read_text())


if __name__ == "__main__":
    np.random.seed(0)
    main()

"""The architecture's run: tasks 1-16 and the six decision nodes (Pflughoeft et al. 2022)."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from anoneval.core.api import (
    ConfigError,
    Context,
    DataError,
    Microdata,
    load,
)
from anoneval.core.data.kinds import unify_kinds
from anoneval.core.report.jsonable import to_jsonable
from anoneval.plugins.workflows.architecture.config import (
    NODE_TASK,
    TASKS,
    ArchitectureConfig,
    DataSpec,
    check_paths,
    load_architecture_config,
    synthesizer_class,
)
from anoneval.plugins.workflows.architecture.model import ModelView

# ---------------------------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------------------------


@dataclass
class Node:
    node: int
    passed: bool
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "task": NODE_TASK[self.node], "passed": self.passed,
                "reason": self.reason}


class Architecture:
    """One run of tasks 1-16; :meth:`run` returns the report as a dict."""

    def __init__(self, config: ArchitectureConfig, base_dir: Path, registry: Any = None,
                 show_progress: bool = False, plots: bool | None = None) -> None:
        from anoneval.registry import default_registry

        check_paths(config, base_dir, registry=registry)
        self.cfg = config
        self.base = base_dir
        self.registry = registry or default_registry()
        self.show_progress = show_progress
        self.plots_dir = (self._path(config.output.plots)
                          if config.output.plots is not None and plots is not False else None)
        if self.plots_dir is not None:
            from anoneval.core.report.plots import require_matplotlib

            require_matplotlib()
        self.tasks: dict[int, dict[str, Any]] = {}
        self.nodes: list[Node] = []
        self.warnings: list[str] = []
        self.attempts: list[dict[str, Any]] = []
        self.moments: list[str] = list(config.moments)

    def _path(self, value: str) -> Path:
        p = Path(value)
        return p if p.is_absolute() else self.base / p

    # -- setup ------------------------------------------------------------------------------

    def _synthesizer(self, columns: list[str]) -> Any:
        from anoneval.core.run.config import validate_params

        ref = self.cfg.synthesizer
        cls = synthesizer_class(ref, self.registry)
        for key in ("columns", "transform", "n"):
            if key in ref.params:
                raise ConfigError([(f"synthesizer.params.{key}",
                                    f"set {key!r} at the top level of the architecture config "
                                    f"(it is shared by the model and every inspection)"
                                    if key != "n" else "the replica has as many rows as the "
                                    "actual data; remove 'n'")])
        params = {**ref.params, "columns": columns, "transform": self.cfg.transform}
        problems: list[tuple[str, str]] = []
        synth = validate_params(cls, params, "synthesizer.params", self.registry, problems)
        if problems or synth is None:
            raise ConfigError(problems)
        return synth

    def _generate(self, synth: Any, data: Microdata, seed: int, n: int | None = None) -> Any:
        if n is not None:
            synth = type(synth)(synth.params, n=n)
        ctx = Context(seed=seed, registry=self.registry, base_dir=self.base,
                      show_progress=self.show_progress)
        result = synth.generate(data, ctx)
        self.warnings += [f"{synth.name} (seed {seed}): {w}" for w in
                          [*result.warnings, *ctx.warnings]]
        return result

    # -- grids ------------------------------------------------------------------------------

    def _axes(self, arrays: Sequence[np.ndarray], cols: Sequence[int]) -> list[np.ndarray]:
        """Grid over the data ± 3 sd per dimension (the supports of eq. 21)."""
        from anoneval.plugins._shared.continuous import grid_axes
        from anoneval.plugins.fidelity.kl_divergence import DEFAULT_GRID

        cols = list(cols)
        allx = np.concatenate([a[:, cols] for a in arrays])
        sd = arrays[0][:, cols].std(axis=0, ddof=1)
        points = self.cfg.grid or DEFAULT_GRID[len(cols)]
        return grid_axes(allx.min(axis=0) - 3 * sd, allx.max(axis=0) + 3 * sd, points)

    def _kde_probs(self, X: np.ndarray, cols: Sequence[int], axes: Sequence[np.ndarray]
                   ) -> np.ndarray:
        from anoneval.plugins._shared.continuous import (
            grid_probabilities,
            kde_on_grid,
            rule_of_thumb_bandwidth,
        )

        x = X[:, list(cols)]
        return grid_probabilities(kde_on_grid(x, rule_of_thumb_bandwidth(x), axes), axes)

    def _grid_moments(self, X: np.ndarray, columns: list[str]) -> list[dict[str, Any]]:
        """θ̃_j of the kernel density on 1-D (per column) or 2-D (per pair) grids, eq. (24)."""
        from anoneval.plugins.fidelity.moment_discrepancy import moment_targets, moment_terms

        out = []
        cache: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {}
        for moment, cols in moment_targets(self.moments, len(columns), columns):
            if cols not in cache:
                axes = self._axes([X], cols)
                P = self._kde_probs(X, cols, axes)
                mesh = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1)
                cache[cols] = (mesh.reshape(-1, len(cols)), P.reshape(-1))
            pts, w = cache[cols]
            local = tuple(range(len(cols)))
            names = [columns[j] for j in cols]
            t = moment_terms(moment, pts, local, names, "kernel-grid", weights=w)
            out.append({"moment": moment, "columns": " × ".join(names), "value": float(w @ t)})
        return out

    def _data_moments(self, X: np.ndarray, columns: list[str]
                      ) -> list[tuple[dict[str, Any], np.ndarray]]:
        """θ_j = (1/n)·Σ T_j(x_i) (eq. 2) and the terms (for standard errors)."""
        from anoneval.plugins.fidelity.moment_discrepancy import moment_targets, moment_terms

        out = []
        for moment, cols in moment_targets(self.moments, len(columns), columns):
            t = moment_terms(moment, X, cols, columns, "actual")
            out.append(({"moment": moment, "columns": " × ".join(columns[j] for j in cols),
                         "value": float(t.mean())}, t))
        return out

    def _model_view(self, details: dict[str, Any], columns: list[str], synth: Any,
                    data: Microdata, fitted: Any, seed: int, data_X: np.ndarray | None = None
                    ) -> ModelView:
        """f* from a synthesizer's details (normal, logistic) or a large draw from it.

        With ``data_X`` (the replica, for f**), the closed-form families are refitted to it on
        the actual's scale as the synthesizer fits them; other models are refitted by running
        the synthesizer on ``data``.
        """
        from anoneval.plugins._shared.continuous import forward

        par = details.get("parameters", {}) if isinstance(details, dict) else {}
        ddof = int(getattr(synth.params, "ddof", 0) or 0)
        if "covariance" in par and "mean" in par:
            if data_X is not None:
                return ModelView("normal", columns, mean=data_X.mean(axis=0),
                                 cov=np.atleast_2d(np.cov(data_X, rowvar=False, ddof=ddof)))
            return ModelView("normal", columns,
                             mean=np.array([par["mean"][c] for c in columns], dtype=float),
                             cov=np.atleast_2d(np.asarray(par["covariance"], dtype=float)))
        if "location" in par and "scale" in par:
            if data_X is not None:
                from anoneval.plugins.synthesizers import _logistic

                loc, scale = _logistic.fit_moments(data_X, ddof)
                if getattr(synth.params, "fit", "moments") == "ml":
                    loc, scale, _ = _logistic.fit_ml(data_X, (loc, scale), columns)
                return ModelView("logistic", columns, loc=np.asarray(loc),
                                 scale=np.asarray(scale))
            return ModelView("logistic", columns,
                             loc=np.array([par["location"][c] for c in columns], dtype=float),
                             scale=np.array([par["scale"][c] for c in columns], dtype=float))
        big = self._generate(synth, data, seed + 7919, n=self.cfg.model_sample)
        S, _ = forward(big.data.frame, columns, fitted)
        return ModelView("sampled", columns, sample=S)

    # -- the plan ---------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        """Tasks 1-16 in order, stopping at the first failing node of tasks 1-9; tasks 10-16
        are repeated on a new replica (up to ``max_attempts``) until nodes 3-6 pass."""
        started = time.perf_counter()
        actual, columns = self._load()
        synth = self._synthesizer(columns)
        self._choose_moments(columns)
        self._explore(actual, columns)
        X, fitted = self._transform(actual, columns)
        self._task(3, {"moments": self.moments, "synthesizer": synth.name})
        self._bandwidths(X, columns)
        if not self._kernel_moments(X, columns).passed:
            return self._finish(started, None, columns, X, fitted, None, None)
        first, model = self._fit_model(synth, actual, columns, fitted)
        if not self._model_fit(X, columns, model).passed:
            return self._finish(started, None, columns, X, fitted, model, None)
        replica, Y, replica_model = self._release(first, synth, actual, X, columns, fitted,
                                                  model)
        return self._finish(started, replica, columns, X, fitted, model, Y, replica_model)

    def _load(self) -> tuple[Microdata, list[str]]:
        """The actual data (each column read as one kind) and its modelled columns."""
        from anoneval.plugins._shared.continuous import select_columns

        cfg = self.cfg
        spec = cfg.data if isinstance(cfg.data, DataSpec) else DataSpec(path=cfg.data)
        actual, notes = unify_kinds(load(self._path(spec.path), "microdata", spec.format,
                                         spec.options), "data")
        assert isinstance(actual, Microdata)
        self.warnings += notes
        return actual, select_columns(actual, cfg.columns, "architecture")

    def _choose_moments(self, columns: list[str]) -> None:
        """The information moments that apply to that many columns (pair moments need two)."""
        from anoneval.plugins.fidelity.moment_discrepancy import PAIR_MOMENTS

        cfg = self.cfg
        self.moments = [m for m in cfg.moments if len(columns) > 1 or m not in PAIR_MOMENTS]
        if not self.moments:
            raise ConfigError([("moments", f"{list(cfg.moments)} need two or more columns; "
                                           f"one column ({columns[0]!r}) is modelled")])
        if len(self.moments) < len(cfg.moments):
            self.warnings.append("pair moments (covariance, correlation) skipped: one column")

    def _explore(self, actual: Microdata, columns: list[str]) -> None:
        """Task 1: exploratory analysis of the raw data."""
        from scipy import stats

        raw = actual.frame[columns].to_numpy(dtype=float, na_value=np.nan)
        self._task(1, {"rows": len(raw), "columns": {
            c: {"mean": float(np.nanmean(raw[:, j])), "sd": float(np.nanstd(raw[:, j], ddof=1)),
                "min": float(np.nanmin(raw[:, j])), "median": float(np.nanmedian(raw[:, j])),
                "max": float(np.nanmax(raw[:, j])),
                "skewness": float(stats.skew(raw[:, j], nan_policy="omit"))}
            for j, c in enumerate(columns)}})

    def _transform(self, actual: Microdata, columns: list[str]) -> tuple[np.ndarray, Any]:
        """Task 2: the transformation to the modelling scale."""
        from scipy import stats

        from anoneval.plugins._shared.continuous import forward

        X, fitted = forward(actual.frame, columns, self.cfg.transform)
        self._task(2, {"transforms": [f.to_dict() for f in fitted],
                       "skewness_after": {c: float(stats.skew(X[:, j]))
                                          for j, c in enumerate(columns)}})
        return X, fitted

    def _bandwidths(self, X: np.ndarray, columns: list[str]) -> None:
        """Task 4: the kernel density's bandwidths (a constant column has nothing to model)."""
        from anoneval.plugins._shared.continuous import rule_of_thumb_bandwidth

        h = rule_of_thumb_bandwidth(X)
        zero = [c for c, v in zip(columns, h, strict=True) if not v > 0]
        if zero:
            raise DataError(f"column(s) {', '.join(map(repr, zero))} are constant on the "
                            f"transformed scale: nothing to model")
        self._task(4, {"kernel": "product Gaussian", "bandwidth_rule": "1.06·sd·n^(-1/5)",
                       "bandwidths": dict(zip(columns, h.tolist(), strict=True)),
                       "kernel_variance": {c: float(X[:, j].var() + h[j] ** 2)
                                           for j, c in enumerate(columns)}})

    def _kernel_moments(self, X: np.ndarray, columns: list[str]) -> Node:
        """Tasks 5-7: the data's and the kernel density's moments, and node 1 on them."""
        from anoneval.plugins.fidelity.moment_discrepancy import scaled_discrepancy

        thr = self.cfg.thresholds
        theta = self._data_moments(X, columns)
        theta_k = self._grid_moments(X, columns)
        rows1 = []
        for (t, terms), tk in zip(theta, theta_k, strict=True):
            disc = scaled_discrepancy(t["value"], tk["value"], thr.kde_moment_kind,
                                      sd=float(terms.std()))
            rows1.append({"moment": t["moment"], "columns": t["columns"], "data": t["value"],
                          "kernel": tk["value"], "discrepancy": disc,
                          "passed": disc <= thr.kde_moment_tolerance})
        self._task(5, {"theta": [t for t, _ in theta]})
        self._task(6, {"theta_kernel": theta_k})
        bad = [f"{r['moment']} of {r['columns']}" for r in rows1 if not r["passed"]]
        node1 = Node(1, not bad, "every kernel moment within tolerance" if not bad else
                     f"kernel density f̃ does not keep {', '.join(bad)} "
                     f"({thr.kde_moment_kind} discrepancy > {thr.kde_moment_tolerance}); "
                     f"revise the kernel (bandwidth, grid) or the transform")
        self._task(7, {"moments": rows1}, node1)
        return node1

    def _fit_model(self, synth: Any, actual: Microdata, columns: list[str], fitted: Any
                   ) -> tuple[Any, ModelView]:
        """Task 8: the ME model f* (its first draw is the first replica)."""
        first = self._generate(synth, actual, self.cfg.seed)
        model = self._model_view(first.details, columns, synth, actual, fitted, self.cfg.seed)
        self._task(8, {"model": model.kind, "parameters": model.parameters(),
                       "synthesizer_details": _without_big(first.details)})
        return first, model

    def _model_fit(self, X: np.ndarray, columns: list[str], model: ModelView) -> Node:
        """Task 9 and node 2: K(f̃ : f*), jointly up to three columns, else per pair (the
        worst pair judged), and per column."""
        from anoneval.plugins._shared.continuous import (
            divergence_summary,
            grid_entropy,
            grid_kl,
            log_grid_probabilities,
        )

        thr, d = self.cfg.thresholds, len(columns)
        joint_cols = list(range(d)) if d <= 3 else None
        kl9: dict[str, Any] = {}
        targets = ([("joint", joint_cols)] if joint_cols is not None else
                   [(f"{columns[a]} × {columns[b]}", [a, b]) for a in range(d)
                    for b in range(a + 1, d)])
        if d > 1:
            targets += [(c, [j]) for j, c in enumerate(columns)]
        for label, cols in targets:
            axes = self._axes([X], cols)
            P = self._kde_probs(X, cols, axes)
            logq = log_grid_probabilities(model.logpdf(axes, cols), axes)
            k = grid_kl(P, logq)
            kl9[label] = {**divergence_summary(k), "entropy_kernel": grid_entropy(P, axes),
                          "entropy_model": grid_entropy(np.exp(logq), axes)}
        head = targets[0][0] if joint_cols is not None or d == 1 else max(
            (lab for lab, c in targets if len(c) == 2), key=lambda lab: kl9[lab]["kl"])
        k9 = kl9[head]["kl"]
        node2 = Node(2, k9 <= thr.model_kl,
                     f"K(f̃ : f*) = {k9:.4g} ≤ {thr.model_kl} ({head})" if k9 <= thr.model_kl
                     else f"the ME model does not fit the data: K(f̃ : f*) = {k9:.4g} > "
                          f"{thr.model_kl} ({head}); revise the transform or the information "
                          f"moments")
        self._task(9, {"divergences": kl9, "judged": head}, node2)
        return node2

    def _release(self, first: Any, synth: Any, actual: Microdata, X: np.ndarray,
                 columns: list[str], fitted: Any, model: ModelView
                 ) -> tuple[pd.DataFrame | None, np.ndarray | None, ModelView | None]:
        """Tasks 10-16 on the first replica, then on new ones until nodes 3-6 pass or
        ``max_attempts`` are spent: (the released replica or None, the last replica on the
        transformed scale, its ME model)."""
        cfg = self.cfg
        attempts = []
        replica = None
        Y = None
        replica_model = None
        for attempt in range(cfg.max_attempts):
            seed = cfg.seed + attempt
            for k in range(10, 17):  # the report shows the last attempt's tasks 10-16
                self.tasks.pop(k, None)
            result = first if attempt == 0 else self._generate(synth, actual, seed)
            out, Y, replica_model = self._inspect_replica(result, X, columns, fitted, synth,
                                                          model, seed)
            attempts.append({"attempt": attempt + 1, "seed": seed,
                             "nodes": [n.to_dict() for n in out]})
            if all(n.passed for n in out):
                replica = result.data.frame
                break
        for n in attempts[-1]["nodes"]:
            self.nodes.append(Node(n["node"], n["passed"], n["reason"]))
        self.attempts = attempts
        if replica is None:
            self.warnings.append(f"no replica passed nodes 3-6 in {cfg.max_attempts} attempts")
        return replica, Y, replica_model

    def _inspect_replica(self, result: Any, X: np.ndarray, columns: list[str], fitted: Any,
                         synth: Any, model: ModelView, seed: int
                         ) -> tuple[list[Node], np.ndarray | None, ModelView | None]:
        """Tasks 10-16 for one replica; stops at the first failing node."""
        from anoneval.plugins._shared.continuous import forward

        nodes: list[Node] = []
        try:  # Task 10
            Y, _ = forward(result.data.frame, columns, fitted)
        except DataError as exc:
            self._task(10, {"seed": seed, "error": str(exc)})
            nodes.append(Node(3, False, f"the replica cannot be put on the transformed scale: "
                                        f"{exc}"))
            return nodes, None, None
        self._task(10, {"seed": seed, "rows": len(Y),
                        "replica_mean": dict(zip(columns, Y.mean(axis=0).tolist(),
                                                 strict=True))})
        for check in (self._energy_test, self._close_pairs, self._replica_moments):
            nodes.append(check(X, Y, columns, seed))
            if not nodes[-1].passed:
                return nodes, Y, None
        rmodel = self._replica_model(result, columns, synth, fitted, seed, Y)
        nodes.append(self._model_drift(X, Y, columns, model, rmodel))
        return nodes, Y, rmodel

    def _energy_test(self, X: np.ndarray, Y: np.ndarray, columns: list[str],
                     seed: int) -> Node:
        """Task 11 and node 3: the energy test of replica against actual, jointly and per
        column."""
        from anoneval.plugins.fidelity.energy_statistic import energy_statistic, energy_summary

        cfg, thr, d = self.cfg, self.cfg.thresholds, len(columns)
        rng = Context(seed=seed).rng(11)
        energy = {}
        targets = [("joint", list(range(d)))] + ([(c, [j]) for j, c in enumerate(columns)]
                                                 if d > 1 else [])
        for label, cols in targets:
            energy[label] = energy_summary(
                energy_statistic(X[:, cols], Y[:, cols], cfg.energy_resamples, rng))
        low = [lab for lab, e in energy.items()
               if e["pvalue"] is not None and thr.energy_alpha > 0
               and e["pvalue"] < thr.energy_alpha]
        too_big = thr.energy_max is not None and energy["joint"]["statistic"] > thr.energy_max
        ok3 = not low and not too_big
        reason = ("energy test does not reject (p ≥ α)" if ok3 else
                  f"the replica differs from the actual data: energy-test p-value < "
                  f"{thr.energy_alpha} for {', '.join(low)}" if low else
                  f"E(x, x*) = {energy['joint']['statistic']:.4g} > {thr.energy_max}")
        node = Node(3, ok3, reason)
        self._task(11, {"energy": energy}, node)
        return node

    def _close_pairs(self, X: np.ndarray, Y: np.ndarray, columns: list[str],
                     seed: int) -> Node:
        """Task 12 and node 4: the share of close actual-replica pairs, and DCR."""
        from anoneval.plugins._shared.continuous import scale_pair
        from anoneval.plugins.similarity.close_pairs import close_pair_count
        from anoneval.plugins.similarity.distance_to_closest_record import dcr_share

        thr, d = self.cfg.thresholds, len(columns)
        n, m = len(X), len(Y)
        pi = close_pair_count(X, Y, thr.close_pairs_d0) / (n * m)
        per = ({c: close_pair_count(X[:, [j]], Y[:, [j]], thr.close_pairs_d0) / (n * m)
                for j, c in enumerate(columns)} if d > 1 else {})
        # DistanceToClosestRecord's value (standardized, 5th percentile); task 4 already
        # rejected constant columns, so every sd is positive
        dcr = dcr_share(*scale_pair(X, Y, "std", columns)[:2])[0]
        ok4 = pi < thr.close_pairs_epsilon and (thr.dcr_max is None or dcr <= thr.dcr_max)
        reason = (f"π_d = {pi:.4g} < {thr.close_pairs_epsilon}" if ok4 else
                  f"replica points sit on actual points: π_d = {pi:.4g} ≥ "
                  f"{thr.close_pairs_epsilon} (d0 = {thr.close_pairs_d0})"
                  if pi >= thr.close_pairs_epsilon else
                  f"replica rows too close to actual rows: DCR share {dcr:.4g} > {thr.dcr_max}")
        node = Node(4, ok4, reason)
        self._task(12, {"pi_d": pi, "columns": per, "d0": thr.close_pairs_d0,
                        "dcr_share": dcr}, node)
        return node

    def _replica_moments(self, X: np.ndarray, Y: np.ndarray, columns: list[str],
                         seed: int) -> Node:
        """Tasks 13-14 and node 5: the replica's information moments against the data's."""
        from anoneval.plugins.fidelity.moment_discrepancy import compare_moments

        thr = self.cfg.thresholds
        rows = compare_moments(X, Y, columns, self.moments, thr.moment_kind,
                               thr.moment_tolerance, ("actual", "replica"))
        self._task(13, {"theta_replica": [{k: r[k] for k in ("moment", "columns", "replica")}
                                          for r in rows]})
        bad = [f"{r['moment']} of {r['columns']}" for r in rows if not r["passed"]]
        node = Node(5, not bad, "every replica moment within tolerance" if not bad else
                    f"the replica does not keep {', '.join(bad)} ({thr.moment_kind} "
                    f"discrepancy > {thr.moment_tolerance})")
        self._task(14, {"moments": rows}, node)
        return node

    def _replica_model(self, result: Any, columns: list[str], synth: Any, fitted: Any,
                       seed: int, Y: np.ndarray) -> ModelView:
        """Task 15: the ME model f** of the replica."""
        rmodel = self._model_view(result.details, columns, synth, Microdata(result.data.frame),
                                  fitted, seed, data_X=Y)
        self._task(15, {"model": rmodel.kind, "parameters": rmodel.parameters()})
        return rmodel

    def _model_drift(self, X: np.ndarray, Y: np.ndarray, columns: list[str],
                     model: ModelView, rmodel: ModelView) -> Node:
        """Task 16 and node 6: K(f* : f**), and both models' mutual information."""
        from anoneval.plugins._shared.continuous import (
            divergence_summary,
            grid_kl,
            grid_mutual_information,
            information_summary,
            log_grid_probabilities,
            normal_kl,
        )

        thr, d = self.cfg.thresholds, len(columns)
        divs: dict[str, Any] = {}
        labels = [("joint", list(range(d)))] + ([(c, [j]) for j, c in enumerate(columns)]
                                                if d > 1 else [])
        for label, cols in labels:
            if model.kind == "normal" and rmodel.kind == "normal":
                assert model.mean is not None and model.cov is not None
                assert rmodel.mean is not None and rmodel.cov is not None
                ix = np.ix_(cols, cols)
                k = normal_kl(model.mean[cols], model.cov[ix], rmodel.mean[cols],
                              rmodel.cov[ix], [columns[j] for j in cols])
            elif len(cols) <= 3:
                axes = self._axes([X, Y], cols)
                P = np.exp(log_grid_probabilities(model.logpdf(axes, cols), axes))
                k = grid_kl(P, log_grid_probabilities(rmodel.logpdf(axes, cols), axes))
            else:
                continue
            divs[label] = divergence_summary(k)
        info: dict[str, Any] = {}
        if d > 1:
            for name, mv in (("actual_model", model), ("replica_model", rmodel)):
                def by_grid(mv: ModelView = mv) -> float:
                    if d > 3:
                        return float("nan")
                    axes = self._axes([X, Y], list(range(d)))
                    P = np.exp(log_grid_probabilities(mv.logpdf(axes, range(d)), axes))
                    return grid_mutual_information(P)
                info[name] = information_summary(mv.mutual_information(by_grid))
        head = "joint" if "joint" in divs else max(divs, key=lambda k: divs[k]["kl"])
        k16 = divs[head]["kl"]
        ok6 = k16 <= thr.replica_kl
        node = Node(6, ok6, f"K(f* : f**) = {k16:.4g} ≤ {thr.replica_kl}" if ok6 else
                    f"the replica's ME model drifts from the actual's: K(f* : f**) = "
                    f"{k16:.4g} > {thr.replica_kl}")
        self._task(16, {"divergences": divs, "information": info}, node)
        return node

    # -- report -----------------------------------------------------------------------------

    def _task(self, k: int, figures: dict[str, Any], node: Node | None = None) -> None:
        self.tasks[k] = {"task": k, "name": TASKS[k], "figures": figures,
                         "decision": node.to_dict() if node is not None else None}
        if node is not None and k <= 9:
            self.nodes.append(node)

    def _finish(self, started: float, replica: pd.DataFrame | None, columns: list[str],
                X: np.ndarray, fitted: Any, model: ModelView | None, Y: np.ndarray | None,
                replica_model: ModelView | None = None) -> dict[str, Any]:
        """The report: the release (written only when every node passed), the figures, and
        the tasks and nodes, written as JSON."""
        from anoneval.core.report.atomic import write_atomic

        failed = next((n for n in self.nodes if not n.passed), None)
        released = self._write_release(replica if failed is None else None)
        plots: dict[str, str] = {}
        if self.plots_dir is not None:
            from anoneval.plugins.workflows.architecture import plots as figs

            plots = figs.draw_all(self.plots_dir, self.cfg, columns, X, fitted, model, Y,
                                  replica_model, self._axes, self._kde_probs)
        report = {
            "status": "released" if released else "rejected",
            "released": released,
            "failed_node": failed.to_dict() if failed else None,
            "message": (f"released {released}" if released else
                        f"nothing released: node {failed.node} (task {NODE_TASK[failed.node]}) "
                        f"failed: {failed.reason}" if failed else "nothing released"),
            "synthesizer": self.cfg.synthesizer.model_dump(),
            "columns": columns, "seed": self.cfg.seed,
            "thresholds": self.cfg.thresholds.model_dump(),
            "nodes": [n.to_dict() for n in sorted(self.nodes, key=lambda n: n.node)],
            "attempts": self.attempts,
            "tasks": [self.tasks[k] for k in sorted(self.tasks)],
            "plots": plots,
            "warnings": self.warnings,
            "seconds": time.perf_counter() - started,
        }
        report = to_jsonable(report)
        write_atomic(self._path(self.cfg.output.report),
                     json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False))
        return report

    def _write_release(self, replica: pd.DataFrame | None) -> str | None:
        """Write the released replica (None: nothing released; an earlier release at the
        output path is left untouched, with a warning); its path."""
        from anoneval.core.report.atomic import write_frame_atomic

        path = self._path(self.cfg.output.released)
        if replica is not None:
            write_frame_atomic(replica, path)
            return str(path)
        if path.exists():
            self.warnings.append(f"nothing released; the existing {path} (from an "
                                 f"earlier run) was left untouched")
        return None


def _without_big(details: dict[str, Any]) -> dict[str, Any]:
    """The synthesizer's details without per-row arrays (kept out of the report)."""
    return {k: v for k, v in details.items()
            if not (isinstance(v, (list, np.ndarray)) and len(v) > 1000)}


def run_architecture(config: str | Path | dict[str, Any], *, registry: Any = None,
                     show_progress: bool = False, plots: bool | None = None) -> dict[str, Any]:
    """Run tasks 1-16 of a config (path or dict) and return the report (also written)."""
    cfg, base = load_architecture_config(config)
    return Architecture(cfg, base, registry, show_progress, plots).run()


def run_architectures(configs: Sequence[str | Path | dict[str, Any]], *, engine: Any = None,
                      plots: bool | None = None) -> list[dict[str, Any]]:
    """Run independent architecture configs (e.g. one per data set or seed), as tasks of
    ``engine`` (a name, an engine config dict or a ``distributed.Client``; default serial),
    with the default registry; the reports, in the configs' order, equal serial runs' apart
    from their ``seconds``. Configs writing the same output files must not run together."""
    from anoneval.core.run.engine import open_engine

    with open_engine(engine) as eng:
        return eng.map(_architecture_task, [(c, plots) for c in configs])


def _architecture_task(job: tuple[str | Path | dict[str, Any], bool | None]) -> dict[str, Any]:
    config, plots = job
    return run_architecture(config, plots=plots)

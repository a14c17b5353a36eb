"""Maximum-entropy densities on a grid, found through the convex dual for the multipliers λ.

Given information moments E[T_j(X)] = θ_j, j = 1…J, the ME density is
f(x) = C(λ)·exp(−Σ λ_j T_j(x)) (Pflughoeft, Soofi & Soyer 2022, eqs. 7–9; Ebrahimi, Soofi &
Soyer 2008). Writing η = −λ, the multipliers minimise the convex dual

    Γ(η) = log ∫ exp(η·T(x)) dx − η·θ,      ∇Γ = E_η[T] − θ,    ∇²Γ = Cov_η[T],

which we solve by damped Newton on a midpoint grid (cell centres, equal cell volumes) in one
or two dimensions, with T standardised for conditioning. ``H(f) = −Σ p_k log(p_k / vol)``
is the grid form of eq. 9, ``log C(λ) + Σ λ_j θ_j``.

Conventions:
* ``lambda_`` is reported with the paper's sign, f ∝ exp(−Σ λ_j T_j).
* The support is the box ``support`` intersected with the points where every T_j is finite
  (so ``log(x)`` restricts to x > 0 and ``log(x1 - x2)`` to x2 < x1). An unbounded end of the
  box starts at a window around the data and is widened while the fitted density keeps mass
  at that edge. If it still does after ``max_expansions`` doublings, the ME density is not
  normalisable (∫ exp(η·T) diverges): a :class:`DataError`, never a silently truncated fit.
  Moments outside the moment space (e.g. E[x²] < E[x]²) make Γ unbounded below; the
  Newton iteration then fails to reach a zero gradient and raises the same error.
* Moments are written as expressions in ``x`` (1-D) or ``x1``, ``x2`` (2-D) with numbers,
  ``+ - * / **``, and ``log exp abs sqrt log1p softplus`` (softplus(x) = log(1 + eˣ), stable);
  ``mu``/``mu1``/``mu2`` are the sample means, e.g. ``abs(x - mu)**1.5`` (Table A1).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import special

from anoneval.core.api import DataError
from anoneval.plugins._shared.continuous import grid_entropy

FUNCS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "log": np.log, "exp": np.exp, "abs": np.abs, "sqrt": np.sqrt, "log1p": np.log1p,
    "softplus": lambda v: np.logaddexp(0.0, v),
}
_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply, ast.Div: np.divide,
    ast.Pow: np.power,
}


def variables(dim: int) -> list[str]:
    """Names of the coordinates in moment expressions: ``x`` in 1-D, ``x1, x2`` in 2-D."""
    return ["x"] if dim == 1 else [f"x{i + 1}" for i in range(dim)]


def compile_moment(expr: str, dim: int) -> Callable[[dict[str, Any]], np.ndarray]:
    """Parse a moment expression into a function of ``{name: array}``.

    Only the names, functions and operators in the module docstring are accepted; anything else
    is a :class:`DataError` listing what is allowed. Nothing is passed to ``eval``.
    """
    names = set(variables(dim)) | ({"mu"} if dim == 1 else {f"mu{i + 1}" for i in range(dim)})
    allowed = (f"variables {', '.join(sorted(names))}; functions {', '.join(FUNCS)}; "
               "numbers and + - * / **")
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as exc:
        raise DataError(f"moment {expr!r} is not a valid expression ({exc.msg}); allowed: "
                        f"{allowed}") from exc

    def build(node: ast.AST) -> Callable[[dict[str, Any]], Any]:
        if isinstance(node, ast.Expression):
            return build(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
                and not isinstance(node.value, bool):
            value = float(node.value)
            return lambda env: value
        if isinstance(node, ast.Name):
            if node.id not in names:
                raise DataError(f"moment {expr!r}: unknown name {node.id!r}; allowed: {allowed}")
            key = node.id
            return lambda env: env[key]
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            op, left, right = _BINOPS[type(node.op)], build(node.left), build(node.right)
            return lambda env: op(left(env), right(env))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            inner = build(node.operand)
            sign = -1.0 if isinstance(node.op, ast.USub) else 1.0
            return lambda env: sign * inner(env)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in FUNCS and len(node.args) == 1 and not node.keywords:
            fn, arg = FUNCS[node.func.id], build(node.args[0])
            return lambda env: fn(arg(env))
        if isinstance(node, ast.Call):
            called = node.func.id if isinstance(node.func, ast.Name) else ast.dump(node.func)[:30]
            raise DataError(f"moment {expr!r}: unknown function {called!r} or wrong arguments "
                            f"(one positional argument); allowed: {allowed}")
        raise DataError(f"moment {expr!r}: {ast.dump(node)[:40]}… is not allowed; allowed: "
                        f"{allowed}")

    fn = build(tree)

    def evaluate(env: dict[str, Any]) -> np.ndarray:
        with np.errstate(all="ignore"):
            out = fn(env)
        shape = np.broadcast(*[np.asarray(env[v]) for v in variables(dim)]).shape
        return np.broadcast_to(np.asarray(out, dtype=float), shape)

    return evaluate


def moment_matrix(fns: Sequence[Callable[[dict[str, Any]], np.ndarray]], points: np.ndarray,
                  means: np.ndarray) -> np.ndarray:
    """T_j at the rows of ``points`` (n, d): an (n, J) matrix; NaN/inf where undefined."""
    d = points.shape[1]
    env: dict[str, Any] = {name: points[:, i] for i, name in enumerate(variables(d))}
    if d == 1:
        env["mu"] = float(means[0])
    else:
        env.update({f"mu{i + 1}": float(means[i]) for i in range(d)})
    return np.column_stack([f(env) for f in fns]) if fns else np.empty((len(points), 0))


@dataclass
class DualSolution:
    """Newton's answer on one grid: standardised multipliers and the cell probabilities."""

    eta: np.ndarray
    log_norm: float
    prob: np.ndarray
    achieved: np.ndarray
    iterations: int
    converged: bool


#: Largest standardised moment gap accepted when Newton's steps stop decreasing the dual (its
#: change falls below the rounding of a log-sum-exp over the support's cells).
STALL_TOL = 1e-7


def solve_dual(t: np.ndarray, theta: np.ndarray, log_vol: float, tol: float = 1e-10,
               max_iter: int = 200) -> DualSolution:
    """Minimise Γ(η) = log Σ_k vol·exp(η·a_k) over the standardised features ``a = (t − θ)/s``.

    ``t`` is (K, J) at the K support cells. Returns ``eta`` on the original T scale (f ∝
    exp(η·T)), the log normaliser ``log Z`` with f(x) = exp(η·T(x) − log Z), cell probabilities
    and the achieved moments Σ p_k T_j(x_k).
    """
    scale = t.std(axis=0)
    scale[scale == 0] = 1.0
    a = (t - theta) / scale
    eta = np.zeros(t.shape[1])

    def dual(e: np.ndarray) -> tuple[float, np.ndarray]:
        z = a @ e
        lse = special.logsumexp(z)
        return float(lse), np.exp(z - lse)

    value, p = dual(eta)
    converged, it = False, 0
    for it in range(1, max_iter + 1):  # noqa: B007 - `it` is reported
        grad = p @ a
        if np.max(np.abs(grad)) < tol:
            converged = True
            break
        centred = a - grad
        hess = (centred * p[:, None]).T @ centred
        hess[np.diag_indices_from(hess)] += 1e-12
        try:
            step = -np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            step = -np.linalg.lstsq(hess, grad, rcond=None)[0]
        # backtracking line search on the convex dual (Armijo)
        slope = float(grad @ step)
        t_step = 1.0
        while t_step > 1e-12:
            new_eta = eta + t_step * step
            new_value, new_p = dual(new_eta)
            if np.isfinite(new_value) and new_value <= value + 1e-4 * t_step * slope:
                break
            t_step *= 0.5
        else:
            break
        eta, value, p = new_eta, new_value, new_p
        if np.max(np.abs(eta)) > 1e8:
            break
    if not converged:  # Newton stalled at the optimum, its gap down to the rounding of Γ?
        converged = bool(np.max(np.abs(p @ a)) < STALL_TOL)
    eta_t = eta / scale
    # f(x) = exp(η·(T − θ)/s) / (vol·Σ exp(...)) = exp(eta_t·T − log Z)
    log_norm = float(value + log_vol + eta_t @ theta)
    return DualSolution(eta_t, log_norm, p, p @ t, it, converged)


@dataclass
class MEGridFit:
    """An ME density fitted on a grid: multipliers, grid, cell probabilities, entropies."""

    expressions: list[str]
    targets: np.ndarray
    achieved: np.ndarray
    eta: np.ndarray
    log_norm: float
    edges: list[np.ndarray]
    support: list[tuple[float, float]]
    prob: np.ndarray          # full grid, shape (cells per axis…), 0 outside the support
    means: np.ndarray
    iterations: int
    expansions: int
    fns: list[Callable[[dict[str, Any]], np.ndarray]] = field(repr=False)

    @property
    def dim(self) -> int:
        return len(self.edges)

    @property
    def lambda_(self) -> np.ndarray:
        """Multipliers with the paper's sign: f ∝ exp(−Σ λ_j T_j)."""
        return -self.eta

    def widths(self) -> list[float]:
        return [float(e[1] - e[0]) for e in self.edges]

    def logpdf(self, points: np.ndarray) -> np.ndarray:
        """log f = η·T − log Z at the rows of ``points`` (n, d); −inf outside the support.

        The closed form extends beyond the grid box; the box only holds the normaliser.
        """
        points = np.atleast_2d(np.asarray(points, dtype=float))
        t = moment_matrix(self.fns, points, self.means)
        with np.errstate(all="ignore"):
            out = t @ self.eta - self.log_norm
        inside = np.all(np.isfinite(t), axis=1)
        for i, (lo, hi) in enumerate(self.support):
            inside &= (points[:, i] >= lo) & (points[:, i] <= hi)
        return np.where(inside, out, -np.inf)

    def pdf(self, points: np.ndarray) -> np.ndarray:
        return np.exp(self.logpdf(points))

    def entropy(self) -> float:
        """H(f) = −Σ p log(p / vol) on the grid (nats), as :func:`grid_entropy`."""
        return grid_entropy(self.prob, self.edges)

    def marginal_entropies(self) -> list[float]:
        """Entropies of the grid marginals (nats)."""
        out = []
        for i, edges in enumerate(self.edges):
            axes = tuple(j for j in range(self.dim) if j != i)
            out.append(grid_entropy(self.prob.sum(axis=axes) if axes else self.prob, [edges]))
        return out

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Draw cells by their probabilities, then jitter uniformly within the cell.

        A jittered point that leaves a non-rectangular support (e.g. x2 < x1) is jittered
        again, up to 20 times, then put at its cell centre (inside, as the cell is).
        """
        flat = self.prob.ravel()
        cells = rng.choice(flat.size, size=n, p=flat / flat.sum())
        idx = np.unravel_index(cells, self.prob.shape)
        lows = np.column_stack([e[idx[i]] for i, e in enumerate(self.edges)])
        widths = np.array(self.widths())
        out = lows + rng.random((n, self.dim)) * widths
        for _ in range(20):
            bad = np.flatnonzero(~np.all(np.isfinite(moment_matrix(self.fns, out, self.means)),
                                         axis=1))
            if bad.size == 0:
                return out
            out[bad] = lows[bad] + rng.random((bad.size, self.dim)) * widths
        bad = ~np.all(np.isfinite(moment_matrix(self.fns, out, self.means)), axis=1)
        out[bad] = lows[bad] + widths / 2
        return out


def infer_support(fns: Sequence[Callable[[dict[str, Any]], np.ndarray]], data: np.ndarray,
                  means: np.ndarray) -> list[tuple[float, float]]:
    """Hard bounds 0 and 1 implied by the moments (e.g. log x, log(1 − x)), else (−∞, ∞).

    A coordinate gets the lower bound 0 when the data are ≥ 0 and some T_j is undefined just
    below 0 with the other coordinates at their data values; likewise the upper bound 1.
    """
    out = []
    for i in range(data.shape[1]):
        lo, hi = -math.inf, math.inf
        col = data[:, i]
        for bound, probe, ok in ((0.0, -1e-6, col.min() >= 0), (1.0, 1 + 1e-6, col.max() <= 1)):
            if not ok:
                continue
            pts = data.copy()
            pts[:, i] = probe
            if not np.all(np.isfinite(moment_matrix(fns, pts, means))):
                if bound == 0.0:
                    lo = 0.0
                else:
                    hi = 1.0
        out.append((lo, hi))
    return out


def fit_grid(expressions: Sequence[str], targets: np.ndarray, window: Sequence[tuple[float, float]],
             support: Sequence[tuple[float, float]], means: np.ndarray, cells: int,
             max_expansions: int = 8, edge_tol: float = 1e-7, tol: float = 1e-10,
             max_cells: int | None = None) -> MEGridFit:
    """Fit the ME density for ``expressions`` with moments ``targets`` on a growing grid.

    ``window`` is the starting box per coordinate (inside ``support``); an unbounded side is
    doubled while the fitted density keeps more than ``edge_tol`` probability in its outermost
    cell row. ``cells`` is the number of cells per axis, doubled with the box up to
    ``max_cells`` (default 16 × cells in 1-D, 1024 per axis in 2-D, to bound memory).
    """
    dim = len(window)
    if dim not in (1, 2):
        raise DataError(f"MaxEntMoments works in 1 or 2 dimensions, got {dim} columns")
    fns = [compile_moment(e, dim) for e in expressions]
    targets = np.asarray(targets, dtype=float)
    if targets.shape != (len(fns),) or not np.all(np.isfinite(targets)):
        raise DataError(f"moment targets {targets.tolist()} must be {len(fns)} finite numbers, one "
                        f"per moment {list(expressions)}")
    max_cells = max_cells or (cells * 16 if dim == 1 else max(cells, 1024))  # 2-D: ≤ 1M cells
    box = [list(map(float, w)) for w in window]
    n_cells = cells
    for expansion in range(max_expansions + 1):
        edges = [np.linspace(lo, hi, n_cells + 1) for lo, hi in box]
        centres = [(e[:-1] + e[1:]) / 2 for e in edges]
        mesh = np.meshgrid(*centres, indexing="ij")
        pts = np.column_stack([m.ravel() for m in mesh])
        t = moment_matrix(fns, pts, means)
        ok = np.all(np.isfinite(t), axis=1)
        if ok.sum() < len(fns) + 1:
            raise DataError(f"moments {list(expressions)} are undefined on almost all of the box "
                            f"{box}; check the transform and the support")
        vol = math.prod(float(e[1] - e[0]) for e in edges)
        sol = solve_dual(t[ok], targets, math.log(vol), tol=tol)
        if not sol.converged:
            gap = dict(zip(expressions, np.round(sol.achieved - targets, 6).tolist(),
                           strict=True))
            raise DataError(
                f"the ME dual diverges: no density on the support matches the moments "
                f"{dict(zip(expressions, targets.tolist(), strict=True))} (the moments lie "
                f"outside the moment space or the ME density is not normalisable); closest "
                f"achieved minus target after {sol.iterations} Newton steps: {gap}")
        prob = np.zeros(pts.shape[0])
        prob[ok] = sol.prob
        prob = prob.reshape([n_cells] * dim)
        grow = []
        for i in range(dim):
            first = np.take(prob, 0, axis=i).sum()
            last = np.take(prob, n_cells - 1, axis=i).sum()
            lo_open = box[i][0] > support[i][0]
            hi_open = box[i][1] < support[i][1]
            grow.append((lo_open and first > edge_tol, hi_open and last > edge_tol))
        if not any(g for pair in grow for g in pair):
            return MEGridFit(list(expressions), targets, sol.achieved, sol.eta, sol.log_norm,
                             edges, [tuple(map(float, b)) for b in support], prob,
                             np.asarray(means, dtype=float), sol.iterations,
                             expansion, fns)
        if expansion == max_expansions:
            break
        for i, (g_lo, g_hi) in enumerate(grow):
            width = box[i][1] - box[i][0]
            if g_lo:
                box[i][0] = max(box[i][0] - width, support[i][0])
            if g_hi:
                box[i][1] = min(box[i][1] + width, support[i][1])
        n_cells = min(n_cells * 2, max_cells)
    raise DataError(
        f"the ME dual diverges: the density with moments {list(expressions)} keeps its mass at "
        f"the edge of the support after {max_expansions} doublings of the box (now {box}); "
        "exp(−Σ λ_j T_j) is not integrable there, so these moments have no ME solution on this "
        "support (add a moment that controls the tails, e.g. x**2, or bound the support)")

"""Reproduce Aditya & Škorić (2019), Figures 1 and 2: RAPPOR leakage I(C;C′) in bits.

Figure 1: direct representation, I against the stay probability γ; Figure 2: unary
representation, I against the flip probability β; m = 2, 3, 4 and 5 categories, uniform prior.
The curves come from MILeakage's ``curve`` detail, run through ``anoneval.core.evaluate``
without any data. A third figure adds what the paper left open: the normalized leakage
I/H(C), which puts every m on one [0, 1] scale.

Run: ``python examples/rappor_leakage.py [OUTPUT_DIR]`` (default ``examples/out/``).
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from anoneval.core import evaluate

CATEGORIES = (2, 3, 4, 5)
FIGURES = {
    "direct": ("gamma", "γ (probability of keeping the category)", "fig1_direct.png",
               "Figure 1: RAPPOR with direct representation"),
    "unary": ("beta", "β (bit-flip probability)", "fig2_unary.png",
              "Figure 2: RAPPOR with unary representation"),
}


def curves(mechanism: str, param: str) -> dict[int, tuple[list[float], list[float]]]:
    """{m: (x, I)} from MILeakage's curve detail (201 points, uniform prior)."""
    measures = [{"name": "MILeakage", "label": f"m={m}",
                 "params": {"mechanism": mechanism, param: 0.5, "categories": m,
                            "curve_points": 201}} for m in CATEGORIES]
    report = evaluate(None, None, measures=measures)
    out = {}
    for m, entry in zip(CATEGORIES, report.measures, strict=True):
        if entry.error:
            raise RuntimeError(f"{entry.label}: {entry.error}")
        out[m] = (entry.details["curve"]["x"], entry.details["curve"]["y"])
    return out


def save(fig: plt.Figure, path: Path) -> None:
    """Write the PNG through a temporary file and a rename (readers never see half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".png", dir=path.parent)
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=120, bbox_inches="tight")
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("output_dir", nargs="?", default=str(Path(__file__).parent / "out"),
                    help="folder for the PNG files (default: examples/out/)")
    out_dir = Path(ap.parse_args().output_dir)
    norm_fig, norm_axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax_norm, (mechanism, (param, xlabel, filename, title)) in zip(
            norm_axes, FIGURES.items(), strict=True):
        data = curves(mechanism, param)
        fig, ax = plt.subplots(figsize=(6, 4.5))
        for m, (x, y) in data.items():
            ax.plot(x, y, label=f"m = {m}")
            ax_norm.plot(x, [v / math.log2(m) for v in y], label=f"m = {m}")
        ax.set(xlabel=xlabel, ylabel="I(C;C′) [bits]", title=title, xlim=(0, 1), ylim=(0, None))
        ax.grid(alpha=0.3)
        ax.legend()
        save(fig, out_dir / filename)
        ax_norm.set(xlabel=xlabel, ylabel="I(C;C′) / H(C)", title=f"{mechanism}: normalized",
                    xlim=(0, 1), ylim=(0, 1.02))
        ax_norm.grid(alpha=0.3)
        ax_norm.legend()
        print(f"{title}: I at {param} = 0.75 " + ", ".join(
            f"m={m}: {y[150]:.6f}" for m, (_, y) in data.items()))
        print(f"  wrote {out_dir / filename}")
    save(norm_fig, out_dir / "fig3_normalized.png")
    print(f"  wrote {out_dir / 'fig3_normalized.png'}")


if __name__ == "__main__":
    main()

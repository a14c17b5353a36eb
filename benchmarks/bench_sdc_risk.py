"""Speed of IndividualRisk (sdcMicro's measure_risk) and SUDA (sdcMicro's suda2).

Cases:
* adult (30,162 rows): IndividualRisk on 5 keys with weights and households; SUDA on 7 keys
  (target: under 5 s);
* 1,000,000 rows × 6 keys (adult's columns resampled independently, so most records are
  sample unique): SUDA (target: under 60 s) and IndividualRisk; the peak memory of the SUDA
  run is printed (tracemalloc).

When ``Rscript`` and sdcMicro are available (``SDCMICRO_LIB``, default
``/work/oracles/sdcmicro/lib``), sdcMicro's ``measure_risk`` and ``suda2`` run on the same data
in the same run and the ratios ours/sdcMicro are printed; otherwise the absolute times only.
Ours is timed through ``anoneval.Evaluator(None, [measure]).evaluate(data)`` on fresh copies of
the loaded frame, sdcMicro inside R on the same data read before the clock; each side gets one
untimed warm-up call and its median of ``--rounds`` calls is printed (R runs in its own process,
so the sides are not interleaved; see docs/scaling.md, "How benchmarks measure"). Run:
``python benchmarks/bench_sdc_risk.py [--quick]`` (``--quick`` skips the 10⁶-row case;
``--no-r`` skips sdcMicro; ``--rounds N``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
from _common import evaluate_one, read_adult, timed_rounds

K5 = ["sex", "age", "race", "marital-status", "education"]
K7 = [*K5, "native-country", "workclass"]
K6 = ["age", "occupation", "native-country", "marital-status", "education", "workclass"]
R_LIB = os.environ.get("SDCMICRO_LIB", "/work/oracles/sdcmicro/lib")

R_SCRIPT = """
suppressPackageStartupMessages(library(sdcMicro))
args <- commandArgs(TRUE)
d <- read.csv(args[1], stringsAsFactors = TRUE, check.names = FALSE)
k5 <- strsplit(args[2], ",")[[1]]; ks <- strsplit(args[3], ",")[[1]]
rounds <- as.integer(args[5])
timed <- function(f) {
  invisible(f())
  median(sapply(1:rounds, function(i) system.time(f())[["elapsed"]]))
}
t <- timed(function() measure_risk(d, keyVars = k5, w = "w", hid = "hh"))
s <- if (args[4] == "1") timed(function() suda2(d, variables = ks)) else NA
cat(t, s, "\\n")
"""


def have_r() -> bool:
    if shutil.which("Rscript") is None:
        return False
    probe = subprocess.run(["Rscript", "-e", "library(sdcMicro)"], capture_output=True,
                           env={**os.environ, "R_LIBS": R_LIB}, check=False)
    return probe.returncode == 0


def sdcmicro_times(frame: pd.DataFrame, suda_keys: list[str], suda: bool,
                   rounds: int) -> tuple[float, float]:
    """Median seconds of sdcMicro's measure_risk (5 keys, weights, households) and suda2,
    each after a warm-up call."""
    with tempfile.TemporaryDirectory() as tmp:
        csv, script = Path(tmp) / "d.csv", Path(tmp) / "run.R"
        frame.to_csv(csv, index=False)
        script.write_text(R_SCRIPT)
        out = subprocess.run(["Rscript", str(script), str(csv), ",".join(K5),
                              ",".join(suda_keys), "1" if suda else "0", str(rounds)],
                             capture_output=True, text=True, env={**os.environ, "R_LIBS": R_LIB},
                             check=True)
    risk, suda_s = out.stdout.split()
    return float(risk), float(suda_s) if suda_s != "NA" else float("nan")


def with_weights(frame: pd.DataFrame) -> pd.DataFrame:
    i = np.arange(len(frame))
    return frame.assign(w=1 + (i * 37) % 101, hh=i // 3)


def case(label: str, frame: pd.DataFrame, suda_keys: list[str], rounds: int, r: bool,
         r_suda: bool) -> None:
    risk_spec = {"name": "IndividualRisk",
                 "params": {"quasi_identifiers": K5, "weights": "w", "household": "hh"}}
    suda_spec = {"name": "SUDA", "params": {"quasi_identifiers": suda_keys}}

    def fresh() -> tuple[pd.DataFrame]:
        return (frame.copy(),)
    t_risk, c_risk = timed_rounds(lambda d: evaluate_one(None, d, risk_spec), rounds, fresh)
    tracemalloc.start()  # a separate, slower run for the memory figure (SUDA's warm-up)
    evaluate_one(None, frame.copy(), suda_spec)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    t_suda, c_suda = timed_rounds(lambda d: evaluate_one(None, d, suda_spec),
                                  1 if len(frame) > 100_000 else rounds, fresh, warm_up=False)
    print(f"{label}: {len(frame)} rows, evaluate(), median after a warm-up call")
    print(f"  IndividualRisk (5 keys, weights, households): {t_risk:8.3f} s (cpu "
          f"{c_risk:7.3f})")
    print(f"  SUDA ({len(suda_keys)} keys): {t_suda:8.3f} s (cpu {c_suda:7.3f}), peak traced "
          f"memory {peak:.0f} MiB")
    if r:
        r_risk, r_suda_t = sdcmicro_times(frame, suda_keys, r_suda, rounds)
        print(f"  sdcMicro measure_risk: {r_risk:8.3f} s  (ours/sdcMicro "
              f"{t_risk / r_risk:.3g})")
        if r_suda:
            print(f"  sdcMicro suda2:        {r_suda_t:8.3f} s  (ours/sdcMicro "
                  f"{t_suda / r_suda_t:.3g})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="skip the 10^6-row case")
    ap.add_argument("--no-r", action="store_true", help="do not run sdcMicro")
    ap.add_argument("--rounds", type=int, help="timed calls per side (default 3, --quick 1)")
    args = ap.parse_args()
    rounds = args.rounds or (1 if args.quick else 3)
    r = not args.no_r and have_r()
    if not r:
        print("sdcMicro not available: absolute times only")
    adult = with_weights(read_adult())
    case("adult", adult, K7, rounds, r, True)
    if not args.quick:
        rng = np.random.default_rng(0)
        cols = sorted({*K5, *K6})
        big = pd.DataFrame({c: rng.choice(adult[c].to_numpy(), 1_000_000) for c in cols})
        # sdcMicro's suda2 on 10^6 rows takes far longer than this benchmark should; its
        # measure_risk runs
        case("resampled", with_weights(big), K6, 1, r, False)


if __name__ == "__main__":
    main()

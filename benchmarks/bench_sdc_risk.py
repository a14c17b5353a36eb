"""Speed of IndividualRisk (sdcMicro's measure_risk) and SUDA (sdcMicro's suda2).

Cases:
* adult (30,162 rows): IndividualRisk on 5 keys with weights and households; SUDA on 7 keys
  (target: under 5 s);
* 1,000,000 rows × 6 keys (adult's columns resampled independently, so most records are
  sample unique): SUDA (target: under 60 s) and IndividualRisk; the peak memory of the SUDA
  run is printed (tracemalloc).

When ``Rscript`` and sdcMicro are available (``SDCMICRO_LIB``, default
``/work/oracles/sdcmicro/lib``), sdcMicro's ``measure_risk`` and ``suda2`` run on the same data
in the same run and the ratios are printed; otherwise the absolute times only. Every anoneval
timing is cold (a fresh ``Microdata``). Run: ``python benchmarks/bench_sdc_risk.py [--quick]``
(``--quick`` skips the 10⁶-row case; ``--no-r`` skips sdcMicro).
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
from _common import best, read_adult

from anoneval.core.api import Context, Microdata
from anoneval.plugins.reidentification.individual_risk import IndividualRisk
from anoneval.plugins.reidentification.suda import SUDA

K5 = ["sex", "age", "race", "marital-status", "education"]
K7 = [*K5, "native-country", "workclass"]
K6 = ["age", "occupation", "native-country", "marital-status", "education", "workclass"]
R_LIB = os.environ.get("SDCMICRO_LIB", "/work/oracles/sdcmicro/lib")

R_SCRIPT = """
suppressPackageStartupMessages(library(sdcMicro))
args <- commandArgs(TRUE)
d <- read.csv(args[1], stringsAsFactors = TRUE, check.names = FALSE)
k5 <- strsplit(args[2], ",")[[1]]; ks <- strsplit(args[3], ",")[[1]]
t <- system.time(measure_risk(d, keyVars = k5, w = "w", hid = "hh"))[["elapsed"]]
s <- if (args[4] == "1") system.time(suda2(d, variables = ks))[["elapsed"]] else NA
cat(t, s, "\\n")
"""


def have_r() -> bool:
    if shutil.which("Rscript") is None:
        return False
    probe = subprocess.run(["Rscript", "-e", "library(sdcMicro)"], capture_output=True,
                           env={**os.environ, "R_LIBS": R_LIB}, check=False)
    return probe.returncode == 0


def sdcmicro_times(frame: pd.DataFrame, suda_keys: list[str], suda: bool) -> tuple[float, float]:
    """Seconds of sdcMicro's measure_risk (5 keys, weights, households) and suda2."""
    with tempfile.TemporaryDirectory() as tmp:
        csv, script = Path(tmp) / "d.csv", Path(tmp) / "run.R"
        frame.to_csv(csv, index=False)
        script.write_text(R_SCRIPT)
        out = subprocess.run(["Rscript", str(script), str(csv), ",".join(K5),
                              ",".join(suda_keys), "1" if suda else "0"],
                             capture_output=True, text=True, env={**os.environ, "R_LIBS": R_LIB},
                             check=True)
    risk, suda_s = out.stdout.split()
    return float(risk), float(suda_s) if suda_s != "NA" else float("nan")


def with_weights(frame: pd.DataFrame) -> pd.DataFrame:
    i = np.arange(len(frame))
    return frame.assign(w=1 + (i * 37) % 101, hh=i // 3)


def case(label: str, frame: pd.DataFrame, suda_keys: list[str], repeat: int, r: bool,
         r_suda: bool) -> None:
    def risk() -> None:
        IndividualRisk(quasi_identifiers=K5, weights="w", household="hh").compute(
            None, Microdata(frame), Context())

    def suda() -> None:
        SUDA(quasi_identifiers=suda_keys).compute(None, Microdata(frame), Context())

    t_risk = best(risk, repeat)
    t_suda = best(suda, 1 if len(frame) > 100_000 else repeat)
    tracemalloc.start()  # a separate, slower run for the memory figure
    suda()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    print(f"{label}: {len(frame)} rows")
    print(f"  IndividualRisk (5 keys, weights, households): {t_risk:8.3f} s")
    print(f"  SUDA ({len(suda_keys)} keys): {t_suda:8.3f} s, peak traced memory "
          f"{peak:.0f} MiB")
    if r:
        r_risk, r_suda_t = sdcmicro_times(frame, suda_keys, r_suda)
        print(f"  sdcMicro measure_risk: {r_risk:8.3f} s  (anoneval {r_risk / t_risk:.1f}× "
              "faster)")
        if r_suda:
            print(f"  sdcMicro suda2:        {r_suda_t:8.3f} s  (anoneval "
                  f"{r_suda_t / t_suda:.1f}× faster)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="skip the 10^6-row case")
    ap.add_argument("--no-r", action="store_true", help="do not run sdcMicro")
    args = ap.parse_args()
    r = not args.no_r and have_r()
    if not r:
        print("sdcMicro not available: absolute times only")
    adult = with_weights(read_adult())
    case("adult", adult, K7, 3, r, True)
    if not args.quick:
        rng = np.random.default_rng(0)
        cols = sorted({*K5, *K6})
        big = pd.DataFrame({c: rng.choice(adult[c].to_numpy(), 1_000_000) for c in cols})
        # sdcMicro's suda2 on 10^6 rows takes far longer than this benchmark should; its
        # measure_risk runs
        case("resampled", with_weights(big), K6, 1, r, False)


if __name__ == "__main__":
    main()

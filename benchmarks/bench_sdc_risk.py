"""Speed of IndividualRisk (sdcMicro's measure_risk) and SUDA (sdcMicro's suda2), interleaved.

Cases:
* adult (30,162 rows): IndividualRisk on 5 keys with weights and households; SUDA on 7 keys
  (target: under 5 s);
* 1,000,000 rows × 6 keys (adult's columns resampled independently, so most records are
  sample unique): SUDA (target: under 60 s) and IndividualRisk; the peak memory of the SUDA
  run is printed (tracemalloc).

Ours is timed through ``anoneval.Evaluator(None, [measure]).evaluate(data)`` on fresh copies of
the loaded frame. When ``Rscript`` and sdcMicro are available (``SDCMICRO_LIB``, default
``/work/oracles/sdcmicro/lib``; install steps in docs/scaling.md, "Peers in other processes"),
an R process reads the same data once and serves ``measure_risk`` and ``suda2`` calls, timing
each itself (``benchmarks/_remote.py``). Each side makes one untimed call whose values are
compared (the global risk, mean of the individual risks, to 1e-9 relative; the mean DIS-SUDA
score to 1e-6, as the tests do: sdcMicro's DIS goes through float32), then ``--rounds``
interleaved rounds; the per-round ratio ours/sdcMicro is printed as min / median / max with the
CPU ratio (docs/scaling.md, "How benchmarks measure"). sdcMicro's suda2 on 10⁶ rows takes far
longer than this benchmark should: there ours runs alone. Without R or sdcMicro the script says
so and prints our times alone. Run:
``python benchmarks/bench_sdc_risk.py [--quick]`` (``--quick`` skips the 10⁶-row case;
``--no-r`` skips sdcMicro; ``--rounds N``).
"""

from __future__ import annotations

import argparse
import math
import tempfile
import tracemalloc
from typing import Any

import numpy as np
import pandas as pd
from _common import evaluate_one, header, interleaved, read_adult, show, timed_rounds
from _remote import RemotePeer, start_r_peer

K5 = ["sex", "age", "race", "marital-status", "education"]
K7 = [*K5, "native-country", "workclass"]
K6 = ["age", "occupation", "native-country", "marital-status", "education", "workclass"]

R_PEER = """
args <- commandArgs(TRUE)
source(args[1])
suppressPackageStartupMessages(library(sdcMicro))
d <- read.csv(args[2], stringsAsFactors = TRUE, check.names = FALSE)
k5 <- strsplit(args[3], ",")[[1]]
ks <- strsplit(args[4], ",")[[1]]
serve(list(
  measure_risk = function() mean(measure_risk(d, keyVars = k5, w = "w", hid = "hh")$Res[, "risk"]),
  suda2 = function() mean(suda2(d, variables = ks)$disScore)))
"""


def sdcmicro(frame: pd.DataFrame, suda_keys: list[str], folder: str) -> RemotePeer | str:
    """sdcMicro in R with ``frame`` loaded (or why not)."""
    frame.to_csv(f"{folder}/d.csv", index=False)
    return start_r_peer(R_PEER, [f"{folder}/d.csv", ",".join(K5), ",".join(suda_keys)], folder,
                        name="sdcMicro")


def with_weights(frame: pd.DataFrame) -> pd.DataFrame:
    i = np.arange(len(frame))
    return frame.assign(w=1 + (i * 37) % 101, hh=i // 3)


def agree(ours: float, theirs: float, rel: float = 1e-9) -> str:
    same = math.isclose(ours, theirs, rel_tol=rel, abs_tol=1e-15)
    return f"  agree {'yes' if same else 'NO'} ({ours:.10g} vs {theirs:.10g})"


def case(label: str, frame: pd.DataFrame, suda_keys: list[str], rounds: int, r: bool,
         r_suda: bool) -> None:
    risk_spec = {"name": "IndividualRisk",
                 "params": {"quasi_identifiers": K5, "weights": "w", "household": "hh"}}
    suda_spec = {"name": "SUDA", "params": {"quasi_identifiers": suda_keys}}

    def fresh() -> tuple[pd.DataFrame]:
        return (frame.copy(),)

    def risk(d: pd.DataFrame) -> Any:
        return evaluate_one(None, d, risk_spec)

    def suda(d: pd.DataFrame) -> Any:
        return evaluate_one(None, d, suda_spec)
    suda_rounds = 1 if len(frame) > 100_000 else rounds
    tracemalloc.start()  # a separate, slower run for the memory figure (SUDA's warm-up)
    suda_value = suda(frame.copy())
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    print(f"\n{label}: {len(frame):,} rows; SUDA ({len(suda_keys)} keys) peak traced memory "
          f"{peak:.0f} MiB")
    with tempfile.TemporaryDirectory() as tmp:
        peer = sdcmicro(frame, suda_keys, tmp) if r else "not run"
        if isinstance(peer, str):
            if r:
                print(f"sdcMicro: {peer}")
            header(f"{label}: evaluate() alone", rounds, peers=False)
            wall, cpu = timed_rounds(risk, rounds, fresh)
            print(f"  IndividualRisk (5 keys, weights, households): {wall:8.3f} s (cpu "
                  f"{cpu:7.3f})")
            wall, cpu = timed_rounds(suda, suda_rounds, fresh, warm_up=False)
            print(f"  SUDA ({len(suda_keys)} keys): {wall:8.3f} s (cpu {cpu:7.3f})")
            return
        with peer:
            header(f"{label}: evaluate() against sdcMicro (R, timed inside R)", rounds)
            ours = risk(frame.copy())
            theirs = peer.run("measure_risk").value
            show(interleaved(risk, peer.op("measure_risk"), rounds, fresh,
                             "IndividualRisk / measure_risk", warm_up=False), "sdcMicro",
                 note=agree(ours, theirs))
            if r_suda:
                theirs = peer.run("suda2").value
                show(interleaved(suda, peer.op("suda2"), suda_rounds, fresh,
                                 f"SUDA / suda2 ({len(suda_keys)} keys)", warm_up=False),
                     "sdcMicro", note=agree(suda_value, theirs, 1e-6))
            else:
                wall, cpu = timed_rounds(suda, suda_rounds, fresh, warm_up=False)
                print(f"SUDA ({len(suda_keys)} keys), ours alone (sdcMicro's suda2 would "
                      f"take far longer): {wall:8.3f} s (cpu {cpu:7.3f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="skip the 10^6-row case")
    ap.add_argument("--no-r", action="store_true", help="do not run sdcMicro")
    ap.add_argument("--rounds", type=int, help="timed calls per side (default 3, --quick 1)")
    args = ap.parse_args()
    rounds = args.rounds or (1 if args.quick else 3)
    adult = with_weights(read_adult())
    case("adult", adult, K7, rounds, not args.no_r, True)
    if not args.quick:
        rng = np.random.default_rng(0)
        cols = sorted({*K5, *K6})
        big = pd.DataFrame({c: rng.choice(adult[c].to_numpy(), 1_000_000) for c in cols})
        case("resampled", with_weights(big), K6, rounds, not args.no_r, False)


if __name__ == "__main__":
    main()

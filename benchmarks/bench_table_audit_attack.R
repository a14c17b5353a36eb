# Peer of benchmarks/bench_table_audit.py: sdcTable's attack() on the same table and pattern.
# Usage: Rscript bench_table_audit_attack.R DIR N_WORKERS  (DIR holds cells.csv, hier_<d>.csv;
# writes attack.csv and prints the workers used and the seconds attack() took). Needs R with sdcTable.
suppressPackageStartupMessages({library(sdcTable); library(sdcHierarchies); library(data.table)})
args <- commandArgs(trailingOnly = TRUE)
dir <- args[1]
workers <- as.integer(args[2])
cells <- fread(file.path(dir, "cells.csv"), colClasses = list(character = c("a", "b", "c")))
dnames <- c("a", "b", "c")
dl <- lapply(dnames, function(d) {
  e <- fread(file.path(dir, paste0("hier_", d, ".csv")), colClasses = "character")
  h <- hier_create(root = e$parent[1], nodes = e$child[e$parent == e$parent[1]])
  for (p in setdiff(unique(e$parent), e$parent[1])) h <- hier_add(h, root = p, nodes = e$child[e$parent == p])
  h
})
names(dl) <- dnames
inner <- as.data.frame(cells[leaf == TRUE, c(dnames, "value"), with = FALSE])
sdc <- makeProblem(data = inner, dimList = dl, dimVarInd = 1:3, freqVarInd = 4)
df <- as.data.frame(sdcProb2df(sdc, addDups = FALSE, dimCodes = "original"))
key <- function(x) do.call(paste, c(x[dnames], sep = "|"))
status <- cells$status[match(key(df), key(as.data.frame(cells)))]
stopifnot(!anyNA(status))
sdc <- setInfo(sdc, type = "sdcStatus", index = seq_along(status), input = status)
sup <- which(status %in% c("u", "x"))
run <- function(w) {
  t0 <- proc.time()[["elapsed"]]
  res <- attack(sdc, to_attack = sup, verbose = FALSE, n_workers = w)
  list(res = res, took = proc.time()[["elapsed"]] - t0, workers = w)
}
# attack(n_workers > 1) needs future.apply and future's with(plan(...), local = TRUE) (a
# with() method for FutureStrategyList, which older future lacks): else one worker
parallel_ok <- requireNamespace("future.apply", quietly = TRUE) &&
  !is.null(getS3method("with", "FutureStrategyList", optional = TRUE,
                       envir = asNamespace("future")))
got <- run(if (parallel_ok) workers else 1L)
res <- got$res
took <- got$took
out <- df[res$id, dnames]
out$low <- res$low
out$up <- res$up
fwrite(out, file.path(dir, "attack.csv"))
cat(sprintf("%d %.3f\n", got$workers, took))

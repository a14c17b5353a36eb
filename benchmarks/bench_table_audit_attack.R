# Peer of benchmarks/bench_table_audit.py: sdcTable's attack() on the same table and pattern,
# served through benchmarks/_remote.R (one attack() per request, timed inside R).
# Usage: Rscript bench_table_audit_attack.R PATH/_remote.R DIR  (DIR holds cells.csv and
# hier_<d>.csv). Operations: attack(WORKERS) runs attack() once and answers the workers it used;
# save(PATH) writes the last attack's intervals (a, b, c, low, up) as CSV. Needs sdcTable.
args <- commandArgs(trailingOnly = TRUE)
source(args[1])
dir <- args[2]
suppressPackageStartupMessages({library(sdcTable); library(sdcHierarchies); library(data.table)})
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

# attack(n_workers > 1) calls with(future::plan(multisession), local = TRUE), which needs a
# newer future than Debian's 1.31 (a with() method for the old plan that restores it when the
# caller returns). On an older future, the same method is registered here: without it attack()
# would fail.
if (is.null(getS3method("with", "FutureStrategyList", optional = TRUE,
                        envir = asNamespace("future")))) {
  registerS3method("with", "FutureStrategyList", function(data, expr, ..., local = FALSE,
                                                          envir = parent.frame()) {
    if (local) {
      do.call(on.exit, list(as.call(list(quote(future::plan), data)), add = TRUE),
              envir = envir)
      return(invisible(data))
    }
    on.exit(future::plan(data))
    eval(substitute(expr), envir = envir)
  }, envir = asNamespace("future"))
}
parallel_ok <- requireNamespace("future.apply", quietly = TRUE)
last <- NULL
serve(list(
  attack = function(workers) {
    w <- if (parallel_ok) as.integer(workers) else 1L
    last <<- attack(sdc, to_attack = sup, verbose = FALSE, n_workers = w)
    w
  },
  save = function(path) {
    out <- df[last$id, dnames]
    out$low <- last$low
    out$up <- last$up
    fwrite(out, path)
    NULL
  }))

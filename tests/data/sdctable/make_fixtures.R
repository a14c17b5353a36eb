# Fixtures for tests/plugins/tabular/test_suppression_audit_sdctable.py, made with sdcTable
# (primary rules, protectTable, attack()). Usage: Rscript make_fixtures.R OUTDIR
# Needs R with sdcTable and sdcHierarchies installed; the suite itself needs no R.
suppressPackageStartupMessages({library(sdcTable); library(sdcHierarchies); library(data.table)})
args <- commandArgs(trailingOnly = TRUE)
out <- if (length(args)) args[1] else "."

hier <- function(edges) {  # edges: list(parent = c(children)), the first parent is the root
  h <- hier_create(root = names(edges)[1], nodes = edges[[1]])
  for (p in names(edges)[-1]) h <- hier_add(h, root = p, nodes = edges[[p]])
  h
}
leaves <- function(edges) setdiff(unlist(edges), names(edges))

microdata <- function(dims, seed) {
  set.seed(seed)
  grid <- expand.grid(lapply(dims, leaves), stringsAsFactors = FALSE)
  rows <- list()
  for (i in seq_len(nrow(grid))) {
    n <- sample(c(1, 2, 3, 4, 6, 9), 1, prob = c(.12, .12, .16, .2, .2, .2))
    x <- round(rlnorm(n, 4, 1), 2)
    if (runif(1) < 0.2) x[1] <- round(x[1] * 15, 2)  # a dominant respondent
    rows[[i]] <- data.frame(grid[rep(i, n), , drop = FALSE], mag = x, row.names = NULL)
  }
  do.call(rbind, rows)
}

cells_of <- function(sdc) {
  df <- as.data.frame(sdcProb2df(sdc, addDups = FALSE, addNumVars = TRUE, dimCodes = "original"))
  df
}

audit <- function(sdc_mag, status) {  # attack() of every suppressed cell on the magnitude table
  sdc_mag <- setInfo(sdc_mag, type = "sdcStatus", index = seq_along(status), input = status)
  sup <- which(status %in% c("u", "x"))
  res <- attack(sdc_mag, to_attack = sup, verbose = FALSE)
  low <- up <- rep(NA_real_, length(status))
  low[res$id] <- res$low
  up[res$id] <- res$up
  list(low = low, up = up)
}

run_case <- function(name, dims, seed, rules, extra = list(), weighted = FALSE) {
  dir.create(file.path(out, name), recursive = TRUE, showWarnings = FALSE)
  dl <- lapply(dims, hier)
  micro <- microdata(dims, seed)
  dnames <- names(dims)
  weight <- NULL
  if (weighted) {  # integer sampling weights: sdcTable replicates each record w times
    micro$w <- sample(1:3, nrow(micro), replace = TRUE, prob = c(.7, .2, .1))
    weight <- match("w", names(micro))
  }
  sdc <- makeProblem(data = micro, dimList = dl, dimVarInd = match(dnames, names(micro)),
                     numVarInd = match("mag", names(micro)), sampWeightInd = weight)
  for (r in rules) sdc <- do.call(primarySuppression, c(list(object = sdc), r))
  prim <- cells_of(sdc)
  # the magnitude table: the same cells, Freq = summed magnitude (attack() audits Freq)
  inner <- aggregate(micro$mag * (if (weighted) micro$w else 1), by = micro[dnames], FUN = sum)
  names(inner)[ncol(inner)] <- "mag"
  sdc_mag <- makeProblem(data = inner, dimList = dl, dimVarInd = seq_along(dnames),
                         freqVarInd = match("mag", names(inner)))
  mag <- cells_of(sdc_mag)
  stopifnot(identical(prim$strID, mag$strID))
  tab <- prim[, dnames, drop = FALSE]
  tab$n <- prim$freq
  tab$value <- mag$freq
  patterns <- list(primary = prim$sdcStatus)
  prot <- protectTable(sdc, method = "SIMPLEHEURISTIC")
  patterns$simpleheuristic <- cells_of(prot)$sdcStatus
  for (p in names(extra)) {
    st <- prim$sdcStatus
    keys <- do.call(paste, c(tab[dnames], sep = "|"))
    st[match(extra[[p]], keys)] <- "x"
    patterns[[p]] <- st
  }
  for (p in names(patterns)) {
    a <- audit(sdc_mag, patterns[[p]])
    tab[[paste0("status_", p)]] <- patterns[[p]]
    tab[[paste0("low_", p)]] <- a$low
    tab[[paste0("up_", p)]] <- a$up
  }
  fwrite(tab, file.path(out, name, "table.csv"), dec = ".", scipen = 50)
  fwrite(micro, file.path(out, name, "microdata.csv"))
  for (d in dnames) {
    e <- dims[[d]]
    fwrite(data.frame(parent = rep(names(e), lengths(e)), child = unlist(e), row.names = NULL),
           file.path(out, name, paste0("hier_", d, ".csv")))
  }
  cat(name, ":", nrow(tab), "cells,", sum(tab$status_primary == "u"), "primary\n")
}

options(digits = 17)
rules <- list(list(type = "freq", maxN = 2), list(type = "nk", n = 1, k = 80, numVarName = "mag"),
              list(type = "nk", n = 2, k = 90, numVarName = "mag"),
              list(type = "p", p = 15, numVarName = "mag"))
run_case("oned", list(v1 = list(Tot = c("A", "B", "C", "D", "E", "F", "G", "H"))), 21, rules,
         extra = list(total = c("Tot", "A", "B")))
run_case("twod", list(v1 = list(Tot = c("A", "B", "C", "D")),
                      v2 = list(Tot = c("k", "l", "m", "n", "o"))), 12, rules,
         extra = list(rectangle = c("A|k", "A|l", "B|k", "B|l"),
                      margins = c("Tot|Tot", "A|Tot", "Tot|k", "A|k")))
run_case("hier", list(v1 = list(Tot = c("G1", "G2"), G1 = c("A", "B", "C"), G2 = c("D", "E")),
                      v2 = list(Tot = c("k", "l", "m"))), 13, rules,
         extra = list(subtotal = c("G1|k", "A|k", "D|k", "G1|l", "A|l", "D|l")))
run_case("cube", list(v1 = list(Tot = c("G1", "G2"), G1 = c("A", "B"), G2 = c("C", "D")),
                      v2 = list(Tot = c("k", "l", "m")), v3 = list(Tot = c("r", "s"))), 14, rules,
         extra = list(box = c("A|k|r", "A|k|s", "A|l|r", "A|l|s", "B|k|r", "B|k|s", "B|l|r",
                              "B|l|s")))
run_case("weighted", list(v1 = list(Tot = c("G1", "G2"), G1 = c("A", "B", "C"), G2 = c("D", "E")),
                          v2 = list(Tot = c("k", "l", "m"))), 17, rules, weighted = TRUE)
cat(R.version.string, "; sdcTable", as.character(packageVersion("sdcTable")), "\n")

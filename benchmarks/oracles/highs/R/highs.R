# The functions of the R package highs that sdcTable 0.34 calls (attack(), protectTable()'s LPs),
# solved by GLPK through Rglpk: the CRAN package highs is not in Debian and this machine reaches
# no CRAN. Only what sdcTable uses: linear models, a fresh GLPK solve per solve() call (sdcTable
# builds a new highs solver per bound too). Installed by install_peers.sh.
# A model is an environment, so that the setters change it in place as highs' do.
highs_model <- function(Q = NULL, L, lower = NULL, upper = NULL, A, lhs, rhs, types = NULL,
                        maximum = FALSE, offset = 0) {
  if (!is.null(Q)) stop("highs (GLPK stand-in): quadratic objectives are not supported")
  n <- length(L)
  if (inherits(A, "simple_triplet_matrix")) {
    mat <- A
  } else {
    t <- methods::as(methods::as(A, "CsparseMatrix"), "TsparseMatrix")
    mat <- slam::simple_triplet_matrix(t@i + 1L, t@j + 1L, t@x, nrow(A), ncol(A))
  }
  eq <- lhs == rhs
  lo <- !eq & is.finite(lhs)
  up <- !eq & is.finite(rhs)
  rows <- c(which(eq | up), which(lo))  # a ranged row becomes two rows
  dir <- c(ifelse(eq[eq | up], "==", "<="), rep(">=", sum(lo)))
  bound <- c(rhs[eq | up], lhs[lo])
  m <- new.env()
  m$obj <- L
  m$mat <- mat[rows, ]
  m$dir <- dir
  m$rhs <- bound
  m$nrow <- nrow(A)
  m$row_index <- rows
  m$types <- if (is.null(types)) rep("C", n) else types
  m$maximum <- maximum
  lower <- if (is.null(lower)) rep(0, n) else lower
  upper <- if (is.null(upper)) rep(Inf, n) else upper
  m$bounds <- list(lower = list(ind = seq_len(n), val = lower),
                   upper = list(ind = seq_len(n), val = upper))
  m
}

hi_model_set_objective <- function(model, objective) {
  model$obj <- objective
  invisible(model)
}

hi_model_set_sense <- function(model, maximum) {
  model$maximum <- maximum
  invisible(model)
}

highs_control <- function(...) list(...)

highs_solver <- function(model, control = NULL) {
  res <- NULL
  solve <- function() {
    res <<- Rglpk::Rglpk_solve_LP(model$obj, model$mat, model$dir, model$rhs,
                                  bounds = model$bounds, types = model$types,
                                  max = model$maximum)
    invisible(res)
  }
  solution <- function() {
    rows <- as.numeric(slam::matprod_simple_triplet_matrix(model$mat, res$solution))
    dual <- numeric(model$nrow)
    if (!is.null(res$auxiliary$dual)) dual[model$row_index] <- res$auxiliary$dual
    list(col_value = res$solution, col_dual = if (is.null(res$solution_dual)) NA else
           res$solution_dual, row_value = rows[match(seq_len(model$nrow), model$row_index)],
         row_dual = dual, value_valid = res$status == 0)
  }
  list(solve = solve, solution = solution)
}

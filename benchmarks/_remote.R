# The R side of benchmarks/_remote.py's protocol: a peer that has loaded its data calls
# serve(ops), a named list of functions taking the request's arguments as strings; each request
# line "OP<TAB>ARG..." on stdin runs ops[[OP]] once and answers on stdout
# "@@OK<TAB>wall<TAB>cpu<TAB>json" (seconds around the call only: wall from Sys.time(), in
# microseconds; CPU from proc.time(), in milliseconds, user + system time of this R process and
# of the children it waited for; json is the result, via jsonlite, null for NULL) or
# "@@ERROR<TAB>message". "QUIT" or the end of input ends it.
serve <- function(ops) {
  input <- file("stdin")
  open(input)
  say <- function(...) {
    cat("@@", ..., "\n", sep = "")
    flush(stdout())
  }
  say("READY")
  repeat {
    line <- readLines(input, n = 1)
    if (length(line) == 0 || identical(line, "QUIT")) break
    words <- strsplit(line, "\t", fixed = TRUE)[[1]]
    fn <- ops[[words[1]]]
    if (is.null(fn)) {
      say("ERROR\tunknown operation '", words[1], "'; known: ",
          paste(sort(names(ops)), collapse = ", "))
      next
    }
    w0 <- Sys.time()
    t0 <- proc.time()
    value <- tryCatch(list(do.call(fn, as.list(words[-1]))),
                      error = function(e) conditionMessage(e))
    t <- proc.time() - t0
    wall <- as.numeric(difftime(Sys.time(), w0, units = "secs"))
    if (is.character(value)) {
      say("ERROR\t", gsub("[\t\n]", " ", value))
    } else {
      cpu <- sum(t[c("user.self", "sys.self", "user.child", "sys.child")], na.rm = TRUE)
      json <- if (is.null(value[[1]])) "null" else
        jsonlite::toJSON(value[[1]], auto_unbox = TRUE, digits = NA)
      say("OK\t", sprintf("%.6f", wall), "\t", sprintf("%.6f", cpu), "\t", json)
    }
  }
  invisible(NULL)
}

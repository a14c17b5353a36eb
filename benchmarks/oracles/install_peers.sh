#!/bin/sh
# Installs the benchmarks' peers that run in other processes (docs/scaling.md, "Peers in other
# processes"): sdcMicro, sdcTable and sdcHierarchies from their source trees, with a GLPK
# stand-in for R's highs (./highs), into $SDCMICRO_LIB (default /work/oracles/sdcmicro/lib), and
# scikit-mobility 1.3.1 in a pyenv Python 3.9.18 venv at $SKMOB_VENV (default
# /work/oracles/skmob39).
#
# Usage: sh benchmarks/oracles/install_peers.sh SDCMICRO_SRC SDCTABLE_SRC SDCHIERARCHIES_SRC
# (each a source tree, e.g. `git --git-dir=REPO.git archive HEAD | tar -x -C DIR`; the sources
# are copied before they are patched). Needs root for apt-get, pyenv with 3.9.18, and PyPI.
set -eu
[ $# -eq 3 ] || { echo "usage: $0 SDCMICRO_SRC SDCTABLE_SRC SDCHIERARCHIES_SRC" >&2; exit 2; }
LIB=${SDCMICRO_LIB:-/work/oracles/sdcmicro/lib}
VENV=${SKMOB_VENV:-/work/oracles/skmob39}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# What the three packages import, from Debian (R 4.2.2 in bookworm).
apt-get install -y r-base-dev r-cran-car r-cran-cardata r-cran-rmarkdown r-cran-knitr \
  r-cran-data.table r-cran-xtable r-cran-robustbase r-cran-e1071 r-cran-rcpp r-cran-ggplot2 \
  r-cran-shiny r-cran-haven r-cran-rhandsontable r-cran-dt r-cran-vim r-cran-httr \
  r-cran-jsonlite r-cran-rlang r-cran-stringr r-cran-slam r-cran-progressr r-cran-rglpk \
  r-cran-future r-cran-future.apply r-cran-cli r-cran-matrix

cp -R "$1" "$WORK/sdcMicro"
cp -R "$2" "$WORK/sdcTable"
cp -R "$3" "$WORK/sdcHierarchies"
# sdcMicro: drop the import of prettydoc (only its report template's HTML theme; not in Debian).
sed -i '/prettydoc/d' "$WORK/sdcMicro/NAMESPACE" "$WORK/sdcMicro/DESCRIPTION"
# sdcTable: drop SSBtools (only protectTable(method = "GAUSS") calls it; not in Debian).
sed -i '/SSBtools/d' "$WORK/sdcTable/NAMESPACE" "$WORK/sdcTable/DESCRIPTION"
# sdcHierarchies: drop the shiny GUI's packages (only hier_app() uses them).
sed -i '/shiny/d' "$WORK/sdcHierarchies/NAMESPACE"
sed -i -e 's/^Imports: shiny, shinyjs, shinyTree, jsonlite/Imports: jsonlite/' \
  -e '/^Depends: shinythemes/d' "$WORK/sdcHierarchies/DESCRIPTION"

mkdir -p "$LIB"
export R_LIBS="$LIB"
export MAKEFLAGS="${MAKEFLAGS:--j2}"
for pkg in "$HERE/highs" "$WORK/sdcHierarchies" "$WORK/sdcMicro" "$WORK/sdcTable"; do
  R CMD INSTALL --no-docs --no-html -l "$LIB" "$pkg"
done
Rscript -e 'for (p in c("sdcMicro", "sdcTable")) cat(p, format(packageVersion(p)), "\n")'

"$(pyenv root)/versions/3.9.18/bin/python" -m venv "$VENV"
"$VENV/bin/pip" install "scikit-mobility==1.3.1" "pandas==1.5.3" "numpy<1.24" "shapely<2" \
  "geopandas==0.10.2"
"$VENV/bin/python" -c "import skmob; print('scikit-mobility', skmob.__version__)"

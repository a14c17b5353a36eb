"""Check the import-layering contracts (pyproject.toml) on the installed package layout.

The source folders install under ``anoneval`` through setuptools' package-dir, which
import-linter cannot follow in an editable install; so the check runs on a copy laid out as
installed: ``anoneval/`` (from ``core/_root``) holding ``core``, ``plugins``, ``registry`` and
``testing``. Extra arguments go to ``lint-imports``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def installed_layout(dest: Path, root: Path = ROOT) -> Path:
    """Copy the sources into ``dest/anoneval`` as they install; returns ``dest``."""
    pkg = dest / "anoneval"
    skip = shutil.ignore_patterns("__pycache__", "_root", "testing")
    shutil.copytree(root / "core" / "_root", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(root / "core", pkg / "core", ignore=skip)
    shutil.copytree(root / "core" / "testing", pkg / "testing",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for top in ("plugins", "registry"):
        shutil.copytree(root / top, pkg / top, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(root / "pyproject.toml", dest / "pyproject.toml")
    return dest


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        dest = installed_layout(Path(tmp))
        env = {**os.environ, "PYTHONPATH": str(dest)}
        return subprocess.run(["lint-imports", "--no-cache", *sys.argv[1:]], cwd=dest,
                              env=env).returncode


if __name__ == "__main__":
    sys.exit(main())

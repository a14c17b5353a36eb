"""Build script: maps the source folders to ``anoneval.*`` and discovers their packages.

Everything else lives in ``pyproject.toml``. Any folder with an ``__init__.py`` under a mapped
folder ships, so a new plugin family cannot be left out of the wheel.
"""

from pathlib import Path

from setuptools import setup

#: Import name → source folder. ``anoneval`` (version, Python API, ``python -m anoneval``) and
#: ``anoneval.testing`` (the pytest plugin) live inside ``core/``.
PACKAGE_DIR = {
    "anoneval": "core/_root",
    "anoneval.core": "core",
    "anoneval.plugins": "plugins",
    "anoneval.registry": "registry",
    "anoneval.testing": "core/testing",
}


def discover(package_dir: dict[str, str], root: Path) -> list[str]:
    """Every package under the mapped folders, each under the name its nearest mapping gives."""
    by_folder = {folder: name for name, folder in package_dir.items()}
    packages = []
    for name, folder in package_dir.items():
        for init in sorted((root / folder).rglob("__init__.py")):
            rel_parts = init.parent.relative_to(root).parts
            if "__pycache__" in rel_parts or "build" in rel_parts:
                continue
            rel = "/".join(rel_parts)
            nearest = max((f for f in by_folder if rel == f or rel.startswith(f + "/")), key=len)
            if nearest == folder:
                rest = rel[len(folder):].strip("/").replace("/", ".")
                packages.append(name + ("." + rest if rest else ""))
    return packages


if __name__ == "__main__":
    setup(package_dir=PACKAGE_DIR,
          packages=discover(PACKAGE_DIR, Path(__file__).resolve().parent))

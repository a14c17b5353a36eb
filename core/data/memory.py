"""How much memory this process may still take: the tightest of the machine's, its cgroup's and
its address-space limit, so an input too large for it is refused before it is read."""

from __future__ import annotations

import os
from pathlib import Path

#: What to do about an input too large for memory.
MEMORY_HINT = ("read the data in parts with the Dask engine (--engine dask, pip install "
               "'anoneval[dask]') from a folder of Parquet files, or evaluate a sample")
_UNITS = ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB")


def human_bytes(n: float) -> str:
    """``n`` bytes as text with a binary unit, e.g. ``1.5 GiB``."""
    for unit in _UNITS:
        if abs(n) < 1024 or unit == _UNITS[-1]:
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except (OSError, ValueError):
        return None
    return int(text) if text.isdigit() else None  # "max" (no limit) is not a number


def _meminfo(key: str) -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            name, _, rest = line.partition(":")
            if name == key:
                return int(rest.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cgroup_room(cgroup_file: Path = Path("/proc/self/cgroup"),
                 root: Path = Path("/sys/fs/cgroup")) -> int | None:
    """The room left under this process's cgroup memory limit (v2, else v1), if any."""
    try:
        lines = cgroup_file.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, rel = line.split(":", 2)
        rel = rel.lstrip("/")
        if controllers == "":  # cgroup v2
            for folder in (root / rel, root):
                limit = _read_int(folder / "memory.max")
                if limit is not None:
                    used = _read_int(folder / "memory.current") or 0
                    return max(limit - used, 0)
        elif "memory" in controllers.split(","):
            for folder in (root / "memory" / rel, root / "memory"):
                limit = _read_int(folder / "memory.limit_in_bytes")
                if limit is not None and limit < 1 << 60:  # v1 writes a huge number for none
                    used = _read_int(folder / "memory.usage_in_bytes") or 0
                    return max(limit - used, 0)
    return None


def _address_space_room() -> int | None:
    """The room left under ``RLIMIT_AS`` (``ulimit -v``), if one is set."""
    try:
        import resource
    except ImportError:  # not on Windows
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    try:
        status = Path(f"/proc/{os.getpid()}/status").read_text()
        size = next(int(line.split()[1]) * 1024 for line in status.splitlines()
                    if line.startswith("VmSize:"))
    except (OSError, StopIteration, ValueError, IndexError):
        return None
    return max(soft - size, 0)


def available_memory() -> tuple[int, str] | None:
    """The memory this process may still allocate, in bytes, and which limit sets it (the
    machine's ``MemAvailable``, the cgroup's ``memory.max``, or ``RLIMIT_AS``); None when
    none can be read (then nothing is refused in advance)."""
    found = [(room, what) for room, what in (
        (_meminfo("MemAvailable"), "available on this machine (MemAvailable)"),
        (_cgroup_room(), "left under the cgroup's memory limit"),
        (_address_space_room(), "left under the address-space limit (ulimit -v)"),
    ) if room is not None]
    return min(found) if found else None


__all__ = ["MEMORY_HINT", "available_memory", "human_bytes"]

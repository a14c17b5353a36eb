"""The registry: plugin names to implementation classes, per kind.

Sources, in load order:

1. ``config.json`` (the built-ins): ``{kind: {name: {"class": "dotted.path.Class"}}}``, in the
   way the MobiDataLab mobility anonymizer's ``config.json`` lists its measures. Classes are
   imported lazily, the first time a name is used. Its ``"hook_plugins"`` (the workflows and
   their commands, :data:`BUILTIN_HOOK_PLUGINS`) are registered with them: ``config.json`` is
   the one list of built-in modules (the local engine's preloads derive from it too).
2. Entry points of group ``anoneval`` (installed third-party packages). Each names a module or
   object with pluggy hookimpls of the registration hooks (``risk_measure(register)``, ...).
   ``ANONEVAL_LOAD_PLUGINS`` set to a comma-separated list of distribution names loads only
   those; set and empty, none (the test suite and the generated docs use that).
3. An optional user registry file (``--registry FILE`` or ``ANONEVAL_REGISTRY``) in the format of
   ``config.json``; a class may be ``"path/to/file.py:Class"``, relative to that file.

A name may appear once per kind: a duplicate is an error naming both sources. A registry file
may also list ``"report_sections"``: modules whose ``report_section`` hookimpls draw a family's
part of the HTML report, imported only when a report is rendered.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import importlib
import importlib.util
import json
import os
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

import pluggy

from anoneval.core import hookspecs
from anoneval.core.api import PLUGIN_KINDS, Context, Measure, MeasureResult, Plugin
from anoneval.core.data.files import read_json
from anoneval.core.errors import DataError, PluginError, UnknownPluginError

ENTRY_POINT_GROUP = "anoneval"
ENV_REGISTRY = "ANONEVAL_REGISTRY"
#: Key of a registry file listing modules whose ``report_section`` hookimpls draw the HTML
#: report's sections of a family (``plugins/<family>/_report.py``).
SECTIONS_KEY = "report_sections"
ENV_LOAD_PLUGINS = "ANONEVAL_LOAD_PLUGINS"
#: Key of the built-in registry file naming pluggy plugins beyond its classes and report
#: sections (the workflows and their commands): name → ``module:Class``, made without arguments.
HOOKS_KEY = "hook_plugins"
BUILTIN_CONFIG = Path(__file__).with_name("config.json")
#: The built-in hook plugins, as ``config.json`` lists them.
BUILTIN_HOOK_PLUGINS: dict[str, str] = dict(
    json.loads(BUILTIN_CONFIG.read_text(encoding="utf-8")).get(HOOKS_KEY, {}))
BUILTIN_SOURCE = "anoneval (built-in)"


@functools.cache
def own_version() -> str:
    """anoneval's installed version (read once: every report carries it)."""
    try:
        return metadata.version("anoneval")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from an uninstalled tree
        return "0+unknown"


@dataclass
class Entry:
    """One registered implementation: where it came from and how to get its class."""

    kind: str
    name: str
    source: str
    distribution: str
    version: str
    target: str | type
    base_dir: Path | None = None
    _cls: type | None = field(default=None, repr=False)

    def load(self) -> type[Plugin]:
        """Import (once) and check the class."""
        if self._cls is None:
            cls = self.target if isinstance(self.target, type) else import_class(
                self.target, self.base_dir)
            _check_class(cls, self.kind, self.name, self.source)
            self._cls = cls
        return self._cls


#: Modules loaded from registry files (``file.py:Class``): module name → (path, source). The
#: engines load the same source in their worker processes, which cannot import such a file by
#: name (:func:`user_modules`, :func:`load_user_source`).
_USER_MODULES: dict[str, tuple[str, str]] = {}


def user_modules() -> dict[str, tuple[str, str]]:
    """The modules loaded from registry files in this process: name → (path, source)."""
    return dict(_USER_MODULES)


def load_user_module(file: Path) -> ModuleType:
    """The module of a registry file's ``file.py``, loaded once per process under a name fixed
    by its resolved path (the same in every process)."""
    resolved = str(file.resolve())
    name = "anoneval_user_" + hashlib.sha256(resolved.encode()).hexdigest()[:16]
    if name in sys.modules:
        return sys.modules[name]
    return load_user_source(name, resolved, importlib.util.decode_source(file.read_bytes()))


def load_user_source(name: str, path: str, source: str) -> ModuleType:
    """Module ``name`` from ``source`` (read from ``path``), unless already loaded: how a
    worker process gets the plugins of a registry file, by value."""
    if name in sys.modules:
        return sys.modules[name]
    module = importlib.util.module_from_spec(
        importlib.util.spec_from_loader(name, loader=None, origin=path))
    module.__file__ = path
    sys.modules[name] = module
    try:
        exec(compile(source, path, "exec"), module.__dict__)  # the plugin file, as python runs it
    except BaseException:
        del sys.modules[name]
        raise
    _USER_MODULES[name] = (path, source)
    return module


def load_user_sources(modules: dict[str, tuple[str, str]]) -> list[str]:
    """Load the modules of :func:`user_modules` (in a worker process); one that fails is
    skipped (it may belong to another run) and described in the returned list: a task that
    needs it then fails naming its module."""
    failed = []
    for name, (path, source) in modules.items():
        try:
            load_user_source(name, path, source)
        except Exception as exc:  # reported; the other modules load
            failed.append(f"{path}: {type(exc).__name__}: {exc}")
    return failed


def import_class(path: str, base_dir: Path | None = None) -> type:
    """Import ``pkg.mod.Class``, ``pkg.mod:Class`` or ``file.py:Class`` (file relative to
    ``base_dir``)."""
    if ":" in path:
        module_name, _, attr = path.rpartition(":")
    else:
        module_name, _, attr = path.rpartition(".")
    if not module_name or not attr:
        raise PluginError(f"class path {path!r} must look like 'package.module.Class', "
                          "'package.module:Class' or 'file.py:Class'")
    try:
        if module_name.endswith(".py"):
            file = Path(module_name)
            if not file.is_absolute() and base_dir is not None:
                file = base_dir / file
            if not file.is_file():
                raise PluginError(f"class path {path!r}: file {file} not found")
            module = load_user_module(file)
        else:
            module = importlib.import_module(module_name)
    except PluginError:
        raise
    except Exception as exc:
        raise PluginError(f"cannot import {module_name!r} for {path!r}: "
                          f"{type(exc).__name__}: {exc}") from exc
    try:
        return getattr(module, attr)  # type: ignore[no-any-return]
    except AttributeError:
        raise PluginError(f"module {module_name!r} has no attribute {attr!r}") from None


def _check_class(cls: Any, kind: str, name: str, source: str) -> None:
    from anoneval.core.api import Distance, LossMeasure, RiskMeasure, Synthesizer

    base = {"risk_measure": RiskMeasure, "loss_measure": LossMeasure, "distance": Distance,
            "synthesizer": Synthesizer}[kind]
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise PluginError(f"{kind} {name!r} from {source}: {cls!r} is not a subclass of "
                          f"{base.__module__}.{base.__qualname__}")
    if getattr(cls, "name", None) != name:
        raise PluginError(f"{kind} {name!r} from {source}: the class declares "
                          f"name = {getattr(cls, 'name', None)!r}")
    for attr in ("description",):
        if not isinstance(getattr(cls, attr, None), str):
            raise PluginError(f"{kind} {name!r} from {source}: missing class attribute {attr!r}")


class _Timing:
    """Built-in lifecycle plugin: times each measure into ``ctx.extra['seconds']``."""

    @hookspecs.hookimpl
    def before_measure(self, measure: Measure, ctx: Context) -> None:
        ctx.extra["_t0"] = time.perf_counter()

    @hookspecs.hookimpl
    def after_measure(self, measure: Measure, result: MeasureResult | None, ctx: Context) -> None:
        ctx.extra["seconds"] = time.perf_counter() - ctx.extra.pop("_t0")


class Registry:
    """Names → implementation classes per kind, with provenance, plus the pluggy manager."""

    def __init__(self) -> None:
        self._entries: dict[str, dict[str, Entry]] = {k: {} for k in PLUGIN_KINDS}
        self.load_errors: list[str] = []
        self._read: list[tuple[str, Path]] = []  # registry files and the plugin sources they name
        self._section_modules: dict[str, str] = {}  # module path -> source
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.pm.register(_Timing(), name="anoneval.timing")

    # -- adding --------------------------------------------------------------------------------

    def add(self, entry: Entry) -> None:
        """Add one entry; a duplicate name within the kind is an error naming both sources."""
        if entry.kind not in self._entries:
            raise PluginError(f"{entry.source}: unknown plugin kind {entry.kind!r}; "
                              f"allowed: {', '.join(PLUGIN_KINDS)}")
        old = self._entries[entry.kind].get(entry.name)
        if old is not None:
            raise PluginError(f"duplicate {entry.kind} name {entry.name!r}: registered by "
                              f"{old.source} and by {entry.source}")
        self._entries[entry.kind][entry.name] = entry

    def register(self, cls: type[Plugin], source: str = "python", distribution: str = "",
                 version: str = "") -> None:
        """Register a class directly (tests, notebooks); ``cls.kind`` and ``cls.name`` decide."""
        kind = getattr(cls, "kind", None)
        if kind not in PLUGIN_KINDS:
            raise PluginError(f"{cls!r} has no valid 'kind'; allowed: {', '.join(PLUGIN_KINDS)}")
        name = getattr(cls, "name", None)
        if not isinstance(name, str) or not name:
            raise PluginError(f"{cls!r} has no 'name'")
        entry = Entry(kind, name, source, distribution, version, cls)
        entry.load()
        self.add(entry)

    def load_file(self, path: str | Path, source: str | None = None,
                  distribution: str = "", version: str = "") -> None:
        """Add every entry of a registry file in ``config.json``'s format."""
        path = Path(path)
        source = source or f"registry file {path}"
        try:
            data = read_json(path, "registry file")
        except DataError as exc:
            raise PluginError(f"{source}: cannot read: {exc}") from None
        if not isinstance(data, dict):
            raise PluginError(f"{source}: expected an object of kinds")
        self._read.append((source if source.startswith("registry file") else
                           f"registry file of {source}", path))
        for kind, items in data.items():
            if kind.startswith("$") or kind == "description":
                continue
            if kind == SECTIONS_KEY:
                self._load_sections(items, source)
                continue
            if kind == HOOKS_KEY and path == BUILTIN_CONFIG:  # see load_builtins
                continue
            if kind not in PLUGIN_KINDS:
                raise PluginError(f"{source}: unknown kind {kind!r}; "
                                  f"allowed: {', '.join(PLUGIN_KINDS)}")
            if not isinstance(items, dict):
                raise PluginError(f"{source}: {kind} must map names to {{\"class\": ...}}")
            for name, spec in items.items():
                target = spec.get("class") if isinstance(spec, dict) else None
                if not isinstance(target, str):
                    raise PluginError(f"{source}: {kind}.{name} needs a \"class\" string")
                self.add(Entry(kind, name, source, distribution, version, target,
                               base_dir=path.parent))
                module = target.rpartition(":")[0]
                if module.endswith(".py"):
                    self._read.append((f"source of {kind} {name!r} ({source})",
                                       path.parent / module))

    def _load_sections(self, modules: Any, source: str) -> None:
        """Note the listed report-section modules; :meth:`load_report_sections` imports them."""
        if not (isinstance(modules, list) and all(isinstance(m, str) for m in modules)):
            raise PluginError(f"{source}: {SECTIONS_KEY} must be a list of module paths")
        self._section_modules.update((path, source) for path in modules)

    def load_report_sections(self) -> None:
        """Register the ``report_section`` hookimpls of every listed module (once); the HTML
        report calls this, so building a registry imports no plotting code."""
        for path, source in self._section_modules.items():
            if self.pm.has_plugin(path):
                continue
            try:
                module = importlib.import_module(path)
            except Exception as exc:
                raise PluginError(f"{source}: cannot import report section module {path!r}: "
                                  f"{type(exc).__name__}: {exc}") from exc
            self.pm.register(module, name=path)

    def load_builtins(self) -> None:
        """The built-in plugins of ``config.json`` (and its report-section modules)."""
        self.load_file(BUILTIN_CONFIG, BUILTIN_SOURCE, "anoneval", own_version())
        for name, path in BUILTIN_HOOK_PLUGINS.items():
            self.add_hook_plugin(import_class(path)(), BUILTIN_SOURCE, "anoneval",
                                 own_version(), name=name)

    def load_entry_points(self, group: str = ENTRY_POINT_GROUP) -> None:
        """Register installed third-party plugins; a broken one is recorded, not fatal.

        ``$ANONEVAL_LOAD_PLUGINS``, when set, lists the distributions to load (empty: none).
        """
        allowed = os.environ.get(ENV_LOAD_PLUGINS)
        wanted = None if allowed is None else {d.strip() for d in allowed.split(",") if d.strip()}
        for ep in metadata.entry_points(group=group):
            dist = ep.dist.name if ep.dist is not None else "?"
            if wanted is not None and dist not in wanted:
                continue
            version = ep.dist.version if ep.dist is not None else "?"
            source = f"{dist} {version} (entry point {ep.name!r})"
            try:
                plugin = ep.load()
                self.add_hook_plugin(plugin, source, dist, version, name=f"{dist}:{ep.name}")
            except Exception as exc:
                self.load_errors.append(
                    f"plugin distribution {dist!r} (entry point {ep.name!r} = {ep.value!r}) "
                    f"failed to load: {type(exc).__name__}: {exc}")

    def add_hook_plugin(self, plugin: object, source: str, distribution: str = "",
                        version: str = "", name: str | None = None) -> None:
        """Register a pluggy plugin object and collect the classes its hooks register."""
        name = self.pm.register(plugin, name=name)
        try:
            self.pm.check_pending()
            staged: list[Entry] = []
            for kind in PLUGIN_KINDS:
                caller = getattr(self.pm.hook, kind)
                for impl in caller.get_hookimpls():
                    if impl.plugin is not plugin:
                        continue

                    def register(cls: type, _kind: str = kind) -> None:
                        if getattr(cls, "kind", None) != _kind:
                            raise PluginError(f"{source}: {cls!r} registered as {_kind} but "
                                              f"declares kind {getattr(cls, 'kind', None)!r}")
                        staged.append(Entry(_kind, getattr(cls, "name", ""), source,
                                            distribution, version, cls))

                    impl.function(register=register)
            for entry in staged:
                entry.load()
            for entry in staged:
                self.add(entry)
        except Exception:
            self.pm.unregister(name=name)
            raise

    # -- looking up ----------------------------------------------------------------------------

    def read_paths(self) -> list[tuple[str, Path]]:
        """``(what, path)`` of every file this registry reads: its registry files and the
        ``file.py`` plugin sources they name (outputs must never overwrite them)."""
        return list(self._read)

    def names(self, kind: str) -> list[str]:
        return sorted(self._entries[kind])

    def entries(self, kind: str | None = None) -> Iterator[Entry]:
        for k in (kind,) if kind else PLUGIN_KINDS:
            yield from (self._entries[k][n] for n in sorted(self._entries[k]))

    def entry(self, kind: str, name: str) -> Entry:
        try:
            return self._entries[kind][name]
        except KeyError:
            raise UnknownPluginError(self.unknown_message(kind, name)) from None

    def kinds_of(self, name: str, kinds: Iterable[str] = PLUGIN_KINDS) -> list[str]:
        return [k for k in kinds if name in self._entries[k]]

    def unknown_message(self, kind: str | Iterable[str], name: str) -> str:
        kinds = [kind] if isinstance(kind, str) else list(kind)
        known = sorted({n for k in kinds for n in self._entries[k]})
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
        lower = [n for n in known if n.lower() == name.lower()]
        guess = (lower or close)
        msg = f"unknown {' or '.join(kinds)} {name!r}."
        if guess:
            msg += f" Did you mean {' or '.join(map(repr, guess))}?"
        msg += f" Known: {', '.join(known) or '(none)'}."
        msg += " If it comes from a third-party package, that plugin may not be installed."
        if self.load_errors:
            msg += " Plugins that failed to load: " + "; ".join(self.load_errors)
        return msg

    def get(self, kind: str, name: str) -> type[Plugin]:
        return self.entry(kind, name).load()

    def create(self, kind: str, name: str, params: Any = None) -> Plugin:
        return self.get(kind, name)(params)


def build_registry(*, builtins: bool = True, entry_points: bool = True,
                   user_file: str | Path | None = None) -> Registry:
    """A fresh registry from the chosen sources (no global state)."""
    registry = Registry()
    if builtins:
        registry.load_builtins()
    if entry_points:
        registry.load_entry_points()
    if user_file:
        registry.load_file(user_file)
    return registry


_DEFAULT: dict[tuple[str | None, str | None], Registry] = {}


def default_registry(user_file: str | Path | None = None) -> Registry:
    """The shared registry: built-ins, entry points and ``user_file`` or ``$ANONEVAL_REGISTRY``.

    Built once per user file and reused, so an embedding benchmark pays for discovery once.
    """
    user = str(user_file) if user_file else os.environ.get(ENV_REGISTRY) or None
    key = (user, os.environ.get(ENV_LOAD_PLUGINS))
    if key not in _DEFAULT:
        _DEFAULT[key] = build_registry(user_file=user)
    return _DEFAULT[key]


def plugin_info(entry: Entry) -> dict[str, Any]:
    """What ``anoneval plugins`` lists for one entry."""
    info: dict[str, Any] = {"name": entry.name, "kind": entry.kind, "source": entry.source,
                            "distribution": entry.distribution, "version": entry.version}
    try:
        cls = entry.load()
        info["description"] = cls.description
        info["accepts"] = list(getattr(cls, "accepts", ()))
    except PluginError as exc:
        info["description"] = None
        info["error"] = str(exc)
    return info


__all__ = ["Entry", "Registry", "build_registry", "default_registry", "import_class",
           "own_version", "plugin_info"]

"""The simulated apps. Every module in this package that defines a :class:`PhoneApp` subclass
with a ``key`` is installed; ``default_apps()`` lists them in launcher order."""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil

from gui_gym.envs.androidworld.phone import PhoneApp

__all__ = ["app_classes", "default_apps"]


@functools.cache
def app_classes() -> tuple[type[PhoneApp], ...]:
    """Every app class in this package, sorted by ``launcher_order`` then title."""
    found: dict[str, type[PhoneApp]] = {}
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, PhoneApp) and cls.key and cls.__module__ == module.__name__:
                if cls.key in found:
                    raise ValueError(f"two apps use the key {cls.key!r}")
                found[cls.key] = cls
    return tuple(sorted(found.values(), key=lambda c: (c.launcher_order, c.title)))


def default_apps() -> list[PhoneApp]:
    """One fresh instance of every simulated app, in launcher order."""
    return [cls() for cls in app_classes()]

"""Public names of a package imported on first use (PEP 562), the same way everywhere.

A package lists ``name -> defining module`` and gets the ``__getattr__`` and
``__dir__`` it needs, so importing it costs nothing until a name is used. The root
package ``knowledge`` keeps its own copy, so that importing it loads nothing else.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, where: Mapping[str, str], public: Iterable[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: each name in ``where`` is read from its
    module on first use; a name that is itself a sub-package of ``package`` is that
    module."""
    names = sorted(public)

    def __getattr__(name: str) -> Any:
        module_name = where.get(name)
        if module_name is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(module_name)
        return module if module_name == f"{package}.{name}" else getattr(module, name)

    def __dir__() -> list[str]:
        return sorted({*vars(importlib.import_module(package)), *names})

    return __getattr__, __dir__

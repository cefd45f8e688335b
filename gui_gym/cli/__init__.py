"""The ``gui-gym`` command: envs, evaluation, recording, benchmarks, training and inspection.

One module per command group (``envs``, ``eval``, ``data``, ``rewards``, ``train``, ``view``,
``plot``, ``engines``), each a thin layer over library calls; ``bench/`` holds the speed benchmarks
``gui-gym bench`` runs. Heavy imports happen inside each command, so ``gui-gym --help`` is
instant.
"""

from __future__ import annotations

# Import order is the order of `gui-gym --help`; each module registers its commands on `app`.
# isort: off
from gui_gym.cli._common import app
from gui_gym.cli import envs  # noqa: F401
from gui_gym.cli import eval  # noqa: F401
from gui_gym.cli import data  # noqa: F401
from gui_gym.cli import export  # noqa: F401
from gui_gym.cli import rewards  # noqa: F401
from gui_gym.cli import train  # noqa: F401
from gui_gym.cli import models  # noqa: F401
from gui_gym.cli import view  # noqa: F401
from gui_gym.cli import plot  # noqa: F401
from gui_gym.cli import engines  # noqa: F401

# isort: on

__all__ = ["app", "main"]


def main() -> None:
    """Run the ``gui-gym`` command line."""
    app(prog_name="gui-gym")

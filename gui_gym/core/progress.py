"""Progress bars: the one rule for when gui-gym shows them, and the tqdm bar every loop uses.

A log file is not a terminal: a bar redrawn once per episode or batch floods it, so bars are
shown only where someone watches them. In order:

1. ``GUI_GYM_PROGRESS=1`` shows them, ``GUI_GYM_PROGRESS=0`` hides them, wherever output goes.
2. Else ``TQDM_DISABLE`` decides when it is set (tqdm's own switch: ``1``/``true`` hides,
   empty/``0``/``false`` shows).
3. Else they are shown when stderr is a terminal, or in a Jupyter kernel.

A caller's own switch (``progress=False``, ``--no-progress``) always hides them. The library
loops (evaluation, recording, SOP, the trainers) and the CLI ask :func:`progress_enabled`;
the CLI also sets ``TQDM_DISABLE=1`` off a terminal so that the bars of the libraries it
calls (transformers, datasets) are quiet too, and model loads from library calls wrap
themselves in :func:`library_bars_follow_the_rule`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

PROGRESS_ENV = "GUI_GYM_PROGRESS"

_ON = ("1", "true", "yes", "on")
_OFF = ("0", "false", "no", "off", "")


def _in_notebook() -> bool:
    # A Jupyter kernel's stderr is a pipe, yet someone watches its cells.
    shell = sys.modules.get("IPython")
    if shell is None or "ipykernel" not in sys.modules:
        return False
    get_ipython = getattr(shell, "get_ipython", None)
    return get_ipython is not None and type(get_ipython()).__name__ == "ZMQInteractiveShell"


def progress_enabled(requested: bool = True) -> bool:
    """Whether to show a progress bar now (the module docstring's rule).

    Args:
        requested: The caller's own switch; False always hides the bar.

    Raises:
        ValueError: when ``GUI_GYM_PROGRESS`` is set to something other than 0/1.
    """
    if not requested:
        return False
    forced = os.environ.get(PROGRESS_ENV)
    if forced is not None:
        value = forced.strip().lower()
        if value in _ON:
            return True
        if value in _OFF:
            return False
        raise ValueError(f"{PROGRESS_ENV}={forced!r}: use 1 (show progress bars) or 0 (hide)")
    tqdm_disable = os.environ.get("TQDM_DISABLE")
    if tqdm_disable is not None:
        return tqdm_disable.strip().lower() in _OFF
    try:
        on_a_terminal = sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stderr
        on_a_terminal = False
    return on_a_terminal or _in_notebook()


def progress_bar(iterable: Iterable[Any] | None = None, *, enabled: bool = True, **kwargs: Any):
    """A tqdm bar (a notebook widget in Jupyter) that is shown only when
    :func:`progress_enabled` says so; ``kwargs`` go to tqdm (``total``, ``desc``, ...)."""
    from tqdm.auto import tqdm

    return tqdm(iterable, disable=not progress_enabled(enabled), **kwargs)


@contextmanager
def library_bars_follow_the_rule() -> Iterator[None]:
    """Inside, the bars Hugging Face libraries draw themselves (transformers' "Loading
    weights", the hub's downloads) are hidden where :func:`progress_enabled` hides gui-gym's;
    their switches are restored after. Wrap model loads with it."""
    if progress_enabled():
        yield
        return
    restore = []
    try:
        from transformers.utils import logging as transformers_logging

        if transformers_logging.is_progress_bar_enabled():
            transformers_logging.disable_progress_bar()
            restore.append(transformers_logging.enable_progress_bar)
    except ImportError:  # no transformers: nothing of it to quiet
        pass
    try:
        from huggingface_hub.utils import (
            are_progress_bars_disabled,
            disable_progress_bars,
            enable_progress_bars,
        )

        if not are_progress_bars_disabled():
            disable_progress_bars()
            restore.append(enable_progress_bars)
    except ImportError:
        pass
    try:
        yield
    finally:
        for enable in restore:
            enable()

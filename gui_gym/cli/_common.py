"""The Typer app every command module registers on, and the helpers they share.

User mistakes: one line on stderr, exit code 2, no traceback
------------------------------------------------------------
A command reports a user mistake by raising :class:`UsageError` (or ``typer.BadParameter``);
the app prints it as ``gui-gym <command>: error: <message>`` on one line of stderr and exits
with code 2. Click's own errors (a missing option, a value that does not parse, an unknown
command) get the same one line. A missing optional dependency is not a mistake but is also
one line (exit code 1), naming the ``pip install`` that fixes it. Anything else is a bug and
keeps its traceback.

Off a terminal (a log file, CI) the app turns progress bars off (``gui_gym.core.progress``
decides, ``GUI_GYM_PROGRESS=1`` keeps them; ``TQDM_DISABLE=1`` quiets other libraries' bars),
so logs hold results, not thousands of redraws.

A failed run
------------
A command that writes a folder or file declares it with :func:`output_dir` /
:func:`output_file` before it starts. When it then fails with a user mistake (one line, the
cases above, also when found mid-run) whatever it created there is removed, so the corrected
command starts afresh instead of meeting a folder made with other arguments; an output that
existed before the run (a resumed run) is left as it was. A crash or an interrupt (Ctrl-C,
a killed process) keeps the partial output, which the same command resumes.

Validation helpers (each raises :class:`UsageError` naming the closest match and what is
allowed; use them rather than re-checking by hand):

* :func:`choose` ``(value, allowed, what)``: one of a fixed list (a method, a kind, a split).
* :func:`check_env_id` ``(env_id)``: a registered gui-gym id.
* :func:`open_env` ``(env_id, **kwargs)``: ``gym.make``, whose bad arguments (unknown task,
  split, category, keyword) and missing dependencies become one line.
* :func:`check_split` ``(split)``: ``train``, ``test`` or ``all``.
* :func:`check_agent` ``(agent, env)``: a built-in agent ``make_agent`` can build for ``env``.
* :func:`check_device` ``(device)``: a torch device that exists here.
* :func:`existing_file` / :func:`existing_dir` ``(path, what)``: a path that must exist.
* :func:`model_folder` ``(value, what)``: a ``--model``: a name, a ``.gguf`` file or a folder.
* :func:`output_file` / :func:`output_dir` ``(path, what)``: a path a command will write.
* :func:`parse_kwargs` ``(pairs)``: ``--env-arg key=value`` pairs.

Commands added later need nothing else: raising ``UsageError`` is the whole contract, and
``tests/test_cli_errors.py`` tries a wrong value for every option of every registered command.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import shutil
import sys
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

try:  # typer >= 0.26 vendors click and raises the vendored classes
    from typer._click import exceptions as click_errors
    from typer._click.globals import get_current_context
except ImportError:  # pragma: no cover - older typer raises click's own
    from click import exceptions as click_errors  # type: ignore[no-redef]
    from click import get_current_context  # type: ignore[no-redef]

if TYPE_CHECKING:
    import gymnasium as gym

__all__ = [
    "EmbedderOption",
    "NoProgressOption",
    "OrmModelOption",
    "ProgressModelOption",
    "UsageError",
    "app",
    "check_agent",
    "check_device",
    "check_env_id",
    "check_reward_model_folders",
    "check_split",
    "choose",
    "closest",
    "existing_dir",
    "existing_file",
    "model_folder",
    "open_env",
    "output_dir",
    "output_file",
    "parse_kwargs",
    "unknown",
]

EXIT_USAGE = 2
"""Exit code of a user mistake (click's convention)."""
EXIT_MISSING_DEPENDENCY = 1
SPLITS = ("train", "test", "all")
_MAX_LISTED = 12
"""Allowed values listed in full up to this many; longer lists are cut (with a count)."""

NoProgressOption = Annotated[bool, typer.Option("--no-progress", help="hide the progress bars")]
"""The ``--no-progress`` flag every long-running command takes."""
ProgressModelOption = Annotated[
    Path | None, typer.Option(help="ProgRM folder (default: env milestones)")
]
"""``--progress-model``, as every command with a reward stack takes it."""
OrmModelOption = Annotated[
    Path | None,
    typer.Option(help="outcome reward model folder (gui-gym train-progress --kind orm)"),
]
"""``--orm-model``, as every command with a reward stack takes it."""
EmbedderOption = Annotated[str, typer.Option(help="milestone matching: minilm or hashing")]
"""``--embedder`` (default ``minilm``), as every command with a reward stack takes it."""


class UsageError(click_errors.UsageError):
    """A user mistake: printed as one line on stderr, exit code 2."""

    def __init__(self, message: str) -> None:
        super().__init__(message, ctx=get_current_context(silent=True))


class MissingDependency(click_errors.ClickException):
    """An optional dependency is not installed: one line on stderr, exit code 1."""

    exit_code = EXIT_MISSING_DEPENDENCY


def closest(value: str, allowed: Iterable[str]) -> str | None:
    """The allowed value nearest to ``value`` (difflib), or None when nothing is close."""
    candidates = [str(a) for a in allowed]
    match = difflib.get_close_matches(str(value), candidates, n=1, cutoff=0.5)
    if match:
        return match[0]
    folded = {c.lower(): c for c in candidates}  # `clock` for `Clock`, `wikihow` for `WikiHow`
    match = difflib.get_close_matches(str(value).lower(), list(folded), n=1, cutoff=0.5)
    return folded[match[0]] if match else None


def _listing(allowed: Sequence[str]) -> str:
    shown = ", ".join(allowed[:_MAX_LISTED])
    return shown if len(allowed) <= _MAX_LISTED else f"{shown}, ... ({len(allowed)} in all)"


def unknown(
    what: str,
    value: Any,
    allowed: Sequence[str],
    see: str = "",
    shown: Sequence[str] | None = None,
) -> UsageError:
    """The error for a value not among ``allowed``: the closest match, then what is allowed
    (``shown``, a shorter summary, when given; a long list is cut)."""
    near = closest(str(value), allowed)
    hint = f"did you mean {near!r}? " if near is not None and near != value else ""
    where = f" (see {see})" if see else ""
    listing = _listing(list(shown if shown is not None else allowed))
    return UsageError(f"unknown {what} {value!r}; {hint}allowed: {listing}{where}")


def choose(value: str, allowed: Sequence[str], what: str) -> str:
    """``value`` when it is one of ``allowed``.

    Raises:
        UsageError: naming the closest allowed value and the list.
    """
    if value not in allowed:
        raise unknown(what, value, allowed)
    return value


def check_split(split: str) -> str:
    """``split`` when it is ``train``, ``test`` or ``all``."""
    return choose(split, SPLITS, "split")


def _registered_ids() -> list[str]:
    import gui_gym

    return [
        *gui_gym.ENV_IDS,
        *gui_gym.ALFWORLD_ENV_IDS,
        *gui_gym.REPLAY_ENV_IDS,
        *gui_gym.MINIWOB_ENV_IDS,
    ]


def check_env_id(env_id: str, allowed: Sequence[str] | None = None) -> str:
    """``env_id`` when it is registered (or among ``allowed``, a command's narrower list)."""
    import gui_gym

    if allowed is not None:
        ids, shown = list(allowed), None
    else:
        ids = _registered_ids()
        per_task = len(gui_gym.MINIWOB_ENV_IDS) - 1
        shown = [
            *gui_gym.ENV_IDS,
            *gui_gym.ALFWORLD_ENV_IDS,
            *gui_gym.REPLAY_ENV_IDS,
            "GuiGym/MiniWoB-v0",
            f"GuiGym/MiniWoB-<task>-v0 ({per_task} tasks)",
        ]
    if env_id not in ids:
        raise unknown("env id", env_id, ids, see="gui-gym list", shown=shown)
    return env_id


def _constructor_error(env_id: str, err: BaseException) -> UsageError | None:
    """The one-line error for a constructor's rejection of its arguments (None for a bug)."""
    import gymnasium as gym

    if isinstance(err, gym.error.DependencyNotInstalled):
        raise MissingDependency(_one_line(str(err))) from None
    if isinstance(err, KeyError):  # unknown task: the suite's message names close matches
        reason = err.args[0] if err.args else err
        return UsageError(f"{env_id}: {reason} (see gui-gym list {env_id} --tasks)")
    if isinstance(err, ValueError):
        return UsageError(f"{env_id}: {err}")
    unexpected = re.search(r"unexpected keyword argument '(\w+)'", str(err))
    if isinstance(err, TypeError) and unexpected:
        return UsageError(
            f"{env_id} takes no argument {unexpected.group(1)!r} (see the Arguments section "
            f"of its class docstring)"
        )
    return None


def open_env(env_id: str, **kwargs: Any) -> gym.Env:
    """``gym.make(env_id, **kwargs)`` for a command: every rejected argument is one line.

    Raises:
        UsageError: an unknown id, task, split or category, a bad value or unknown keyword.
        MissingDependency: the id's optional extra is not installed.
    """
    import gymnasium as gym

    import gui_gym  # noqa: F401  (registers the ids)

    check_env_id(env_id)
    if "split" in kwargs and kwargs["split"] is not None and not isinstance(kwargs["split"], str):
        raise UsageError(f"split must be a string, got {kwargs['split']!r}")
    try:
        return gym.make(env_id, **kwargs)
    except (KeyError, ValueError, TypeError, gym.error.DependencyNotInstalled) as err:
        mistake = _constructor_error(env_id, err)
        if mistake is None:
            raise
        raise mistake from None


def check_agent(agent: str, env: gym.Env, seed: int = 0) -> str:
    """``agent`` when ``gui_gym.agents.named.make_agent`` can build it for ``env``."""
    from gui_gym.agents.named import AGENTS, make_agent

    try:
        make_agent(agent, env, seed)
    except (ValueError, TypeError) as err:  # TypeError: an agent made for other envs
        near = closest(agent, [a for a in AGENTS if "<" not in a])
        unknown_name = str(err).startswith("unknown agent")
        hint = f" (did you mean {near!r}?)" if unknown_name and near is not None else ""
        raise UsageError(f"{err}{hint}") from None
    return agent


def check_device(device: str | None) -> str | None:
    """``device`` when torch can use it (None: the command's default)."""
    if device is None:
        return None
    import torch

    try:
        parsed = torch.device(device)
    except (RuntimeError, ValueError):
        raise UsageError(f"unknown --device {device!r}; use cpu, cuda, cuda:N or mps") from None
    if parsed.type == "cuda" and not torch.cuda.is_available():
        raise UsageError(f"--device {device}: no CUDA device is visible to torch here")
    if parsed.type == "mps" and not torch.backends.mps.is_available():
        raise UsageError(f"--device {device}: MPS is not available here")
    return device


def existing_file(path: Path, what: str = "file") -> Path:
    """``path`` when it is an existing file (``what``: the option, e.g. ``--data``)."""
    return _existing(path, what, folder=False)


def existing_dir(path: Path, what: str = "folder") -> Path:
    """``path`` when it is an existing folder (``what``: the option, e.g. ``--dataset``)."""
    return _existing(path, what, folder=True)


def model_folder(value: str | Path, what: str = "--model") -> Path:
    """The Hugging Face folder a ``--model`` value names: a registry name (``gui-gym
    models``; converted into the cache on first use), a ``.gguf`` file, or a model folder.
    The one resolver every command's model option goes through
    (:func:`gui_gym.models.llm.local.resolve_model`); its mistakes are one line."""
    from gui_gym.models.llm.local import ModelError, resolve_model

    try:
        return resolve_model(value, what)
    except ModelError as err:
        raise UsageError(str(err)) from None


def _existing(path: Path, what: str, *, folder: bool) -> Path:
    """``path`` when it exists and is a folder (``folder``) or a file (not ``folder``);
    else a :class:`UsageError` naming ``what`` and what is wrong."""
    kind, other = ("folder", "file") if folder else ("file", "folder")
    if not path.exists():
        raise UsageError(f"{what}: no such {kind}: {path}")
    if not (path.is_dir() if folder else path.is_file()):
        raise UsageError(f"{what}: {path} is a {other}, not a {kind}")
    return path


def check_reward_model_folders(
    prm_model: Path | None, progress_model: Path | None, orm_model: Path | None
) -> None:
    """Check the reward-model folders a command was given (``--prm-model``,
    ``--progress-model``, ``--orm-model``; None: not given) before anything loads."""
    for folder, what in (
        (prm_model, "--prm-model"),
        (progress_model, "--progress-model"),
        (orm_model, "--orm-model"),
    ):
        if folder is not None:
            existing_dir(folder, what)


# Outputs the running command declared (output_file / output_dir) that did not exist when it
# declared them: what a failed run removes (see "A failed run" in the module docstring).
_NEW_OUTPUTS: list[Path] = []
# The exclusive locks on the running command's outputs (gui_gym.core.files.lock_output),
# held until the command ends: a second run writing the same output is refused.
_OUTPUT_LOCKS = contextlib.ExitStack()
_OUTPUT_PATHS: list[Path] = []  # every output the running command declared


def _declare_output(path: Path, what: str) -> None:
    from gui_gym.core.files import OutputInUseError, lock_output

    created = path  # the outermost folder the run will create on the way (runs/ of runs/a/b)
    while created.parent != created and not created.parent.exists():
        created = created.parent
    try:  # first the lock: a refused run declares nothing, so its cleanup removes nothing
        # a data-parallel launch (accelerate, torchrun) is one run of several processes: rank 0
        # holds the lock, the other ranks write nothing there (train/data_parallel.py)
        if int(os.environ.get("RANK", "0") or 0) == 0:
            _OUTPUT_LOCKS.enter_context(lock_output(path, what))
    except OutputInUseError as err:
        raise UsageError(str(err)) from None
    except OSError as err:  # a read-only or missing parent folder
        raise UsageError(f"{what} {path}: cannot write there ({err.strerror})") from None
    _OUTPUT_PATHS.append(path)
    if path.exists():
        return
    if created not in _NEW_OUTPUTS:
        _NEW_OUTPUTS.append(created)


def _remove_new_outputs() -> list[Path]:
    """Remove what the failed command created at its declared outputs; returns those paths."""
    removed = []
    for path in _NEW_OUTPUTS:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        elif path.exists():
            path.unlink(missing_ok=True)
        else:
            continue
        removed.append(path)
    _NEW_OUTPUTS.clear()
    return removed


def output_file(path: Path | None, what: str = "--out") -> Path | None:
    """``path`` when a file can be written there (not a folder, not under a file); a failed
    run removes it again if it did not exist before."""
    if path is None:
        return None
    if path.is_dir():
        raise UsageError(f"{what} {path} is a folder; give a file path")
    return _writable_under(path, what)


def output_dir(path: Path, what: str = "--out") -> Path:
    """``path`` when a folder can be made or reused there (not an existing file); a failed
    run removes it again if it did not exist before."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"{what} {path} is a file; give a folder")
    return _writable_under(path, what)


def _writable_under(path: Path, what: str) -> Path:
    """``path`` declared as an output (:func:`_declare_output`) once no parent of it is a
    file: the check :func:`output_file` and :func:`output_dir` share."""
    blocking = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise UsageError(f"{what} {path}: {blocking} is a file, not a folder")
    _declare_output(path, what)
    return path


def parse_kwargs(pairs: list[str] | None) -> dict[str, Any]:
    """``key=value`` pairs; values are read as JSON when they parse, else kept as strings."""
    out: dict[str, Any] = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise UsageError(f"--env-arg expects key=value, got {pair!r}")
        key, value = pair.split("=", 1)
        if not key.isidentifier():
            raise UsageError(f"--env-arg key must be a Python name, got {key!r}")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _print_error(err: click_errors.ClickException, removed: Sequence[Path] = ()) -> None:
    ctx = getattr(err, "ctx", None)
    where = ctx.command_path if ctx is not None else "gui-gym"
    message = _one_line(err.format_message())
    if removed:
        names = ", ".join(str(path) for path in removed)
        message += (
            f" (removed {names}, which this run had started: the corrected rerun starts afresh)"
        )
    typer.echo(f"{where}: error: {message}", err=True)


def _disk_full(err: BaseException) -> bool:
    """Whether ``err`` (or its cause) is a full disk: ``ENOSPC``/``EDQUOT``, or a library's
    own error that says so (safetensors' ``SafetensorError: No space left on device``)."""
    import errno

    seen: BaseException | None = err
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if "no space left on device" in str(seen).lower():
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _disk_full_message(err: BaseException) -> str:
    where = getattr(err, "filename", None) or ", ".join(str(p) for p in _OUTPUT_PATHS)
    return (
        f"the disk is full (writing {where or 'the output'}); free space and rerun the same "
        "command: what was written before is kept and the run resumes"
    )


def _quiet_progress_off_a_tty() -> None:
    # gui-gym's own bars follow core.progress's rule; where it hides them (a log file, CI),
    # TQDM_DISABLE=1 also quiets the bars of the libraries the commands call (transformers,
    # datasets), which read TQDM_* variables as their defaults.
    from gui_gym.core.progress import progress_enabled

    try:
        enabled = progress_enabled()
    except ValueError as err:  # a bad GUI_GYM_PROGRESS
        raise UsageError(str(err)) from None
    if not enabled:
        os.environ.setdefault("TQDM_DISABLE", "1")


def _one_line_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    line: str | None = None,
) -> str:
    # A warning is news for the user, not a traceback: one line, without the source line.
    return f"warning: {_one_line(str(message))}\n"


class OneLineErrors(TyperGroup):
    """The ``gui-gym`` group: prints every user mistake as one line (module docstring)."""

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            try:
                return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
            finally:
                _OUTPUT_LOCKS.close()
                _OUTPUT_PATHS.clear()
        formatwarning = warnings.formatwarning
        warnings.formatwarning = _one_line_warning
        tqdm_disable = os.environ.get("TQDM_DISABLE")
        _NEW_OUTPUTS.clear()
        try:
            _quiet_progress_off_a_tty()
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click_errors.NoArgsIsHelpError as err:  # bare `gui-gym`: the help (rich prints it)
            if err.message.strip():
                typer.echo(err.message)
            sys.exit(0)
        except click_errors.ClickException as err:
            _print_error(err, _remove_new_outputs())
            sys.exit(err.exit_code)
        except typer.Abort:
            typer.echo("aborted", err=True)
            sys.exit(1)
        except Exception as err:  # a full disk: one line, and the data written so far stays
            if not _disk_full(err):
                raise
            typer.echo(f"gui-gym: error: {_disk_full_message(err)}", err=True)
            sys.exit(1)
        finally:  # the process may go on (tests, notebooks): leave it as it was
            _NEW_OUTPUTS.clear()  # a crash or an interrupt keeps the resumable state
            _OUTPUT_LOCKS.close()
            _OUTPUT_PATHS.clear()
            warnings.formatwarning = formatwarning
            if tqdm_disable is None:
                os.environ.pop("TQDM_DISABLE", None)
        sys.exit(code if isinstance(code, int) else 0)


def _help_width() -> None:
    # Rich falls back to 80 columns off a TTY and cuts option names there; give
    # the help table the terminal's width, at least 100 columns, unless TERMINAL_WIDTH is set.
    import typer.rich_utils

    if not os.environ.get("TERMINAL_WIDTH"):
        typer.rich_utils.MAX_WIDTH = max(shutil.get_terminal_size((100, 24)).columns, 100)


_help_width()

app = typer.Typer(
    cls=OneLineErrors,
    help="GUI-agent benchmarks as Gymnasium environments.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

"""``gui-gym plot``: figures and tables from the JSON results that ``benchmarks/`` writes.

It knows the results of

* ``benchmarks/learning_curves.py``: success on train and test tasks vs env steps per
  reward, and the steps each shaped reward needs to reach the outcome-only final success;
* ``benchmarks/prm_verifier.py``: best-of-N success vs N per verifier;
* ``benchmarks/judge_accuracy.py``: judge accuracy/precision/recall and test-time scaling;
* ``benchmarks/progress_table.py``: ProgRM's Table 3 (key-step MAE per progress model);
* ``benchmarks/admire_learning.py``: ADMIRE's curves per arm.

Each file gives one PNG (written atomically) and its table on stdout.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from gui_gym.cli._common import MissingDependency, UsageError, app, existing_file, output_dir
from gui_gym.core.files import new_file_mode

__all__ = ["KINDS", "detect_kind", "plot_learning_curves", "render"]


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError as err:
        raise MissingDependency(
            f"plot needs matplotlib ({err}); pip install 'gui-gym[examples]'"
        ) from err
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: Path) -> None:
    """Write the figure to ``path`` through a temporary file, so no half PNG is left."""
    plt = _pyplot()
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = new_file_mode(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".png")
    os.fchmod(fd, mode)
    os.close(fd)
    try:
        fig.tight_layout()
        fig.savefig(tmp, dpi=120)
        os.replace(tmp, path)
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.unlink(tmp)


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


# ------------------------------------------------------------------------- learning curves


def plot_learning_curves(result: dict[str, Any], path: Path) -> list[str]:
    """Mean success (shaded: +- std over seeds) vs env steps, a row per env, train and test
    columns; the outcome-only final train success as a dotted line. Returns the table."""
    plt = _pyplot()
    table = result["table"]
    fig, axes = plt.subplots(len(table), 2, figsize=(11, 3.6 * len(table)), squeeze=False)
    lines = []
    for row, (env_id, data) in enumerate(table.items()):
        target = data.get("target_train_success")
        for col, split in enumerate(("train", "test")):
            ax = axes[row][col]
            for reward, summary in data["rewards"].items():
                steps = summary["steps"]
                mean = summary[f"{split}_mean"]
                std = summary[f"{split}_std"]
                seeds = len(summary.get("seeds", []))
                (line,) = ax.plot(steps, mean, "o-", ms=3, label=f"{reward} ({seeds} seeds)")
                low = [m - s for m, s in zip(mean, std)]
                high = [m + s for m, s in zip(mean, std)]
                ax.fill_between(steps, low, high, color=line.get_color(), alpha=0.12)
            randoms = [s.get(f"random_{split}") for s in data["rewards"].values()]
            randoms = [r for r in randoms if r is not None]
            if randoms:
                ax.axhline(
                    sum(randoms) / len(randoms),
                    color="black",
                    ls="--",
                    lw=0.8,
                    label="random policy",
                )
            if split == "train" and target is not None:
                ax.axhline(target, color="grey", ls=":", label="outcome-only final")
            ax.set_ylim(-0.02, 1.02)
            ax.set_xlabel("env steps")
            ax.set_ylabel(f"success on {split} tasks")
            ax.set_title(f"{env_id.removeprefix('GuiGym/')}: {split} tasks")
            ax.grid(alpha=0.3)
        axes[row][0].legend(fontsize=7, loc="upper left")
        lines.append(f"{env_id}: outcome-only final train success {_fmt(target)}")
        if data.get("note"):
            lines.append(f"  note: {data['note']}")
        lines.append(
            f"  {'reward':<10} {'final train':>11} {'final test':>10} {'steps to target':>15} "
            f"{'x outcome':>9}"
        )
        reach = data.get("steps_to_target", {})
        for reward, summary in data["rewards"].items():
            hit = reach.get(reward, {})
            lines.append(
                f"  {reward:<10} {_fmt(summary['final_train']):>11} "
                f"{_fmt(summary['final_test']):>10} "
                f"{_fmt(hit.get('steps_to_outcome_final')):>15} "
                f"{_fmt(hit.get('fraction_of_outcome_steps')):>9}"
            )
    fig.suptitle(f"{result.get('algorithm', 'RL')}: success vs env steps")
    _save(fig, path)
    return lines


# ------------------------------------------------------------------------------ best-of-N


def plot_best_of_n(result: dict[str, Any], path: Path) -> list[str]:
    """Success vs N per verifier, one panel per env (``prm_verifier.py``'s ``best_of_n``)."""
    plt = _pyplot()
    envs = result["best_of_n"]
    fig, axes = plt.subplots(1, len(envs), figsize=(5 * len(envs), 3.8), squeeze=False)
    lines = []
    for ax, (env, rows) in zip(axes[0], envs.items()):
        lines.append(f"{env}: best-of-N success rate")
        for name, by_n in rows.items():
            ns = sorted(by_n, key=int)
            rates = [by_n[n]["success_rate"] for n in ns]
            ax.plot([int(n) for n in ns], rates, "o-", label=name)
            lines.append(
                f"  {name:<32} " + "  ".join(f"N={n}: {_fmt(r)}" for n, r in zip(ns, rates))
            )
        ax.set_xscale("log", base=2)
        ax.set_xlabel("N (candidates per step)")
        ax.set_ylabel("success rate")
        ax.set_title(f"best-of-N, {env}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    _save(fig, path)
    return lines


# ------------------------------------------------------------------------- judge accuracy


def plot_judge_accuracy(result: dict[str, Any], path: Path) -> list[str]:
    """Accuracy/precision/recall per judge and scope, and the test-time scaling curve."""
    plt = _pyplot()
    summary = result["accuracy"]["summary"]
    tts = result.get("test_time_scaling")
    panels = len(summary) + (1 if tts else 0)
    most = max(len(data["judges"]) for data in summary.values())
    height = max(4.0, 0.32 * most + 1.5)  # one row of bars per judge: long names stay legible
    fig, axes = plt.subplots(1, panels, figsize=(6 * panels, height), squeeze=False)
    lines = []
    metrics = ("accuracy", "precision", "recall")
    for ax, (scope, data) in zip(axes[0], summary.items()):
        judges = data["judges"]
        names = list(judges)
        lines.append(f"{scope} ({data.get('episodes', '?')} episodes)")
        for j, metric in enumerate(metrics):
            values = [judges[n][metric] if judges[n][metric] is not None else 0 for n in names]
            ax.barh([i + (j - 1) * 0.26 for i in range(len(names))], values, 0.26, label=metric)
        for name in names:
            lines.append(
                f"  {name:<40} " + "  ".join(f"{m} {_fmt(judges[name][m])}" for m in metrics)
            )
        ax.set_yticks(range(len(names)), names, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlim(0, 1.02)
        ax.set_title(f"judge quality, {scope}")
        ax.legend(fontsize=7, loc="lower right")
    if tts:
        ax = axes[0][-1]
        for name, data in tts["judges"].items():
            measured = [float("nan") if v is None else v for v in data["measured"]]
            ax.plot(tts["n"], measured, "o-", label=name)
            lines.append(
                f"test-time scaling, {name}: "
                + "  ".join(f"N={n}: {_fmt(v)}" for n, v in zip(tts["n"], data["measured"]))
            )
        ax.set_xlabel("trial budget N")
        ax.set_ylabel("success of the submitted trial")
        ax.set_title("test-time scaling")
        ax.legend(fontsize=7)
    _save(fig, path)
    return lines


# ------------------------------------------------------------------------- ProgRM table


def plot_progress_table(result: dict[str, Any], path: Path) -> list[str]:
    """ProgRM's Table 3: key-step MAE and final scores per progress model."""
    plt = _pyplot()
    rows = result["table"]["table"]
    names = list(rows)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    axes[0].bar(names, [rows[n]["key_step_mae"] for n in names])
    axes[0].set_ylabel("key-step MAE (lower is better)")
    axes[0].set_title("progress models on WikiHow test tasks")
    width = 0.4
    x = range(len(names))
    axes[1].bar(
        [i - width / 2 for i in x],
        [rows[n]["final_score_success"] for n in names],
        width,
        label="final score, successes",
    )
    axes[1].bar(
        [i + width / 2 for i in x],
        [rows[n]["final_score_failure"] for n in names],
        width,
        label="final score, failures",
    )
    axes[1].set_xticks(list(x), names)
    axes[1].legend(fontsize=7)
    for ax in axes:
        ax.tick_params(axis="x", labelsize=8, rotation=15)
    lines = [f"  {'model':<12} {'MAE':>6} {'final(succ)':>12} {'final(fail)':>12}"]
    for name in names:
        row = rows[name]
        lines.append(
            f"  {name:<12} {_fmt(row['key_step_mae']):>6} "
            f"{_fmt(row['final_score_success']):>12} {_fmt(row['final_score_failure']):>12}"
        )
    _save(fig, path)
    return lines


# ------------------------------------------------------------------------ ADMIRE curves


def plot_admire_learning(result: dict[str, Any], path: Path) -> list[str]:
    """ADMIRE's learning benchmark: each curve (mean over seeds) per arm vs iteration."""
    plt = _pyplot()
    arms = result["summary"]
    keys = list(next(iter(arms.values()))["curves_mean_over_seeds"])
    fig, axes = plt.subplots(1, len(keys), figsize=(4.2 * len(keys), 3.6), squeeze=False)
    lines = []
    for ax, key in zip(axes[0], keys):
        for arm, row in arms.items():
            ax.plot(row["curves_mean_over_seeds"][key], label=arm)
        ax.set_title(key.replace("_", " "))
        ax.set_xlabel("iteration")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    for arm, row in arms.items():
        curves = row["curves_mean_over_seeds"]
        lines.append(
            f"  {arm:<14} " + "  ".join(f"{k} {_fmt(curves[k][-1])}" for k in keys if curves[k])
        )
    _save(fig, path)
    return lines


KINDS: dict[str, tuple[Callable[[dict[str, Any]], bool], Callable[..., list[str]]]] = {
    "learning curves": (
        lambda r: r.get("benchmark") == "learning_curves",
        plot_learning_curves,
    ),
    "best-of-N": (lambda r: "best_of_n" in r, plot_best_of_n),
    "judge accuracy": (lambda r: r.get("benchmark") == "judge_accuracy", plot_judge_accuracy),
    "ProgRM table": (
        lambda r: isinstance(r.get("table"), dict) and "table" in r["table"],
        plot_progress_table,
    ),
    "ADMIRE learning": (
        lambda r: (
            isinstance(r.get("summary"), dict)
            and all(
                isinstance(v, dict) and "curves_mean_over_seeds" in v for v in r["summary"].values()
            )
            and bool(r["summary"])
        ),
        plot_admire_learning,
    ),
}
"""What ``plot`` recognises: a name, a test on the loaded JSON, and the renderer."""


def detect_kind(result: Any) -> str | None:
    """The name of the result kind in :data:`KINDS`, or None."""
    if not isinstance(result, dict):
        return None
    for name, (matches, _) in KINDS.items():
        if matches(result):
            return name
    return None


def render(path: Path, out: Path) -> tuple[str, list[str]]:
    """Plot one result file to ``out``; returns its kind and table lines.

    Raises:
        UsageError: for a file that is not JSON, not a result ``plot`` knows, or malformed.
    """
    try:
        result = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise UsageError(f"{path}: not a JSON file ({err})") from None
    kind = detect_kind(result)
    if kind is None:
        keys = sorted(result)[:8] if isinstance(result, dict) else type(result).__name__
        raise UsageError(
            f"{path}: not a result plot knows (top-level keys {keys}); it renders the JSON of "
            f"{', '.join(KINDS)} (benchmarks/learning_curves.py, prm_verifier.py, "
            "judge_accuracy.py, progress_table.py, admire_learning.py)"
        )
    try:
        lines = KINDS[kind][1](result, out)
    except (KeyError, TypeError, ValueError, IndexError, StopIteration) as err:
        raise UsageError(f"{path}: malformed {kind} result ({type(err).__name__}: {err})") from None
    return kind, lines


@app.command()
def plot(
    files: Annotated[
        list[Path], typer.Argument(help="result JSON files written by benchmarks/ (globs work)")
    ],
    out: Annotated[
        Path | None,
        typer.Option(help="folder for the PNGs (default: beside each JSON, same name .png)"),
    ] = None,
) -> None:
    """Render benchmark results (learning curves, best-of-N, judge accuracy, ProgRM tables)
    as PNG figures and print their tables."""
    if out is not None:
        output_dir(out)
    for file in files:
        existing_file(file, "FILES")
    for file in files:
        target = (out / f"{file.stem}.png") if out is not None else file.with_suffix(".png")
        kind, lines = render(file, target)
        typer.echo(f"{file} ({kind}) -> {target}")
        for line in lines:
            typer.echo(line)

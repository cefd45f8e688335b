"""``gui-gym sft`` (supervised fine-tuning on an expert dataset) and ``gui-gym train`` (RL for
LLM agents: GRPO and its RLOO/DAPO presets, REINFORCE++, PPO, ARPO, UI-S1 semi-online, offline
GRPO)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gui_gym.cli._common import (
    EmbedderOption,
    NoProgressOption,
    OrmModelOption,
    ProgressModelOption,
    UsageError,
    app,
    check_device,
    check_env_id,
    check_reward_model_folders,
    choose,
    existing_dir,
    existing_file,
    model_folder,
    open_env,
    output_dir,
    parse_kwargs,
)

_ImagesOption = Annotated[
    int, typer.Option(help="earlier screenshots each prompt shows (with --screenshot)")
]
"""``--images`` of the commands that train a vision-language policy (default 0)."""
_CoordinatesOption = Annotated[
    str,
    typer.Option(
        help="where the policy's _XY coordinates live: screen (pixels), qwen2_5_vl (the "
        "image as Qwen2.5-VL's processor resizes it) or relative_1000"
    ),
]
"""``--coordinates`` of the commands that train a policy (default ``screen``)."""


def _check_llm_term_flags(reward: str, term: str, model: str | None, url: str | None) -> str | None:
    """``--TERM-model``/``--TERM-url`` of a reward term that may run on an LLM (``judge``:
    ProRe's components; ``milestone``: ADMIRE's generator): only with that term in
    ``reward``, a URL only with a served name and only http(s), a local model only as a
    model (a name, a .gguf file or a folder; checked before anything loads). Returns the
    model to use: a local one resolved to its folder."""
    if model is None and url is None:
        return model
    from gui_gym.train.reward_stack import parse_reward

    try:
        terms = parse_reward(reward)
    except ValueError:
        return model  # the reward's own error is reported where it is parsed
    model_flag, url_flag = f"--{term}-model", f"--{term}-url"
    flag = model_flag if model is not None else url_flag
    if term not in terms:
        raise UsageError(
            f"{flag} is for the {term} reward: add {term} to --reward (got {reward!r})"
        )
    if model is None:
        raise UsageError(f"{url_flag} needs {model_flag}, the name the server serves it under")
    if url is not None:
        if not url.startswith(("http://", "https://")):
            raise UsageError(f"{url_flag} must be an http(s):// URL, got {url!r}")
        return model
    folder = model_folder(model, model_flag)
    if not (folder / "config.json").is_file():
        raise UsageError(
            f"{model_flag} {model}: not a local Hugging Face model folder (no "
            f"config.json); for a served model add {url_flag} URL"
        )
    return str(folder)


def _check_vision_flags(
    model: Path, screenshot: bool, images: int, prompt: str = "default", coordinates: str = "screen"
) -> None:
    """--screenshot/--images/--prompt screenshot/--coordinates, checked before the model loads."""
    from gui_gym.agents.prompts import PROMPTS
    from gui_gym.agents.screen_space import COORDINATE_SPACES

    choose(coordinates, COORDINATE_SPACES, "--coordinates")
    format_ = PROMPTS.get(prompt)
    if not screenshot and (coordinates != "screen" or (format_ and format_.screenshot_only)):
        what = f"--prompt {prompt}" if format_ and format_.screenshot_only else "--coordinates"
        raise UsageError(f"{what} shows the policy only the screenshot: it needs --screenshot")
    if images < 0:
        raise UsageError(f"--images must be >= 0, got {images}")
    if images and not screenshot:
        raise UsageError("--images needs --screenshot")
    if screenshot and not any(
        (model / n).is_file() for n in ("preprocessor_config.json", "processor_config.json")
    ):
        raise UsageError(
            f"--screenshot needs a vision-language model folder (with preprocessor_config.json); "
            f"--model {model} is a text-only model"
        )


@app.command("sft")
def sft_cmd(
    dataset: Annotated[Path, typer.Option(help="expert dataset folder (gui-gym record/convert)")],
    model: Annotated[
        str,
        typer.Option(
            help="the model to start from: a name (gui-gym models), a Hugging Face causal-LM "
            "folder or a .gguf file"
        ),
    ],
    out: Annotated[Path, typer.Option(help="output folder (checkpoints inside; reruns resume)")],
    prompt: Annotated[str, typer.Option(help="the agent's prompt format")] = "default",
    history: Annotated[int, typer.Option(help="history turns in each prompt")] = 8,
    epochs: Annotated[int, typer.Option(help="passes over the data")] = 3,
    lr: Annotated[
        float | None,
        typer.Option(help="AdamW learning rate (default: 1e-3 with --lora, else 1e-4)"),
    ] = None,
    batch_size: Annotated[int, typer.Option(help="examples per forward pass")] = 4,
    grad_accum: Annotated[int, typer.Option(help="forward passes per optimizer step")] = 1,
    max_length: Annotated[
        int | None, typer.Option(help="drop longer examples (default: the model's context)")
    ] = None,
    lora: Annotated[
        bool, typer.Option("--lora", help="train a LoRA adapter (merged at the end)")
    ] = False,
    lora_r: Annotated[int, typer.Option(help="LoRA rank")] = 8,
    eval_fraction: Annotated[
        float, typer.Option(help="share of trajectories held out for step accuracy")
    ] = 0.1,
    checkpoint_every: Annotated[
        int, typer.Option(help="optimizer steps between checkpoints (0: each epoch)")
    ] = 0,
    seed: Annotated[int, typer.Option(help="seed of the split, shuffle and dropout")] = 0,
    screenshot: Annotated[
        bool,
        typer.Option(
            "--screenshot",
            help="train a vision-language model on the dataset's screenshots (recorded with "
            "--screenshots)",
        ),
    ] = False,
    images: _ImagesOption = 0,
    coordinates: _CoordinatesOption = "screen",
    train_vision: Annotated[
        bool,
        typer.Option("--train-vision", help="also train the vision tower (frozen by default)"),
    ] = False,
    device: Annotated[
        str | None, typer.Option(help="cpu or cuda (default: cuda if present)")
    ] = None,
    dtype: Annotated[
        str,
        typer.Option(
            help="auto (bf16 autocast where the device computes bf16 natively: CUDA, or a CPU "
            "with AMX-BF16/AVX512-BF16), float32, or bfloat16 (autocast anywhere)"
        ),
    ] = "auto",
    no_progress: NoProgressOption = False,
) -> None:
    """Fine-tune a model on expert trajectories in the LLM agent's own prompt format (loss on
    the completion tokens only); the output folder works with ``gui-gym eval --agent llm``."""
    from gui_gym.agents.prompts import PROMPTS
    from gui_gym.envs.replay import DatasetError
    from gui_gym.models.llm.precision import DTYPES
    from gui_gym.train.sft import SFTConfig, train_sft

    choose(prompt, sorted(PROMPTS), "prompt")
    choose(dtype, DTYPES, "--dtype")
    existing_dir(dataset, "--dataset")
    model = model_folder(model, "--model")  # type: ignore[assignment]
    if not (model / "config.json").is_file():
        raise UsageError(f"--model {model}: not a Hugging Face model folder (no config.json)")
    if train_vision and not screenshot:
        raise UsageError("--train-vision needs --screenshot")
    _check_vision_flags(model, screenshot, images, prompt, coordinates)
    output_dir(out, "--out")
    check_device(device)
    config = SFTConfig(
        bf16={"auto": None, "float32": False, "bfloat16": True}[dtype],
        epochs=epochs,
        lr=lr,
        batch_size=batch_size,
        grad_accum=grad_accum,
        max_length=max_length,
        prompt=prompt,
        history=history,
        eval_fraction=eval_fraction,
        seed=seed,
        lora=lora,
        lora_r=lora_r,
        checkpoint_every=checkpoint_every,
        screenshot=screenshot,
        images=images,
        train_vision=train_vision,
        coordinates=coordinates,
    )
    from gui_gym.train.trainer import TrainingDiverged

    try:
        config.check()
        report = train_sft(dataset, model, out, config, device=device, progress=not no_progress)
    except (DatasetError, ValueError) as err:
        raise UsageError(str(err)) from None
    except TrainingDiverged as err:  # one line; the output and its last checkpoint stay
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from None
    typer.echo(
        f"trained on {report.train_examples} steps ({report.dropped_too_long} too long, left "
        f"out) for {report.optimizer_steps} optimizer steps; final loss "
        f"{report.losses[-1]:.4f}"
    )
    if report.step_accuracy is not None:
        typer.echo(
            f"held-out step accuracy: {report.step_accuracy_before:.1%} before, "
            f"{report.step_accuracy:.1%} after ({report.eval_examples} steps)"
        )
    typer.echo(f"model written to {out}")


@app.command("train")
def train_cmd(
    algo: Annotated[
        str,
        typer.Option(
            help="grpo, rloo, dapo, reinforce_pp, ppo, arpo, semi_online or offline_grpo "
            "(rloo and dapo: GRPO with ADMIRE Table 4's settings)"
        ),
    ],
    env: Annotated[str, typer.Option(help="env id, e.g. GuiGym/WikiHow-v0")],
    model: Annotated[
        str,
        typer.Option(
            help="the policy: a model name (gui-gym models), a Hugging Face folder "
            "(safetensors) or a .gguf file"
        ),
    ],
    reward: Annotated[
        str,
        typer.Option(
            help="outcome, progress, milestone, prm, judge, format; e.g. outcome+0.3*milestone"
        ),
    ] = "outcome",
    out: Annotated[Path, typer.Option(help="run folder (checkpoint, model, metrics.jsonl)")] = Path(
        "runs/train"
    ),
    lora: Annotated[bool, typer.Option("--lora", help="train LoRA adapters (peft)")] = False,
    config: Annotated[
        Path | None, typer.Option(help="JSON or TOML file of settings (see --set)")
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="a setting name=value (TrainConfig or the algorithm's config); repeatable",
        ),
    ] = None,
    env_arg: Annotated[
        list[str] | None, typer.Option("--env-arg", help="gym.make key=value (split, dataset)")
    ] = None,
    task: Annotated[
        list[str] | None, typer.Option("--task", help="train on this task id; repeatable")
    ] = None,
    prompt: Annotated[str, typer.Option(help="agent prompt (default, progrm, admire, ...)")] = (
        "default"
    ),
    prm_model: Annotated[
        Path | None, typer.Option(help="gui-gym train-prm folder (prm reward, PPO critic)")
    ] = None,
    progress_model: ProgressModelOption = None,
    orm_model: OrmModelOption = None,
    embedder: EmbedderOption = "minilm",
    progress_k: Annotated[
        int,
        typer.Option(
            min=1,
            help="history length k of the progress reward (ProgRM Eq. 2 and Table 4; 1 is "
            "the paper's choice)",
        ),
    ] = 1,
    milestones: Annotated[
        str,
        typer.Option(
            help="adaptive (ADMIRE: refined from each batch's best success) or static "
            "(Table 3: generated once, never refined)"
        ),
    ] = "adaptive",
    milestone_store: Annotated[
        Path | None,
        typer.Option(help="milestone store JSON to start from (copied into --out)"),
    ] = None,
    judge_model: Annotated[
        str | None,
        typer.Option(
            help="the judge reward's LLM (ProRe's five components on it): a model name, a "
            "Hugging Face folder or a .gguf file, or with --judge-url the served model's name "
            "(default: rule-based)"
        ),
    ] = None,
    judge_url: Annotated[
        str | None,
        typer.Option(help="OpenAI-compatible server of --judge-model (http://host:port/v1)"),
    ] = None,
    milestone_model: Annotated[
        str | None,
        typer.Option(
            help="the milestone reward's generator LLM (ADMIRE's own, Eq. 6-7): a model name, "
            "a Hugging Face folder or a .gguf file, or with --milestone-url the served "
            "model's name (default: milestones from the key steps of a success, no LLM)"
        ),
    ] = None,
    milestone_url: Annotated[
        str | None,
        typer.Option(help="OpenAI-compatible server of --milestone-model (http://host:port/v1)"),
    ] = None,
    no_resume: Annotated[
        bool, typer.Option("--no-resume", help="ignore a checkpoint in --out")
    ] = False,
    screenshot: Annotated[
        bool,
        typer.Option(
            "--screenshot",
            help="the policy is a vision-language model shown each step's screenshot",
        ),
    ] = False,
    images: _ImagesOption = 0,
    coordinates: _CoordinatesOption = "screen",
    no_progress: NoProgressOption = False,
) -> None:
    """Train an LLM agent with RL; a rerun with the same --out resumes from its checkpoint.

    Data-parallel on one node under accelerate: ``accelerate launch --num_processes 8 -m
    gui_gym.cli train ...`` (each process rolls out its share, gradients are summed, rank 0
    writes the files).

    Settings (every hyperparameter, named as the paper names it, with its default cited in
    the docs) come from --config and --set, --set winning.
    """
    from gui_gym.train.reward_stack import MILESTONE_MODES
    from gui_gym.train.runner import ALGORITHM_NAMES, load_settings, make_trainer

    choose(algo, ALGORITHM_NAMES, "--algo")
    check_env_id(env)
    model = model_folder(model, "--model")  # type: ignore[assignment]
    _check_vision_flags(model, screenshot, images, prompt, coordinates)
    output_dir(out)
    choose(embedder, ("minilm", "hashing"), "--embedder")
    choose(milestones, MILESTONE_MODES, "--milestones")
    if milestone_store is not None:
        existing_file(milestone_store, "--milestone-store")
    check_reward_model_folders(prm_model, progress_model, orm_model)
    judge_model = _check_llm_term_flags(reward, "judge", judge_model, judge_url)
    milestone_model = _check_llm_term_flags(reward, "milestone", milestone_model, milestone_url)
    if config is not None:
        existing_file(config, "--config")
    from gui_gym.agents.prompts import PROMPTS

    choose(prompt, sorted(PROMPTS), "--prompt")
    # every task and env argument is checked before the model loads (one line, not minutes in)
    env_kwargs = parse_kwargs(env_arg)
    if screenshot:
        env_kwargs["screenshot"] = True
    for name in task or [None]:
        open_env(env, **({"task": name} if name is not None else {}), **env_kwargs).close()
    try:
        settings = load_settings(config) if config is not None else {}
        settings.update(parse_kwargs(set_))
        settings["out"] = str(out)
        if screenshot:
            settings.update(screenshot=True, images=images, coordinates=coordinates)
        if no_progress:
            settings["progress"] = False
        trainer = make_trainer(
            algo,
            env,
            model=model,
            reward=reward,
            lora=lora,
            settings=settings,
            env_kwargs=env_kwargs,
            tasks=task,
            prompt=prompt,
            prm_model=prm_model,
            progress_model=progress_model,
            orm_model=orm_model,
            embedder=embedder,
            milestone_mode=milestones,
            milestone_store=milestone_store,
            progress_k=progress_k,
            judge_model=judge_model,
            judge_url=judge_url,
            milestone_model=milestone_model,
            milestone_url=milestone_url,
            resume=not no_resume,
        )
    except (ValueError, FileNotFoundError, TypeError, KeyError) as err:
        raise UsageError(
            str(err.args[0] if isinstance(err, KeyError) and err.args else err)
        ) from None
    from gui_gym.train.data_parallel import shutdown_data_parallel
    from gui_gym.train.trainer import TrainingDiverged

    start = trainer.iteration
    try:
        metrics = trainer.train()
    except TrainingDiverged as err:  # one line; the output and its last checkpoint stay
        shutdown_data_parallel(wait=False)
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from None
    except BaseException:
        shutdown_data_parallel(wait=False)
        raise
    shutdown_data_parallel()
    last = metrics[-1] if metrics else (trainer.history[-1] if trainer.history else {})
    if trainer.parallel.is_main:
        typer.echo(
            f"{algo}: iterations {start}..{trainer.iteration}, last success rate "
            f"{last.get('success_rate')}, model in {out / 'model'}"
            + (f" ({trainer.parallel.world_size} processes)" if trainer.parallel.enabled else "")
        )

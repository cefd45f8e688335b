"""Supervised fine-tuning on expert datasets, in the agent's own prompt format.

ProgRM (seed 000) and UI-S1 (seed 002) start from SFT on expert trajectories; this is that
stage. Every expert step becomes one example: the prompt :class:`~gui_gym.agents.llm.LLMAgent`
would build at that step (same prompt format, same history of action descriptions, so the
fine-tuned model sees at run time exactly what it was trained on) and the completion in the
format's output form (``PromptFormat.completion(thought, action)``) followed by the end
token. The loss is the mean cross-entropy over the completion tokens only.

::

    from gui_gym.train.sft import SFTConfig, train_sft
    report = train_sft("data/wikihow-oracle", "models/base", "models/sft",
                       SFTConfig(epochs=3, lora=True))  # lr: default_lr(lora=True)
    # gui-gym sft --dataset data/wikihow-oracle --model models/base --out models/sft

Prompt and completion are tokenized separately and concatenated (prompt ids, then
completion ids, then the end token): the model is trained on the ids generation produces,
never on a re-tokenization of the joined text.

Training: AdamW, a seeded shuffle per epoch, gradient accumulation, optional LoRA (peft),
bf16 autocast where the device has native bf16, a progress bar. Checkpoints
(``out/checkpoint/``) are in the RL trainers' format (:func:`gui_gym.train.checkpoint.write_checkpoint`: the trainable weights, or the
LoRA adapter, the optimizer state and torch's random streams as safetensors, the progress as
JSON; written atomically); rerunning the same command resumes from the last one and ends
with the same weights as an uninterrupted run. At the end ``out/`` holds the model (LoRA merged in) and tokenizer, loadable by
:class:`~gui_gym.models.llm.TransformersLLM` and so by ``LLMAgent`` and ``gui-gym eval
--agent llm --model out``, and ``sft_report.json`` with the losses and the step accuracy on
a held-out split of the trajectories (greedy generation, actions compared with the loose
action matcher).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gui_gym.agents.base import AgentStep, Turn
from gui_gym.agents.llm import LLMAgent
from gui_gym.core.actions import ActionParseError, describe, parse_action
from gui_gym.core.progress import library_bars_follow_the_rule, progress_bar, progress_enabled
from gui_gym.core.trajectory import atomic_write_text, dumps_json
from gui_gym.models.llm.chat_messages import prompt_images

__all__ = ["SFTConfig", "SFTExample", "SFTReport", "build_examples", "default_lr", "train_sft"]

# AdamW rates when SFTConfig.lr is None (docs/real_model.md: at 1e-4 a rank-8 LoRA of
# SmolLM2-135M over ~70 steps learns the tags but not the screen: CLICK(1) everywhere)
LORA_LR = 1e-3
FULL_LR = 1e-4

CHECKPOINT_DIR = "checkpoint"
REPORT_FILE = "sft_report.json"


def default_lr(lora: bool) -> float:
    """The AdamW learning rate SFT uses when none is given: :data:`LORA_LR` for a LoRA
    adapter (a low-rank update starting at zero needs a rate about ten times a full
    fine-tune's), :data:`FULL_LR` when every weight trains."""
    return LORA_LR if lora else FULL_LR


@dataclass
class SFTConfig:
    """Settings of one SFT run (all stored in the checkpoint; a resume must match them).

    Attributes:
        epochs: Passes over the training examples. A run resumed from its checkpoint may ask
            for more (it continues) or, if not yet past them, fewer (:data:`RESUME_MAY_CHANGE`).
        lr: AdamW learning rate; None: :func:`default_lr` (1e-3 for LoRA, 1e-4 for every
            weight; see docs/real_model.md for why).
        weight_decay: AdamW weight decay.
        batch_size: Examples per forward pass.
        grad_accum: Forward passes per optimizer step.
        max_length: Longest example in tokens; longer ones are dropped (counted in the
            report), never silently cut. None: the model's context length.
        prompt: The agent's prompt format (must be the one ``LLMAgent`` uses at run time).
        history: History turns the prompt shows (as ``LLMAgent(history=...)``).
        eval_fraction: Share of the trajectories held out for step accuracy (0: none).
        eval_max_new_tokens: Generation length when measuring step accuracy.
        seed: Seeds the split, the shuffle, the model's dropout.
        lora: Train a LoRA adapter instead of every weight.
        lora_r, lora_alpha, lora_dropout: LoRA settings.
        lora_targets: Module names LoRA wraps, or ``"all-linear"`` (the default, as the RL
            trainers' ``lora_target_modules``: every linear layer but the output head);
            None lets peft choose (for Llama only ``q_proj`` and ``v_proj``).
        bf16: Autocast to bfloat16 over fp32 weights; None: where the device computes bf16
            natively (CUDA, or a CPU with AMX-BF16/AVX512-BF16).
        checkpoint_every: Optimizer steps between checkpoints (0: only at epoch ends).
        include_failed: Also learn from trajectories whose expert failed.
        screenshot: Train a vision-language model on the dataset's screenshots: each prompt
            shows the step's screenshot (as ``LLMAgent(screenshot=True)``); every step must
            have one and the model folder a processor.
        images: Earlier screenshots each prompt shows besides the current one (UI-S1: 2).
        train_vision: Also train the vision tower (frozen by default; with ``lora`` its
            adapters train only with this set).
        coordinates: The space the model's ``_XY`` coordinates are in (``screen``,
            ``qwen2_5_vl``, ``relative_1000``; :mod:`gui_gym.agents.screen_space`): the
            recorded screen-pixel targets are written in it.
    """

    epochs: int = 3
    lr: float | None = None
    weight_decay: float = 0.0
    batch_size: int = 4
    grad_accum: int = 1
    max_length: int | None = None
    prompt: str = "default"
    history: int = 8
    eval_fraction: float = 0.1
    eval_max_new_tokens: int = 64
    seed: int = 0
    lora: bool = False
    lora_r: int = 8
    lora_alpha: int = 16
    lora_dropout: float = 0.0
    lora_targets: list[str] | str | None = "all-linear"
    bf16: bool | None = None
    checkpoint_every: int = 0
    include_failed: bool = False
    screenshot: bool = False
    images: int = 0
    train_vision: bool = False
    coordinates: str = "screen"

    def check(self) -> None:
        """Raise ``ValueError`` naming the first bad setting."""
        positive = {"epochs": self.epochs, "batch_size": self.batch_size}
        positive["grad_accum"] = self.grad_accum
        for name, value in positive.items():
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if self.lr is not None and not (self.lr > 0 and math.isfinite(self.lr)):
            raise ValueError(f"lr must be a positive number, got {self.lr!r}")
        if not 0.0 <= self.eval_fraction < 1.0:
            raise ValueError(f"eval_fraction must be in [0, 1), got {self.eval_fraction!r}")
        if self.max_length is not None and self.max_length < 2:
            raise ValueError(f"max_length must be >= 2, got {self.max_length!r}")
        if not isinstance(self.images, int) or self.images < 0:
            raise ValueError(f"images must be an int >= 0, got {self.images!r}")
        if (self.images or self.train_vision) and not self.screenshot:
            raise ValueError("images and train_vision need screenshot=True (--screenshot)")
        if self.checkpoint_every < 0:
            raise ValueError(f"checkpoint_every must be >= 0, got {self.checkpoint_every!r}")


@dataclass
class SFTExample:
    """One training example: the prompt at an expert step and the expert's completion."""

    prompt: list[dict[str, Any]]
    completion: str
    action: str
    trajectory_id: str
    step: int
    tree: Any = None
    images: list[Any] = field(default_factory=list)


@dataclass
class SFTReport:
    """What a run did (also written to ``out/sft_report.json``)."""

    out: str
    train_examples: int
    eval_examples: int
    dropped_too_long: int
    optimizer_steps: int
    epochs: int
    losses: list[float] = field(default_factory=list)
    step_accuracy_before: float | None = None
    step_accuracy: float | None = None
    resumed_from_step: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def build_examples(trajectories: Sequence[Any], agent: LLMAgent) -> list[SFTExample]:
    """The SFT examples of expert trajectories, with ``agent``'s prompt format and history.

    Args:
        trajectories: :class:`~gui_gym.envs.replay.dataset.ExpertTrajectory` records.
        agent: The agent whose prompts to reproduce (its ``prompt`` and ``history``).
    """
    examples = []
    for trajectory in trajectories:
        turns: list[Turn] = []
        for step in trajectory.steps:
            observation: dict[str, Any] = {
                "instruction": trajectory.instruction,
                "screen": step.screen,
            }
            shot = None
            if agent.screenshot:
                shot = load_screenshot(step.screenshot, trajectory.trajectory_id, step.index)
                observation["screenshot"] = shot
            prompt = agent.build_prompt(observation, {}, turns)
            # recorded actions are in screen pixels; the target is in the model's space
            action = agent.to_model_action(step.action.to_string(), shot)
            examples.append(
                SFTExample(
                    prompt=prompt,
                    completion=agent.prompt.completion(step.thought, action),
                    action=action,
                    trajectory_id=trajectory.trajectory_id,
                    step=step.index,
                    tree=step.tree,
                    images=prompt_images(prompt),
                )
            )
            turns.append(
                Turn(
                    screen=step.screen,
                    screenshot=shot,
                    step=AgentStep(action=action, text=action, thought=step.thought),
                    action_description=describe(step.action, step.tree),
                )
            )
    return examples


def load_screenshot(path: Any, trajectory_id: str, step: int) -> Any:
    """A step's screenshot as an HxWx3 uint8 array.

    Raises:
        ValueError: when the step has none or the file is not a readable image.
    """
    import numpy as np
    from PIL import Image, UnidentifiedImageError

    if path is None:
        raise ValueError(
            f"step {step} of trajectory {trajectory_id!r} has no screenshot; --screenshot needs "
            "a dataset recorded with --screenshots"
        )
    try:
        with Image.open(path) as image:
            return np.asarray(image.convert("RGB"), dtype=np.uint8)
    except (OSError, UnidentifiedImageError, ValueError) as err:
        raise ValueError(f"screenshot {path} is not a readable image: {err}") from None


def is_vision_model_folder(folder: Any) -> bool:
    """Whether a model folder has a processor (a vision-language model)."""
    path = Path(folder)
    return any(
        (path / name).is_file() for name in ("preprocessor_config.json", "processor_config.json")
    )


def _split(trajectories: list[Any], fraction: float, seed: int) -> tuple[list[Any], list[Any]]:
    """Hold out ``fraction`` of the trajectories (at least one when fraction > 0 and there
    are two or more), chosen with ``seed``."""
    if fraction <= 0 or len(trajectories) < 2:
        return trajectories, []
    order = list(range(len(trajectories)))
    random.Random(seed).shuffle(order)
    held = max(1, round(len(trajectories) * fraction))
    held_out = set(order[:held])
    train = [t for i, t in enumerate(trajectories) if i not in held_out]
    return train, [t for i, t in enumerate(trajectories) if i in held_out]


def _encode(llm: Any, example: SFTExample) -> tuple[list[int], list[int]]:
    """Prompt ids (as generation sees them) and completion ids plus the end token; for a
    vision-language model the processor's ids, image placeholder tokens expanded."""
    tok = llm.tokenizer
    if example.images:
        enc = llm.processor(
            text=[llm.format_prompt(example.prompt)],
            images=[_pil(i) for i in example.images],
            return_tensors="pt",
        )
        completion_ids = tok(example.completion, add_special_tokens=False)["input_ids"]
        return enc["input_ids"][0].tolist(), [*completion_ids, tok.eos_token_id]
    prompt_ids = tok(
        llm.format_prompt(example.prompt), add_special_tokens=not llm.use_chat_template
    )["input_ids"]
    completion_ids = tok(example.completion, add_special_tokens=False)["input_ids"]
    return list(prompt_ids), [*completion_ids, tok.eos_token_id]


def _pil(image: Any) -> Any:
    import numpy as np
    from PIL import Image

    return image if isinstance(image, Image.Image) else Image.fromarray(np.asarray(image))


def step_accuracy(
    llm: Any, agent: LLMAgent, examples: Sequence[SFTExample], max_new_tokens: int
) -> float:
    """Share of ``examples`` where greedy generation's action matches the expert's (loose
    matcher on the step's screen); an unreadable action counts as a miss."""
    from gui_gym.rewards.action_match import get_matcher

    if not examples:
        return 0.0
    matcher = get_matcher("loose")
    rows = llm.generate([e.prompt for e in examples], max_new_tokens=max_new_tokens)
    hits = 0
    for example, row in zip(examples, rows, strict=True):
        _, action_text = agent.prompt.parse(row[0])
        try:
            predicted = parse_action(action_text)
        except ActionParseError:
            continue
        hits += bool(matcher(predicted, parse_action(example.action), example.tree).exact)
    return hits / len(examples)


# ----------------------------------------------------------------------------- checkpoints


def _save_checkpoint(
    out: Path, model: Any, optimizer: Any, state: dict[str, Any], lora: bool
) -> None:
    """Write ``out/checkpoint`` in the RL trainers' format (:func:`~gui_gym.train.
    checkpoint.write_checkpoint`: trainable weights as ``policy.<name>``, the optimizer, torch's random
    streams, the progress as ``trainer_state.json``), atomically."""
    from gui_gym.train.checkpoint import torch_rng_tensors, write_checkpoint

    weights = {
        f"policy.{n}": p.detach().cpu().contiguous()
        for n, p in model.named_parameters()
        if p.requires_grad
    }
    write_checkpoint(
        out / CHECKPOINT_DIR,
        weights=weights,
        optimizer=optimizer,
        state={**state, "algorithm": "sft", "lora": lora},
        rng=torch_rng_tensors(),
    )


def _load_checkpoint(out: Path, model: Any, optimizer: Any) -> dict[str, Any] | None:
    """Restore ``out/checkpoint`` into ``model`` and ``optimizer`` (and torch's random
    streams: dropout draws on), returning its progress; None when there is none.

    Raises:
        ValueError: for a checkpoint of another trainer or model, or an unreadable one.
    """
    import torch

    from gui_gym.core.files import recover_folder
    from gui_gym.train.checkpoint import (
        check_finite,
        load_optimizer_state,
        read_checkpoint,
        restore_torch_rng,
    )

    folder = out / CHECKPOINT_DIR
    # a run killed mid-swap left the last complete checkpoint beside it
    if not recover_folder(folder).is_dir():
        return None
    state, weights, rng = read_checkpoint(folder)
    if state.get("algorithm") != "sft":
        raise ValueError(
            f"{folder} is a {state.get('algorithm')!r} checkpoint, not an SFT one; choose "
            "another --out"
        )
    params = {n: p for n, p in model.named_parameters() if p.requires_grad}
    if sorted(f"policy.{n}" for n in params) != sorted(weights):
        raise ValueError(f"{folder} does not fit this model; remove it or choose another --out")
    check_finite(
        folder / "weights.safetensors", weights, {f"policy.{n}": p for n, p in params.items()}
    )
    with torch.no_grad():
        for name, param in params.items():
            param.copy_(weights[f"policy.{name}"].to(param.device, param.dtype))
    load_optimizer_state(optimizer, folder)
    restore_torch_rng(rng)
    return state


# -------------------------------------------------------------------------------- training


def _batches(n: int, batch_size: int, seed: int, epoch: int) -> list[list[int]]:
    order = list(range(n))
    random.Random(f"{seed}:{epoch}").shuffle(order)
    return [order[i : i + batch_size] for i in range(0, n, batch_size)]


def _is_vision_tower(name: str) -> bool:
    """A parameter of the vision encoder (LLaVA's ``vision_tower``, Qwen2-VL's ``visual``)."""
    return "vision_tower" in name or ".visual." in name or name.startswith("visual.")


def _pixels(llm: Any, images: list[Any], net: Any) -> dict[str, Any]:
    """The pixel inputs of a batch's screenshots, in row order, in the model's dtype."""
    if not images:
        return {}
    from gui_gym.models.llm.vision_inputs import pixel_inputs

    dtype = next(net.parameters()).dtype
    return {
        k: (v.to(llm.device, dtype) if v.is_floating_point() else v.to(llm.device))
        for k, v in pixel_inputs(llm.processor, images).items()
    }


RESUME_MAY_CHANGE = ("epochs", "checkpoint_every")
"""SFT settings a run may change when it resumes from a checkpoint: the epoch order is seeded
per epoch and the rate is constant, so a 1-epoch run continued for a second epoch is exactly a
2-epoch run, and a 2-epoch run stopped after its first epoch is exactly a 1-epoch run."""


def _completion_loss(
    net: Any, llm: Any, rows: list[tuple[list[int], list[int], Any]], pad: int, pixels: dict
) -> Any:
    """Mean next-token cross-entropy over the completion tokens of one batch of
    ``(prompt_ids, completion_ids, images)`` rows (prompt positions carry no loss). The
    output layer runs on the completion positions only where it can
    (:func:`~gui_gym.train.losses.completion_logits`)."""
    import torch

    from gui_gym.train.losses import completion_logits

    logits, starts = completion_logits(
        net,
        [(p, c) for p, c, _ in rows],
        pad_id=pad,
        device=llm.device,
        pixels=pixels,
        processor=llm.processor,
    )
    picked = torch.cat(
        [
            logits[i, start : start + len(c)]
            for i, (start, (_, c, _)) in enumerate(zip(starts, rows))
        ]
    ).float()
    targets = torch.tensor([t for _, c, _ in rows for t in c], dtype=torch.long)
    return torch.nn.functional.cross_entropy(picked, targets.to(picked.device))


def train_sft(
    dataset: str | Path | Sequence[Any],
    model: str | Path | Any,
    out: str | Path,
    config: SFTConfig | None = None,
    *,
    tokenizer: Any | None = None,
    device: str | None = None,
    progress: bool = True,
) -> SFTReport:
    """Fine-tune ``model`` on the expert ``dataset`` and save it to ``out``.

    Args:
        dataset: An expert dataset folder (``gui-gym record``/``convert``) or a list of
            :class:`~gui_gym.envs.replay.dataset.ExpertTrajectory`.
        model: A local Hugging Face causal-LM folder, or a model object (with ``tokenizer``).
        out: The output folder (checkpoints inside; a rerun resumes).
        config: The settings.
        tokenizer: The tokenizer when ``model`` is an object.
        device: ``cpu``/``cuda``; None picks CUDA when available.
        progress: Show a progress bar.

    Returns:
        The :class:`SFTReport`.

    ``out`` is locked for the run (:func:`~gui_gym.core.files.lock_output`): a second run
    into it raises :class:`~gui_gym.core.files.OutputInUseError` naming the holder's PID.

    Raises:
        ValueError: for bad settings, an empty dataset, a checkpoint of other settings.
        gui_gym.envs.replay.DatasetError: for a dataset folder that cannot be read.
    """
    from gui_gym.core.files import lock_output

    with lock_output(out, "SFT output"):
        return _train_sft(dataset, model, out, config, (tokenizer, device, progress))


def _train_sft(
    dataset: str | Path | Sequence[Any],
    model: str | Path | Any,
    out: str | Path,
    config: SFTConfig | None,
    options: tuple[Any | None, str | None, bool],
) -> SFTReport:
    """:func:`train_sft` under the lock on ``out`` (``options``: its ``tokenizer``,
    ``device`` and ``progress``)."""
    tokenizer, device, progress = options
    import torch

    from gui_gym.envs.replay.dataset import ExpertDataset
    from gui_gym.models.llm import TransformersLLM

    config = config or SFTConfig()
    config.check()
    out = Path(out)
    started = time.perf_counter()
    if isinstance(dataset, str | Path):
        trajectories = list(
            ExpertDataset.load(dataset, include_failed=config.include_failed).trajectories
        )
    else:
        trajectories = list(dataset)
    if not trajectories:
        raise ValueError("the dataset holds no trajectories to learn from")
    if config.screenshot:
        # every check before the model loads: nothing is written on a bad input
        if isinstance(model, str | Path) and not is_vision_model_folder(model):
            raise ValueError(
                f"--screenshot needs a vision-language model folder (with "
                f"preprocessor_config.json); {model} is a text-only model"
            )
        for trajectory in trajectories:
            for step in trajectory.steps:
                load_screenshot(step.screenshot, trajectory.trajectory_id, step.index)
    torch.manual_seed(config.seed)
    # the checkpoint's dtype (fp32 master weights for a fp32 folder); bf16 comes from autocast
    llm = TransformersLLM(model, tokenizer, device=device, dtype=None)
    if config.screenshot and llm.processor is None:
        raise ValueError("--screenshot needs a vision-language model (one with a processor)")
    agent = LLMAgent(
        llm,
        config.prompt,
        history=config.history,
        screenshot=config.screenshot,
        images=config.images,
        coordinates=config.coordinates,
    )
    train_set, eval_set = _split(trajectories, config.eval_fraction, config.seed)
    train_examples = build_examples(train_set, agent)
    eval_examples = build_examples(eval_set, agent)
    limit = config.max_length
    if limit is None:
        limit = getattr(llm.model.config, "max_position_embeddings", None) or getattr(
            llm.model.config, "n_positions", None
        )
    encoded = []
    dropped = 0
    for example in train_examples:
        prompt_ids, completion_ids = _encode(llm, example)
        if limit is not None and len(prompt_ids) + len(completion_ids) > limit:
            dropped += 1
            continue
        encoded.append((prompt_ids, completion_ids, example.images))
    if not encoded:
        raise ValueError(
            f"every one of the {len(train_examples)} training examples is longer than "
            f"{limit} tokens; raise max_length or show less history"
        )
    report = SFTReport(
        out=str(out),
        train_examples=len(encoded),
        eval_examples=len(eval_examples),
        dropped_too_long=dropped,
        optimizer_steps=0,
        epochs=config.epochs,
    )
    if eval_examples:
        report.step_accuracy_before = step_accuracy(
            llm, agent, eval_examples, config.eval_max_new_tokens
        )

    net = llm.model
    if config.lora:
        from peft import LoraConfig, get_peft_model

        net = get_peft_model(
            net,
            LoraConfig(
                r=config.lora_r,
                lora_alpha=config.lora_alpha,
                lora_dropout=config.lora_dropout,
                target_modules=config.lora_targets,
                task_type="CAUSAL_LM",
            ),
        )
    if config.screenshot and not config.train_vision:
        for name, param in net.named_parameters():
            if _is_vision_tower(name):
                param.requires_grad_(False)
    net.train()
    params = [p for p in net.parameters() if p.requires_grad]
    lr = default_lr(config.lora) if config.lr is None else config.lr
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=config.weight_decay)
    from gui_gym.models.llm.precision import autocast, bf16_available, resolve_dtype

    bf16 = bf16_available(str(llm.device)) if config.bf16 is None else config.bf16
    if bf16:
        resolve_dtype("bfloat16", str(llm.device))  # one warning where bf16 is emulated
    llm.autocast = bf16  # held-out step accuracy generates in the same precision
    settings = {k: v for k, v in asdict(config).items()}
    state = {"epoch": 0, "batch": 0, "optimizer_steps": 0, "losses": [], "config": settings}
    loaded = _load_checkpoint(out, net, optimizer)
    if loaded is not None:
        saved = dict(loaded.get("config") or {})
        differs = sorted(
            k
            for k in set(saved) | set(settings)
            if k not in RESUME_MAY_CHANGE and saved.get(k) != settings.get(k)
        )
        if differs:
            shown = ", ".join(f"{k}: {saved.get(k)!r} -> {settings.get(k)!r}" for k in differs)
            raise ValueError(
                f"{out / CHECKPOINT_DIR} was written with other settings ({shown}); remove "
                "it or choose another --out"
            )
        reached = (loaded["epoch"], loaded["batch"])
        saved_epochs = saved.get("epochs")
        saved_end = (saved_epochs if isinstance(saved_epochs, int) else 0, 0)
        if reached <= saved_end and reached > (config.epochs, 0):
            # a shorter run than the saved one asked for, past its end (a counter past the
            # saved run's own end is corrupt: check_progress below says so)
            raise ValueError(
                f"{out / CHECKPOINT_DIR} is at epoch {reached[0]} batch {reached[1]}, past the "
                f"end of a {config.epochs}-epoch run; ask for more epochs or remove it"
            )
        state = loaded
        state["config"] = settings  # a longer or shorter run records its own epoch count
        report.resumed_from_step = state["optimizer_steps"]
    pad = llm.tokenizer.pad_token_id
    per_epoch = _batches(len(encoded), config.batch_size, config.seed, 0)
    from gui_gym.train.trainer import diverged

    if loaded is not None:
        from gui_gym.train.checkpoint import check_progress

        check_progress(
            out / CHECKPOINT_DIR / "trainer_state.json",
            state,
            epoch=config.epochs,
            batch=len(per_epoch),
        )
    total_batches = config.epochs * len(per_epoch)
    bar = None
    if progress_enabled(progress):
        bar = progress_bar(
            total=total_batches,
            initial=state["epoch"] * len(per_epoch) + state["batch"],
            desc="sft",
            unit="batch",
        )
    try:
        for epoch in range(state["epoch"], config.epochs):
            batches = _batches(len(encoded), config.batch_size, config.seed, epoch)
            for b in range(state["batch"] if epoch == state["epoch"] else 0, len(batches)):
                rows = [encoded[i] for i in batches[b]]
                pixels = _pixels(llm, [i for _, _, shown in rows for i in shown], net)
                with autocast(str(llm.device), bf16):
                    loss = _completion_loss(net, llm, rows, pad, pixels)
                if not bool(torch.isfinite(loss.detach())):
                    raise diverged(f"epoch {epoch} batch {b}", ["the loss"], out / CHECKPOINT_DIR)
                (loss / config.grad_accum).backward()
                state["losses"].append(float(loss.detach()))
                last_batch = b == len(batches) - 1
                if (b + 1) % config.grad_accum == 0 or last_batch:
                    optimizer.step()
                    optimizer.zero_grad(set_to_none=True)
                    with torch.no_grad():  # nothing non-finite is ever checkpointed
                        if any(not bool(torch.isfinite(p).all()) for p in params):
                            raise diverged(
                                f"epoch {epoch} batch {b}", ["the weights"], out / CHECKPOINT_DIR
                            )
                    state["optimizer_steps"] += 1
                    state["epoch"], state["batch"] = (
                        (epoch + 1, 0) if last_batch else (epoch, b + 1)
                    )
                    if last_batch or (
                        config.checkpoint_every
                        and state["optimizer_steps"] % config.checkpoint_every == 0
                    ):
                        _save_checkpoint(out, net, optimizer, state, config.lora)
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(loss=f"{state['losses'][-1]:.3f}")
    finally:
        if bar is not None:
            bar.close()
    net.eval()
    if config.lora:
        net = net.merge_and_unload()
    llm.model = net
    with library_bars_follow_the_rule():  # no "Writing model shards" bar in a log
        net.save_pretrained(out, safe_serialization=True)
    (llm.processor or llm.tokenizer).save_pretrained(out)
    report.optimizer_steps = state["optimizer_steps"]
    report.losses = state["losses"]
    if eval_examples:
        report.step_accuracy = step_accuracy(llm, agent, eval_examples, config.eval_max_new_tokens)
    report.seconds = time.perf_counter() - started
    atomic_write_text(out / REPORT_FILE, dumps_json(report.to_dict(), indent=1) + "\n")
    return report

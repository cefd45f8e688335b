"""The RL loop every algorithm shares: :class:`Algorithm`, what an algorithm module supplies
(its collection, advantages and loss), and :class:`Trainer`, everything else once: collect,
advantages, PPO-style epochs of mini-batches with gradient accumulation, LR schedule,
clipping, seeding, checkpoints with exact resume (weights, optimizer, scheduler, every RNG;
the format of :mod:`gui_gym.train.checkpoint`), JSONL metrics (:func:`load_metrics` reads
them back) and a rich progress bar; data-parallel over the processes ``accelerate launch``
starts (:mod:`gui_gym.train.data_parallel`).
"""

from __future__ import annotations

import copy
import json
import math
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from gui_gym.core.files import lock_output, recover_folder, write_folder_atomically
from gui_gym.core.progress import progress_enabled
from gui_gym.core.trajectory import (
    Trajectory,
    atomic_write_text,
    errors_naming,
    read_jsonl,
    write_jsonl,
)
from gui_gym.runs.rollout import EpisodeSpec, RolloutEngine
from gui_gym.train.checkpoint import (
    check_finite,
    load_optimizer_state,
    process_rng_streams,
    read_checkpoint,
    restore_process_rng,
    rng_stream_tensors,
    write_checkpoint,
)
from gui_gym.train.config import (
    STEP_INFO_KEYS,
    TrainConfig,
    require_torch,
    resolve_device,
    seed_everything,
)
from gui_gym.train.data_parallel import DataParallel
from gui_gym.train.losses import LossInputs, TurnSample, policy_loss, score_completions
from gui_gym.train.policy import Policy, autocast_context, uses_autocast

__all__ = ["TIMING_METRICS", "Algorithm", "Trainer", "TrainingDiverged", "load_metrics"]

TIMING_METRICS = ("rollout_seconds", "update_seconds", "iteration_seconds")
"""The wall-time metrics of each iteration (:meth:`Trainer.step`): measured, so the one part
of ``metrics.jsonl`` that differs between otherwise identical runs."""


class TrainingDiverged(RuntimeError):
    """The loss or the weights went NaN or infinite (:meth:`Trainer.train` stops, keeping
    the last good checkpoint)."""


def diverged(where: str, bad: Sequence[str], checkpoint: Path | None) -> TrainingDiverged:
    """The one-line :class:`TrainingDiverged` of every trainer (RL, SFT, PRM, progress model):
    ``where`` (the iteration, or epoch and batch), what went non-finite, and the checkpoint
    kept (None: a run without an output folder)."""
    kept = checkpoint if checkpoint is not None and checkpoint.is_dir() else "none yet"
    return TrainingDiverged(
        f"{where}: {', '.join(bad)} went non-finite (NaN or infinite); training stopped and "
        f"kept the last good checkpoint ({kept}): lower learning_rate or max_grad_norm and "
        "rerun to resume"
    )


class Algorithm:
    """What an algorithm module supplies. Subclasses set :attr:`name` and override
    :meth:`collect` and :meth:`advantages` (and :meth:`loss` when theirs is not the plain
    clipped surrogate).

    Attributes:
        needs_reference: Whether reference log-probs are computed for the batch (KL in the
            loss or in the reward).
    """

    name: ClassVar[str] = ""

    @property
    def needs_reference(self) -> bool:
        return False

    bootstraps: ClassVar[bool] = False
    """Whether the rollout keeps the last state's prompt of an episode cut by a step limit
    (``metadata["final_prompt"]``), for a critic's bootstrap value (PPO)."""

    def setup(self, trainer: Trainer) -> None:
        """Build what the algorithm owns (envs, critic) once the policy is loaded."""

    def collect(self, trainer: Trainer, iteration: int) -> list[list[Trajectory]]:
        """Roll out this iteration's groups of episodes."""
        raise NotImplementedError

    def advantages(
        self, trainer: Trainer, groups: list[list[Trajectory]], iteration: int
    ) -> list[TurnSample]:
        """Turn the groups into samples with per-token advantages."""
        raise NotImplementedError

    def loss(self, trainer: Trainer, inputs: LossInputs) -> tuple[Any, dict[str, float]]:
        return policy_loss(inputs)

    def modules(self) -> dict[str, Any]:
        """Extra trainable torch modules (a critic), saved in checkpoints under their name."""
        return {}

    def param_groups(self) -> list[dict[str, Any]]:
        """Extra optimizer parameter groups (a critic with its own learning rate)."""
        return []

    def state_dict(self) -> dict[str, Any]:
        """JSON-safe state to checkpoint (counters, running statistics)."""
        return {}

    def metrics(self) -> dict[str, Any]:
        """Numbers for each iteration's metrics record; :meth:`state_dict` by default (an
        algorithm whose state is bulky, such as ARPO's replay buffer, returns less)."""
        return self.state_dict()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`."""


# ------------------------------------------------------------------------------ the loop


def clip_group_gradients(optimizer: Any, default_max_norm: float) -> list[float]:
    """Clip each parameter group's gradient norm on its own (a group's ``max_grad_norm``, else
    ``default_max_norm``) and return the norms before clipping, in group order.

    verl optimises the actor and the critic with separate optimizers and clips each one's
    gradients apart; one joint clip let a large critic gradient (early in PPO training)
    shrink the actor's step. AdamW keeps its moments per parameter, so param groups with
    their own learning rate and clip are separate optimizers in all that matters.
    """
    import torch

    norms = []
    for group in optimizer.param_groups:
        params = [p for p in group["params"] if p.grad is not None]
        limit = float(group.get("max_grad_norm", default_max_norm))
        norm = torch.nn.utils.clip_grad_norm_(params, limit) if params else torch.tensor(0.0)
        norms.append(float(norm))
    return norms


def mini_batch_size(turns: int, config: TrainConfig) -> int:
    """Turns per mini-batch: ``mini_batch_turns``, or the batch split into a fixed
    ``mini_batches`` near-equal parts (verl's ``fixed_num_mini_batches``, UI-S1 Table 9)."""
    if config.mini_batches is None:
        return config.mini_batch_turns
    return max(1, math.ceil(turns / config.mini_batches))


def _chunks(items: Sequence[int], size: int) -> Iterator[list[int]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def _micro_batches(
    indices: Sequence[int], turns: Sequence[TurnSample], size: int
) -> Iterator[list[int]]:
    """``indices`` in micro-batches of ``size`` turns of similar length (sorted by prompt plus
    completion length, stable): a micro-batch is padded to its longest turn, so mixing a
    300-token first step with a 1,500-token tenth step pads most of the batch. The loss
    denominators are the mini-batch's, so grouping changes no gradient beyond float
    rounding."""
    ordered = sorted(indices, key=lambda i: len(turns[i].prompt_ids) + len(turns[i].completion_ids))
    return _chunks(ordered, size)


class Trainer:
    """The RL loop every algorithm shares.

    Each iteration: ``algorithm.collect`` (episodes, through the rollout engine), reference
    log-probs when needed, ``algorithm.advantages``, then ``update_epochs`` passes of shuffled
    mini-batches (``mini_batch_turns`` turns each, accumulated over micro-batches of
    ``micro_batch_turns``) of ``algorithm.loss``; the LR schedule steps once per iteration.
    Metrics go to ``out/metrics.jsonl``; a checkpoint to ``out/checkpoint`` every
    ``save_every`` iterations and at the end; a run started on an ``out`` with a checkpoint
    resumes from it and does exactly what the uninterrupted run would have done next.

    Under ``accelerate launch`` (more than one process) the loop is data-parallel
    (:mod:`gui_gym.train.data_parallel`): each process rolls out its share of the requests,
    every process sees the whole batch, each takes its share of every mini-batch and the
    gradients are summed, so an update equals the one-process update of the same batch; the
    main process alone writes files.

    Args:
        config: Shared hyperparameters.
        algorithm: The algorithm.
        policy: A loaded :class:`Policy` (default: :meth:`Policy.load` from ``config``).
        prompt: The agent's prompt: a name of :data:`gui_gym.agents.prompts.PROMPTS`
            (``progrm``, ``admire``, ``ui_s1``, ``gui_shepherd``, ``default``), a
            ``PromptFormat``, or a callable ``PromptInput -> chat messages``.
        on_batch: Called with each batch's groups and the iteration after collection and
            before advantages (ADMIRE's once-per-batch milestone refinement,
            :meth:`gui_gym.train.reward_stack.RewardStack.refine_milestones`).
        resume: Continue from ``out/checkpoint`` when there is one.
    """

    def __init__(
        self,
        config: TrainConfig,
        algorithm: Algorithm,
        *,
        policy: Policy | None = None,
        prompt: Any = "default",
        on_batch: Callable[[list[list[Trajectory]], int], None] | None = None,
        resume: bool = True,
    ):
        torch = require_torch()
        from gui_gym.agents.llm import LLMAgent
        from gui_gym.models.llm import TransformersLLM

        self.config = config
        self.algorithm = algorithm
        self.on_batch = on_batch
        self.out = Path(config.out)
        self.parallel = DataParallel.from_environment(config.device)
        # one seed for everything built below, on every process (LoRA adapters and heads
        # start random and must start equal); sampling streams are per process (see below)
        seed_everything(config.seed)
        needs_ref = algorithm.needs_reference or config.kl_coef > 0
        self.policy = policy or Policy.load(
            config,
            need_reference=needs_ref,
            device=self.parallel.device(resolve_device(config.device)),
        )
        if needs_ref and self.policy.reference is None and not self.policy.is_lora:
            reference = copy.deepcopy(self.policy.model).eval()
            for p in reference.parameters():
                p.requires_grad_(False)
            self.policy.reference = reference
        processor = getattr(self.policy, "processor", None)
        llm = TransformersLLM(
            self.policy.model,
            None if processor is not None else self.policy.tokenizer,
            device=self.policy.device,
            batch_size=config.generation_batch_size,
            processor=processor,
            # the sampler runs in the precision the trainer scores in (policy.autocast_context)
            autocast=uses_autocast(config, self.policy.device),
        )
        # a VLM's samples are scored from their stored ids + the screenshots kept here
        self.vision = (processor, llm.image_store) if processor is not None else None
        self.agent = LLMAgent(
            llm,
            prompt=prompt,
            temperature=config.temperature,
            max_new_tokens=config.max_new_tokens,
            screenshot=config.screenshot,
            images=config.images,
            coordinates=config.coordinates,
        )
        self._engines: dict[Any, Any] = {}
        self.algorithm.setup(self)
        groups = [
            {
                "params": [p for _, p in self.policy.trainable_named_parameters()],
                "lr": config.learning_rate,
            },
            *self.algorithm.param_groups(),
        ]
        self._group_names = [
            str(g.get("name", f"group{i}")) for i, g in enumerate(groups[1:], start=1)
        ]
        self.optimizer = torch.optim.AdamW(
            groups,
            weight_decay=config.weight_decay,
            betas=(config.adam_beta1, config.adam_beta2),
        )
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, self._lr_factor)
        if self.parallel.enabled:
            self.parallel.broadcast_parameters(self._parameters())
            seed_everything(self.parallel.seed(config.seed))
        self.iteration = 0
        self.history: list[dict[str, Any]] = []
        # a run killed mid-swap of checkpoint/ or model/ left the last complete one beside it
        recover_folder(self.out / "model")
        if resume and (recover_folder(self.out / "checkpoint") / "trainer_state.json").exists():
            self.load_checkpoint(self.out / "checkpoint")

    # -- schedule ---------------------------------------------------------------------------

    def _lr_factor(self, iteration: int) -> float:
        config = self.config
        if config.warmup_iterations and iteration < config.warmup_iterations:
            return (iteration + 1) / config.warmup_iterations
        if config.lr_schedule == "constant":
            return 1.0
        span = max(1, config.iterations - config.warmup_iterations)
        done = min(1.0, (iteration - config.warmup_iterations) / span)
        if config.lr_schedule == "linear":
            return 1.0 - done
        return 0.5 * (1.0 + math.cos(math.pi * done))

    def _parameters(self) -> list[Any]:
        """Every parameter the optimizer updates (policy, then the algorithm's)."""
        return [p for group in self.optimizer.param_groups for p in group["params"]]

    # -- rollouts ---------------------------------------------------------------------------

    def run_episodes(
        self, make_env: Callable[[], Any], requests: Sequence[dict[str, Any]]
    ) -> list[Trajectory]:
        """One episode per request (``{"seed": ..., "options": {"task": ...} | {...}}``)
        through the shared rollout engine (:mod:`gui_gym.runs.rollout`), the policy acting on
        every env at once; an episode lost to an env or server failure carries
        ``infra_error`` and is left out of the update by the algorithms.

        Data-parallel, each process runs its contiguous share of ``requests`` and every
        process returns all the episodes, in request order."""
        share = self.parallel.shard(len(requests))
        engine = self._engines.get(make_env)
        if engine is None:
            # an engine makes its envs up front: no more than the first batch needs
            size = max(1, min(self.config.num_envs, len(share)))
            engine = RolloutEngine(
                make_env,
                self.agent,
                num_envs=size,
                info_keys=STEP_INFO_KEYS,
                final_prompts=self.algorithm.bootstraps,
            )
            self._engines[make_env] = engine
        specs = []
        for position in share:
            options = dict(requests[position].get("options") or {})
            task = options.pop("task", None)
            specs.append(
                EpisodeSpec(
                    task,
                    requests[position].get("seed"),
                    episode=position,
                    options=options or None,
                )
            )
        episodes = engine.run(specs) if specs else []
        if not self.parallel.enabled:
            return episodes
        if self.vision is not None:  # every process may score any step: share the pixels
            self.parallel.share_images(self.vision[1], episodes)
        return [
            Trajectory.from_dict(record)
            for record in self.parallel.gather_shards([t.to_dict() for t in episodes])
        ]

    def close(self) -> None:
        """Close the rollout engines' envs."""
        for engine in self._engines.values():
            engine.close()
        self._engines.clear()

    # -- scoring ----------------------------------------------------------------------------

    def score(self, model: Any, turns: Sequence[TurnSample]) -> list[Any]:
        """Log-probs of the turns' completions under ``model``, micro-batched, no grad."""
        torch = require_torch()
        out: list[Any] = [None] * len(turns)
        with torch.no_grad(), autocast_context(self.config, self.policy.device):
            for chunk in _micro_batches(range(len(turns)), turns, self.config.micro_batch_turns):
                scored = score_completions(
                    model,
                    [turns[i] for i in chunk],
                    pad_id=self.policy.pad_id,
                    temperature=self.config.temperature,
                    device=self.policy.device,
                    vision=self.vision,
                )
                for i, logp in zip(chunk, scored, strict=True):
                    out[i] = logp.detach()
        return out

    def _score_shared(self, model: Any, turns: Sequence[TurnSample]) -> list[list[float]]:
        """:meth:`score` as lists, each process scoring its share of ``turns``."""
        share = [turns[i] for i in self.parallel.shard(len(turns))]
        local = [lp.cpu().tolist() for lp in self.score(model, share)]
        return self.parallel.gather_shards(local)

    def reference_logprobs(self, turns: Sequence[TurnSample]) -> None:
        """Fill ``ref_logprobs`` of every turn (the adapter switched off under LoRA)."""
        context = self.policy.reference_context()
        if context is not None:
            with context:
                scores = self._score_shared(self.policy.model, turns)
        elif self.policy.reference is not None:
            scores = self._score_shared(self.policy.reference, turns)
        else:
            raise ValueError("no reference model: set kl_coef > 0 or use LoRA")
        for turn, lp in zip(turns, scores):
            turn.ref_logprobs = lp

    def old_logprobs(self, turns: Sequence[TurnSample]) -> None:
        """Fill ``old_logprobs`` (``pi_old``: the current weights, before this update) of
        the turns that lack them."""
        missing = [t for t in turns if t.old_logprobs is None]
        for turn, lp in zip(missing, self._score_shared(self.policy.model, missing)):
            turn.old_logprobs = lp

    # -- one iteration ----------------------------------------------------------------------

    def step(self) -> dict[str, Any]:
        """Run one iteration (collect, advantages, update) and return its metrics.

        Besides the algorithm's statistics, the metrics hold where the iteration's wall time
        went (this process's): ``rollout_seconds`` (collecting the groups: generation and the
        envs), ``update_seconds`` (re-scoring, advantages, reference and old log-probs and the
        optimizer steps) and ``iteration_seconds``. They are measurements, so two runs (or two
        data-parallel processes) agree on every metric but these.
        """
        iteration = self.iteration
        started = time.perf_counter()
        groups = self.algorithm.collect(self, iteration)
        collected = time.perf_counter()
        episodes = [t for g in groups for t in g]
        clean = [t for t in episodes if getattr(t, "infra_error", None) is None]
        metrics: dict[str, Any] = {
            "iteration": iteration,
            "episodes": len(clean),
            "infra_errors": len(episodes) - len(clean),
            "success_rate": float(np.mean([t.success for t in clean])) if clean else None,
            "mean_return": float(np.mean([t.total_reward for t in clean])) if clean else None,
            "mean_steps": float(np.mean([len(t.steps) for t in clean])) if clean else None,
        }
        if self.on_batch is not None:
            groups = self._run_on_batch(groups, iteration)
        turns = self.algorithm.advantages(self, groups, iteration)
        metrics.update(self.update(turns))
        metrics["lr"] = self.scheduler.get_last_lr()[0]
        metrics.update(self.algorithm.metrics())  # running counters (dropped groups, ...)
        with warnings.catch_warnings():
            # the schedule runs per iteration, also one where no group taught anything and
            # the optimizer did not step
            warnings.filterwarnings("ignore", message="Detected call of `lr_scheduler.step")
            self.scheduler.step()
        ended = time.perf_counter()
        metrics[TIMING_METRICS[0]] = round(collected - started, 3)
        metrics[TIMING_METRICS[1]] = round(ended - collected, 3)
        metrics[TIMING_METRICS[2]] = round(ended - started, 3)
        self.iteration += 1
        return metrics

    def _run_on_batch(self, groups: list[list[Trajectory]], iteration: int) -> list[list]:
        """``on_batch`` on the main process (it may write, e.g. the milestone store); its
        re-scored groups are then every process's."""
        assert self.on_batch is not None
        if self.parallel.is_main:
            self.on_batch(groups, iteration)
        if not self.parallel.enabled:
            return groups
        records = self.parallel.broadcast_json([[t.to_dict() for t in g] for g in groups])
        return [[Trajectory.from_dict(r) for r in group] for group in records]

    def update(self, turns: list[TurnSample]) -> dict[str, Any]:
        """``update_epochs`` passes of mini-batches over ``turns``; returns mean statistics."""
        torch = require_torch()
        config = self.config
        if not turns:
            return {"turns": 0, "tokens": 0}
        if (self.algorithm.needs_reference or config.kl_coef > 0) and any(
            t.ref_logprobs is None for t in turns
        ):
            self.reference_logprobs(turns)
        self.old_logprobs(turns)
        stats: dict[str, float] = {}
        grad_norms: list[float] = []
        extra_norms: dict[str, list[float]] = {}
        drift = [
            abs(a - b)
            for t in turns
            if t.sampled_logprobs is not None and len(t.sampled_logprobs) == len(t.old_logprobs)
            for a, b in zip(t.sampled_logprobs, t.old_logprobs or [])
        ]
        params = self._parameters()
        device = self.policy.device
        mini_size = mini_batch_size(len(turns), config)
        for epoch in range(config.update_epochs):
            # the mini-batch order is a function of (seed, iteration, epoch): the same on
            # every data-parallel process and in a resumed run
            order = np.random.default_rng([config.seed, self.iteration, epoch, 1])
            for mini in _chunks(order.permutation(len(turns)).tolist(), mini_size):
                self.optimizer.zero_grad(set_to_none=True)
                total_tokens = sum(len(turns[i].completion_ids) for i in mini)
                # this process's share of the mini-batch; the loss denominators stay the
                # whole mini-batch's, so the summed gradient is the mini-batch's
                mine = [mini[i] for i in self.parallel.shard(len(mini))]
                for micro in _micro_batches(mine, turns, config.micro_batch_turns):
                    batch = [turns[i] for i in micro]
                    with autocast_context(config, device):
                        logp = score_completions(
                            self.policy.model,
                            batch,
                            pad_id=self.policy.pad_id,
                            temperature=config.temperature,
                            device=device,
                            vision=self.vision,
                        )

                    def tensors(name: str, batch: list[TurnSample] = batch) -> list[Any]:
                        return [
                            torch.tensor(getattr(t, name), dtype=torch.float32, device=device)
                            for t in batch
                        ]

                    inputs = LossInputs(
                        turns=batch,
                        logp=logp,
                        old_logp=tensors("old_logprobs"),
                        ref_logp=tensors("ref_logprobs")
                        if batch[0].ref_logprobs is not None
                        else None,
                        advantages=tensors("advantages"),
                        total_tokens=total_tokens,
                        total_turns=len(mini),
                        config=config,
                    )
                    with autocast_context(config, device):
                        loss, parts = self.algorithm.loss(self, inputs)
                    loss.backward()
                    for key, value in parts.items():
                        stats[key] = stats.get(key, 0.0) + value
                self.parallel.all_reduce_gradients(params)
                norms = clip_group_gradients(self.optimizer, config.max_grad_norm)
                grad_norms.append(norms[0])
                for name, norm in zip(self._group_names, norms[1:]):
                    extra_norms.setdefault(f"grad_norm_{name}", []).append(norm)
                self.optimizer.step()
        # loss parts are each micro-batch's share of its mini-batch: their sum over a
        # mini-batch (and over the processes) is the mini-batch's value, averaged here over
        # the mini-batches
        n_mini = math.ceil(len(turns) / mini_size) * config.update_epochs
        mean = {key: v / n_mini for key, v in self.parallel.all_reduce_sum(stats).items()}
        mean["grad_norm"] = float(np.mean(grad_norms))
        mean.update({key: float(np.mean(v)) for key, v in extra_norms.items()})
        advantages = [a for t in turns for a in t.advantages]
        mean.update(
            turns=len(turns),
            tokens=sum(len(t.completion_ids) for t in turns),
            advantage_mean=float(np.mean(advantages)),
            advantage_std=float(np.std(advantages)),
            logprob_drift=float(np.mean(drift)) if drift else None,
        )
        return mean

    # -- the run ----------------------------------------------------------------------------

    def train(self, on_iteration: Callable[[dict[str, Any]], None] | None = None) -> list[dict]:
        """Run until ``config.iterations``; returns the metrics of this call's iterations.

        The main process holds the exclusive lock on ``out`` for the run (as every CLI
        command does on its outputs): a second run into the same folder, library call or
        CLI, raises :class:`~gui_gym.core.files.OutputInUseError` naming the holder's PID
        instead of interleaving checkpoints and metrics.
        """
        if not self.parallel.is_main:
            return self._train(on_iteration)
        with lock_output(self.out, "training output"):
            return self._train(on_iteration)

    def _train(self, on_iteration: Callable[[dict[str, Any]], None] | None) -> list[dict]:
        config = self.config
        main = self.parallel.is_main
        if main:
            self.out.mkdir(parents=True, exist_ok=True)
            text = json.dumps(asdict(config), indent=2) + "\n"
            atomic_write_text(self.out / "config.json", text)
        done: list[dict[str, Any]] = []
        progress = _progress(progress_enabled(config.progress) and main)
        with progress:
            task = progress.add_task(
                f"{self.algorithm.name}", total=config.iterations, completed=self.iteration
            )
            while self.iteration < config.iterations:
                metrics = self.step()
                self._check_finite(metrics)
                self.history.append(metrics)
                done.append(metrics)
                if main:
                    write_jsonl(self.out / "metrics.jsonl", self.history)
                if self.iteration % config.save_every == 0 or self.iteration == config.iterations:
                    self.save_checkpoint(self.out / "checkpoint")
                if on_iteration is not None:
                    on_iteration(metrics)
                success = metrics["success_rate"]
                progress.update(
                    task,
                    advance=1,
                    description=f"{self.algorithm.name} success "
                    + ("-" if success is None else f"{success:.2f}"),
                )
        if main:
            write_folder_atomically(self.out / "model", self.policy.save_pretrained)
        self.parallel.barrier()
        self.close()
        return done

    def _check_finite(self, metrics: dict[str, Any]) -> None:
        """Stop a run whose loss or weights went NaN or infinite, before anything of that
        iteration is saved: its metrics are not logged and the last checkpoint stays."""
        import torch

        bad = sorted(
            key
            for key, value in metrics.items()
            if isinstance(value, float) and not math.isfinite(value) and key != "mean_return"
        )
        with torch.no_grad():
            if any(not bool(torch.isfinite(p).all()) for p in self._parameters()):
                bad.append("the weights")
        if bad:
            raise diverged(f"iteration {metrics['iteration']}", bad, self.out / "checkpoint")

    # -- checkpoints ------------------------------------------------------------------------

    def save_checkpoint(self, path: Path) -> None:
        """Everything the next iteration depends on, safetensors + JSON, written atomically.

        Data-parallel, every process must call it (each one's random streams are gathered);
        the main process writes: rank 0's streams under the one-process names, rank ``r``'s
        as ``rank{r}.torch_cpu`` (``rng.safetensors``) and ``ranks[r - 1]``
        (``trainer_state.json``)."""
        streams = self.parallel.gather_json(process_rng_streams())
        if not self.parallel.is_main:
            self.parallel.barrier()
            return

        weights = {
            f"policy.{n}": p.detach().cpu().contiguous()
            for n, p in self.policy.trainable_named_parameters()
        }
        for prefix, module in self.algorithm.modules().items():
            # parameters, not state_dict: tied weights appear once (safetensors refuses
            # shared tensors)
            for n, p in module.named_parameters():
                weights[f"{prefix}.{n}"] = p.detach().cpu().contiguous()
        rng = rng_stream_tensors(streams)
        state = {
            "iteration": self.iteration,
            "algorithm": self.algorithm.name,
            "algorithm_state": self.algorithm.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "python_random": streams[0]["python_random"],
            "numpy_random": streams[0]["numpy_random"],
            "world_size": self.parallel.world_size,
            "ranks": [
                {key: s[key] for key in ("python_random", "numpy_random")} for s in streams[1:]
            ],
            "history": self.history,
        }
        write_checkpoint(path, weights=weights, optimizer=self.optimizer, state=state, rng=rng)
        self.parallel.barrier()

    def load_checkpoint(self, path: Path) -> None:
        """Restore a :meth:`save_checkpoint` folder.

        Raises:
            ValueError: when it was written by another algorithm or for another model.
        """
        torch = require_torch()
        state, weights, rng = read_checkpoint(path)
        if state.get("algorithm") != self.algorithm.name:
            raise ValueError(
                f"{path} is a {state.get('algorithm')!r} checkpoint, not {self.algorithm.name!r};"
                " use another --out"
            )
        own = dict(self.policy.trainable_named_parameters())
        check_finite(
            path / "weights.safetensors", weights, {f"policy.{n}": p for n, p in own.items()}
        )
        missing = [n for n in own if f"policy.{n}" not in weights]
        if missing:
            raise ValueError(
                f"checkpoint {path} does not fit this model (missing {missing[:3]}); "
                "use another --out"
            )
        with torch.no_grad():
            for name, param in own.items():
                param.copy_(weights[f"policy.{name}"].to(param.device, param.dtype))
            for prefix, module in self.algorithm.modules().items():
                for name, param in module.named_parameters():
                    key = f"{prefix}.{name}"
                    if key not in weights:
                        raise ValueError(f"checkpoint {path} has no {key}; use another --out")
                    param.copy_(weights[key].to(param.device, param.dtype))
        load_optimizer_state(self.optimizer, path)
        # a missing or malformed field is one line naming the file and the field
        with errors_naming(path / "trainer_state.json"):
            self.scheduler.load_state_dict(state["scheduler"])
            self._load_rng_state(path, state, rng)
            self.algorithm.load_state_dict(state["algorithm_state"])
            self.iteration = int(state["iteration"])
            self.history = list(state.get("history", []))

    def _load_rng_state(self, path: Path, state: dict[str, Any], rng: dict[str, Any]) -> None:
        """Restore this process's random streams from a checkpoint (see
        :meth:`save_checkpoint`); a process the checkpoint has none for (resumed with more
        processes than it was written with) keeps its fresh per-process seed, with a warning:
        the weights, optimizer and schedule are still exact, its sampling is not."""
        rank = self.parallel.rank
        saved = int(state.get("world_size", 1))
        if saved != self.parallel.world_size and self.parallel.is_main:
            warnings.warn(
                f"{path} was written by {saved} process(es) and resumes with "
                f"{self.parallel.world_size}: sampling streams differ from the original run's",
                stacklevel=3,
            )
        if rank >= saved:
            return
        prefix = f"rank{rank}." if rank else ""
        python, numpy_state = (
            (state["python_random"], state["numpy_random"])
            if rank == 0
            else (
                state["ranks"][rank - 1]["python_random"],
                state["ranks"][rank - 1]["numpy_random"],
            )
        )
        restore_process_rng(rng, prefix, python, numpy_state)


# ------------------------------------------------------------------------------ progress bar


class _NoProgress:
    def __enter__(self) -> _NoProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def add_task(self, *args: Any, **kwargs: Any) -> int:
        return 0

    def update(self, *args: Any, **kwargs: Any) -> None:
        return None


def _progress(enabled: bool) -> Any:
    if not enabled:
        return _NoProgress()
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    return Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(file=sys.stderr),
    )


def load_metrics(out: str | Path) -> list[dict[str, Any]]:
    """The metrics records of a run folder (empty when there are none yet)."""
    path = Path(out) / "metrics.jsonl"
    return list(read_jsonl(path)) if path.exists() else []

"""From an env id, a reward choice and a model folder to a ready :class:`~gui_gym.train.
trainer.Trainer`: what ``gui-gym train`` runs, and what a script can call in one line::

    from gui_gym.train.runner import make_trainer

    trainer = make_trainer("grpo", "GuiGym/WikiHow-v0", reward="outcome+0.3*milestone",
                           model="runs/sft/model", settings={"iterations": 50})
    trainer.train()

``settings`` (and a ``--config`` JSON/TOML file) take any field of
:class:`~gui_gym.train.config.TrainConfig` or of the algorithm's own config dataclass; an
unknown name is an error that lists the allowed ones. Each algorithm module's ``TRAIN_DEFAULTS``
(the shared settings its paper fixes) apply under them.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from gui_gym.core.progress import library_bars_follow_the_rule
from gui_gym.train.config import epoch_of
from gui_gym.train.reward_stack import RewardStack

__all__ = [
    "ALGORITHMS",
    "build_tiny_policy",
    "env_texts",
    "load_settings",
    "make_env_factory",
    "make_trainer",
    "split_settings",
]

ALGORITHMS = ("grpo", "reinforce_pp", "ppo", "semi_online", "offline_grpo", "arpo", "gigpo")
"""The algorithm modules of :mod:`gui_gym.train`."""

PRESETS: dict[str, tuple[str, dict[str, Any]]] = {
    # ADMIRE Table 4's RLOO arm (Ahmadian et al. 2024): GRPO with the leave-one-out baseline
    "rloo": ("grpo", {"baseline": "rloo"}),
    # ADMIRE Table 4's DAPO arm (Yu et al. 2025): clip-higher (eps_high 0.28, Sec. 3.1),
    # dynamic sampling's filter of groups with equal rewards (Sec. 3.2), the token-level loss
    # (Sec. 3.3), the soft overlong punishment (Sec. 3.4) and no KL term
    "dapo": (
        "grpo",
        {
            "clip_eps_high": 0.28,
            "drop_flat_groups": True,
            "overlong_buffer": 0.2,  # Sec. 3.4: L_cache 4,096 of L_max 20,480
            "loss_agg": "token_mean",
            "kl_coef": 0.0,
        },
    ),
}
"""``--algo`` names that are an algorithm module with settings (the user's settings win)."""

ALGORITHM_NAMES = (*ALGORITHMS, *PRESETS)
"""The ``--algo`` names."""

REPLAY_ALGORITHMS = ("semi_online", "offline_grpo")
"""Algorithms that train on recorded expert data (``GuiGym/SemiOnlineReplay-v0``)."""


def _module(algo: str) -> Any:
    import importlib

    if algo not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algo!r}; allowed: {', '.join(ALGORITHM_NAMES)}")
    return importlib.import_module(f"gui_gym.train.{algo}")


def resolve_algorithm(algo: str, settings: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(module name, settings)`` for an ``--algo`` name: a preset's settings under the
    given ones.

    Raises:
        ValueError: for an unknown name.
    """
    if algo in PRESETS:
        module, preset = PRESETS[algo]
        return module, {**preset, **settings}
    if algo not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algo!r}; allowed: {', '.join(ALGORITHM_NAMES)}")
    return algo, dict(settings)


def _algo_config_class(algo: str) -> type:
    module = _module(algo)
    names = {
        "grpo": "GRPOConfig",
        "reinforce_pp": "ReinforcePPConfig",
        "ppo": "PPOConfig",
        "semi_online": "SemiOnlineConfig",
        "offline_grpo": "OfflineGRPOConfig",
        "arpo": "ARPOConfig",
        "gigpo": "GiGPOConfig",
    }
    return getattr(module, names[algo])


def load_settings(path: str | Path) -> dict[str, Any]:
    """Settings from a ``.json`` or ``.toml`` file (a flat table of field names).

    Raises:
        ValueError: for another suffix, a file that does not parse, or a non-table.
    """
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as err:
        raise ValueError(f"cannot read config {path}: {err.strerror}") from None
    try:
        if path.suffix == ".json":
            data = json.loads(text)
        elif path.suffix == ".toml":
            data = tomllib.loads(text)
        else:
            raise ValueError(f"config {path} must be .json or .toml")
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as err:
        raise ValueError(f"config {path} does not parse: {err}") from None
    if not isinstance(data, dict):
        raise ValueError(f"config {path} must hold a table of settings")
    return data


def split_settings(algo: str, settings: Mapping[str, Any]) -> tuple[dict, dict]:
    """``(train settings, algorithm settings)``.

    Raises:
        ValueError: for a name that is neither, listing the allowed names.
    """
    from gui_gym.train.config import TrainConfig

    shared = set(TrainConfig.field_names())
    own = {f.name for f in dataclasses.fields(_algo_config_class(algo))}
    unknown = sorted(set(settings) - shared - own)
    if unknown:
        raise ValueError(
            f"unknown setting(s) {', '.join(unknown)} for {algo}; allowed: "
            f"{', '.join(sorted(shared | own))}"
        )
    return (
        {k: v for k, v in settings.items() if k in shared},
        {k: v for k, v in settings.items() if k in own},
    )


def _make_wrapped_env(env_id: str, env_kwargs: Mapping[str, Any], stack: RewardStack) -> Any:
    import gymnasium as gym

    import gui_gym  # noqa: F401  (registers the ids)

    return stack.wrap(gym.make(env_id, **env_kwargs))


def make_env_factory(
    env_id: str, env_kwargs: Mapping[str, Any], stack: RewardStack
) -> Callable[[], Any]:
    """A picklable callable making ``gym.make(env_id, **env_kwargs)`` with the reward stack."""
    return functools.partial(_make_wrapped_env, env_id, dict(env_kwargs), stack)


def make_trainer(
    algo: str,
    env_id: str,
    *,
    model: str | Path,
    reward: str = "outcome",
    lora: bool = False,
    settings: Mapping[str, Any] | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    tasks: list[str] | None = None,
    prompt: Any = "default",
    prm_model: str | Path | None = None,
    progress_model: str | Path | None = None,
    orm_model: str | Path | None = None,
    progress_k: int = 1,
    embedder: str = "minilm",
    milestone_mode: str = "adaptive",
    milestone_store: str | Path | None = None,
    judge_model: str | Path | None = None,
    judge_url: str | None = None,
    milestone_model: str | Path | None = None,
    milestone_url: str | None = None,
    resume: bool = True,
) -> Any:
    """Build the reward stack, env factory, algorithm and :class:`~gui_gym.train.trainer.Trainer`.

    Args:
        algo: One of :data:`ALGORITHM_NAMES` (``rloo`` and ``dapo`` are GRPO with
            :data:`PRESETS`).
        env_id: A registered id; ``semi_online`` and ``offline_grpo`` need
            ``GuiGym/SemiOnlineReplay-v0`` with a ``dataset`` in ``env_kwargs``.
        model: Folder of the policy (e.g. a ``gui-gym sft`` output).
        reward: A reward expression (:func:`gui_gym.train.reward_stack.parse_reward`).
        lora: Train LoRA adapters.
        settings: :class:`~gui_gym.train.config.TrainConfig` and algorithm settings.
        env_kwargs: ``gym.make`` arguments (``split``, ``category``, ``max_steps``,
            ``dataset``, ...).
        tasks: Task ids to train on (default: every task of the env's split).
        prompt: The agent's prompt name or callable.
        prm_model: PRM folder for ``prm`` rewards, for offline GRPO's ``reward="prm"``, and
            for PPO's ``critic_init="prm"``.
        progress_model: ProgRM folder for ``progress`` rewards (default: env milestones).
        orm_model: Outcome reward model folder (``gui-gym train-progress --kind orm``) for
            ``orm`` rewards (ProgRM Table 1's learned-ORM baseline).
        progress_k: History length ``k`` of the progress reward (ProgRM Eq. 2; 1 by default).
        embedder: ``minilm`` or ``hashing`` for milestone matching.
        milestone_mode: ``adaptive`` (ADMIRE) or ``static`` (Table 3: milestones generated
            once, never refined).
        milestone_store: A milestone store JSON to start from (e.g. human-written milestones
            or another run's, Table 3's Static (Human) and Static (7B)); copied into the run
            folder when it has no store yet, so the given file is never changed.
        judge_model: The ``judge`` reward's LLM (a local folder, or with ``judge_url`` a
            served model's name); None keeps ProRe's rule-based components.
        judge_url: OpenAI-compatible server of ``judge_model``.
        milestone_model: The ``milestone`` reward's generator LLM, ADMIRE's own
            (:class:`~gui_gym.models.milestones.LLMMilestoneGenerator`, Eq. 6-7): a local
            folder, or with ``milestone_url`` a served model's name. None keeps the LLM-free
            :class:`~gui_gym.models.milestones.TrajectoryMilestoneGenerator`.
        milestone_url: OpenAI-compatible server of ``milestone_model``.
        resume: Continue from the run folder's checkpoint when there is one.

    Raises:
        ValueError: for an unknown algorithm, setting, reward, or an env the algorithm
            cannot train on.
    """
    from gui_gym.train.config import TrainConfig
    from gui_gym.train.trainer import Trainer

    name = algo
    algo, settings = resolve_algorithm(algo, dict(settings or {}))
    module = _module(algo)
    train_settings, algo_settings = split_settings(algo, settings)
    train_settings["model"] = str(model)
    train_settings["lora"] = bool(lora) or bool(train_settings.get("lora", False))
    config = TrainConfig.for_algorithm(getattr(module, "TRAIN_DEFAULTS", {}), **train_settings)
    if algo == "ppo" and algo_settings.get("critic_init") == "prm":
        if prm_model is None:
            raise ValueError("critic_init='prm' needs --prm-model (a gui-gym train-prm folder)")
        algo_settings["critic_init"] = str(prm_model)
    algo_config = _algo_config_class(algo)(**algo_settings)
    env_kwargs = dict(env_kwargs or {})
    if algo in REPLAY_ALGORITHMS and "dataset" not in env_kwargs:
        raise ValueError(
            f"{algo} trains on recorded expert data: give env id GuiGym/SemiOnlineReplay-v0 "
            "and --env-arg dataset=DIR"
        )
    store = Path(config.out) / "milestones.json"
    if milestone_store is not None:
        source = Path(milestone_store)
        if not source.is_file():
            raise ValueError(f"milestone store {source} is not a file")
        if not store.exists():
            from gui_gym.core.trajectory import atomic_write_text
            from gui_gym.rewards.milestone_store import MilestoneStore

            MilestoneStore(source).task_ids()  # a bad store fails here, naming the file
            store.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(store, source.read_text())
    stack = RewardStack.from_text(
        reward,
        milestone_store=store,
        embedder=embedder,
        prm_model=prm_model,
        progress_model=progress_model,
        orm_model=orm_model,
        progress_k=progress_k,
        milestone_mode=milestone_mode,
        judge_model=judge_model,
        judge_url=judge_url,
        milestone_model=milestone_model,
        milestone_url=milestone_url,
    )
    make_env = make_env_factory(env_id, env_kwargs, stack)
    probe = make_env()
    base = probe.unwrapped
    if algo == "semi_online":
        algorithm = module.SemiOnline(make_env, list(range(len(base.dataset))), algo_config)
    elif algo == "offline_grpo":
        prm = None
        if algo_config.reward == "prm":
            if prm_model is None:
                raise ValueError("offline GRPO with reward='prm' needs --prm-model")
            prm = stack._model("prm", stack._prm)
        algorithm = module.OfflineGRPO(make_env, algo_config, prm=prm)
    else:
        task_ids = list(tasks) if tasks else list(getattr(base, "task_ids", []) or [])
        if not task_ids:
            raise ValueError(f"{env_id} lists no tasks to train on; pass tasks explicitly")
        cls = {
            "grpo": "GRPO",
            "reinforce_pp": "ReinforcePP",
            "ppo": "PPO",
            "arpo": "ARPO",
            "gigpo": "GiGPO",
        }[algo]
        algorithm = getattr(module, cls)(make_env, task_ids, algo_config)
    if name != algo:
        # a preset names its runs and checkpoints (a dapo checkpoint is not resumed as rloo)
        algorithm.name = name

    on_batch = None
    if "milestone" in stack.weights:

        def on_batch(groups: list[list[Any]], iteration: int) -> None:
            # ADMIRE Algorithm 1: one refinement per batch, every trajectory scored with the
            # same milestone version; the milestone weight decays with the epoch over the
            # task set, counted from 1 (lines 3-4)
            stack.refine_milestones(probe, groups, epoch=milestone_epoch(algorithm, iteration))

    return Trainer(config, algorithm, prompt=prompt, on_batch=on_batch, resume=resume)


def milestone_epoch(algorithm: Any, iteration: int) -> int:
    """ADMIRE's epoch ``E`` of the batch ``iteration``: passes over the algorithm's tasks,
    counted from 1 (Algorithm 1 line 3); one batch an epoch where the algorithm has no task
    list."""
    tasks = getattr(algorithm, "tasks", None)
    per_batch = getattr(getattr(algorithm, "config", None), "tasks_per_iteration", None)
    if not tasks or not per_batch:
        return iteration + 1
    return epoch_of(iteration, len(tasks), min(int(per_batch), len(tasks)))


def build_tiny_policy(
    folder: str | Path,
    texts: list[str],
    *,
    vocab_size: int = 1024,
    n_layer: int = 2,
    n_embd: int = 64,
    n_positions: int = 2048,
    seed: int = 0,
) -> Path:
    """Write a small random GPT-2 policy with a BPE tokenizer trained on ``texts`` to
    ``folder`` (safetensors, no download): for CPU demos, examples and benchmarks."""
    from gui_gym.models.prm import build_tokenizer, tiny_causal_lm

    folder = Path(folder)
    tokenizer = build_tokenizer(texts, vocab_size)
    model = tiny_causal_lm(
        tokenizer, n_layer=n_layer, n_embd=n_embd, n_positions=n_positions, seed=seed
    )
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    with library_bars_follow_the_rule():  # no "Writing model shards" bar in a log
        model.save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)
    return folder


def env_texts(env_id: str, count: int = 50, **env_kwargs: Any) -> list[str]:
    """Instructions, screens and oracle actions of ``count`` episodes: text to train a tiny
    tokenizer on."""
    import gymnasium as gym

    import gui_gym  # noqa: F401

    env = gym.make(env_id, **env_kwargs)
    texts: list[str] = []
    for seed in range(count):
        observation, _ = env.reset(seed=seed)
        texts += [observation["instruction"], observation["screen"]]
        for _ in range(3):
            action = env.unwrapped.oracle_action()
            texts.append(str(action))
            observation, _, terminated, truncated, _ = env.step(action)
            texts.append(observation["screen"])
            if terminated or truncated:
                break
    env.close()
    return texts

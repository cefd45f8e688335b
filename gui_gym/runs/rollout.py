"""The rollout engine: many envs at once, one policy, exact tokens, groups, infra errors.

One engine serves ``gui-gym eval``, ``gui-gym record``, SFT data and every RL trainer, so an
agent behaves the same wherever it runs. Episodes come back as
:class:`~gui_gym.core.trajectory.Trajectory` records whose steps carry, when the policy
gives them, the prompt, the generated text, the exact prompt and completion token ids and
the behaviour log-probs (``Step.prompt``, ``completion``, ``prompt_ids``,
``completion_ids``, ``logprobs``). Trainers score ``completion_ids``; nothing is ever
re-tokenized.

API (what a trainer needs)::

    from gui_gym.runs.rollout import EpisodeSpec, RolloutEngine

    engine = RolloutEngine("GuiGym/WikiHow-v0", agent, num_envs=64,
                           env_kwargs={"split": "train"})          # or env=callable
    trajectories = engine.run([EpisodeSpec(task_id=t, seed=s) for ...])   # spec order
    groups = engine.run_groups(task_ids, group_size=8, seed=0)     # GRPO groups
    groups = engine.run_fork_groups(specs, anchor_step=2, group_size=8)   # same-state groups
    engine.stats            # RolloutStats: episodes, infra_errors, steps, steps_per_second
    engine.close()

* ``agent`` is a :class:`~gui_gym.agents.base.BatchAgent` (e.g.
  :class:`~gui_gym.agents.llm.LLMAgent`) or a factory ``(env, seed) -> Agent`` for the
  one-env agents (oracle, random); :func:`as_batch_agent` turns an agent name or an
  ``env -> Agent`` factory into the latter. A batch agent with a synchronous backend (a local model)
  is called once per round with every env that is waiting to act (one batched generation);
  one with a coroutine backend (``aact_batch`` and ``is_async``, e.g. ``LLMAgent`` over
  ``OpenAICompatLLM``) gets one request per env, all in flight together from one asyncio
  loop, so N envs against a server cost about one round-trip per step, not N.
* ``run(specs)`` runs the :class:`EpisodeSpec` s (task, seed, optional group id) on at most
  ``num_envs`` envs at once and returns one trajectory per spec, in order;
  ``arun`` is its coroutine (for callers that already run a loop). ``on_episode(position,
  trajectory)`` is called as each one finishes (streaming writes, progress bars).
* ``run_groups(tasks, group_size=G, seed=s)``: G episodes per task, all reset with the same
  seed (identical start state), sharing ``group_id``; returns :class:`RolloutGroup` s.
* ``run_fork_groups(specs, anchor_step=k, group_size=G)``: each spec's episode is run to
  step ``k``, its env is forked ``G`` times (``env.unwrapped.fork()``, wrappers copied, see
  :func:`~gui_gym.runs.slots.fork_env`) and the policy acts once in each copy of the identical state; each
  member then runs to its episode's end (``continue_to_end=False`` stops after the one
  action). Members share the prefix ``steps[:k]`` and have ``anchor_step == k``. Needs
  in-process envs.
* Infrastructure failures are not agent failures: an env that raises, a worker process
  that dies (killed, crashed), a model server past its retries
  (:class:`~gui_gym.models.llm.LLMError`) end that episode with
  ``trajectory.infra_error`` set to the cause; the env (or worker) is rebuilt and the run
  goes on. :class:`RolloutGroup` keeps such episodes in ``infra`` apart from
  ``trajectories``; :attr:`RolloutEngine.stats` counts them apart. They are never reward 0.
  Any other exception from the agent (a bug) propagates.
* A hung env call (past ``step_timeout``, default 60 s; the rule is
  :mod:`gui_gym.runs.deadline`'s) is an infrastructure failure too: the worker is killed and
  restarted (inline: the env is rebuilt at once and the hung call left to end on its thread).
* Inline envs are stepped concurrently (:class:`~gui_gym.runs.slots.InlineRounds`): the env
  calls that the episodes issue together (all the steps of one round, after one batched
  ``act_batch``) run at once, one thread each, so a round waits for its slowest call once,
  not for the sum; results are handed back in the order the calls were issued, so the
  episodes go on as in a serial loop. Envs must therefore be safe to call from two threads
  at once, or their class sets ``thread_safe = False`` (its envs' calls then take turns).
* ``workers="process"`` runs each env in its own worker process
  (:class:`~gui_gym.runs.slots.ProcessEnv`, for slow envs such as
  MiniWoB's Chromium); a worker that dies is detected (its index, task and exit code are
  logged and put in ``infra_error``), restarted, and the run continues. The env callable
  and agent factory must then be picklable (a registered id, ``functools.partial``, a
  module-level function); batch agents stay in this process.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import copy
import functools
import logging
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import gymnasium as gym

from gui_gym.agents.base import Agent, AgentStep, BatchAgent, Turn, history_description
from gui_gym.agents.named import make_agent
from gui_gym.core.trajectory import Step, Trajectory, json_safe
from gui_gym.models.llm import LLMError
from gui_gym.runs.deadline import DEFAULT_STEP_TIMEOUT, EnvFailure, EnvHung, check_timeout
from gui_gym.runs.slots import AgentFactory, InlineEnv, InlineRounds, ProcessEnv

__all__ = [
    "EpisodeSpec",
    "RolloutEngine",
    "RolloutGroup",
    "RolloutStats",
    "as_batch_agent",
    "sanitize_prompt",
]

_T = TypeVar("_T")

logger = logging.getLogger(__name__)


def as_batch_agent(
    agent: str | Callable[[gym.Env], Agent] | BatchAgent,
) -> BatchAgent | AgentFactory:
    """What :class:`RolloutEngine` takes, from any agent a caller of ``gui-gym eval``,
    ``record`` or SOP holds.

    Args:
        agent: A batch agent (one with ``act_batch``, e.g.
            :class:`~gui_gym.agents.llm.LLMAgent`), a built-in agent name that
            :func:`~gui_gym.agents.named.make_agent` builds (``"oracle"``,
            ``"random:done=0.1"``, ...), or a factory ``env -> Agent``.

    Returns:
        The batch agent as it is, or an :data:`AgentFactory` ``(env, seed) -> Agent``: a
        named agent is built per episode with that episode's seed, as the random agents
        need. The factory is a ``functools.partial`` of a module-level function, so it
        pickles to ``workers="process"`` when a factory passed in does.
    """
    if hasattr(agent, "act_batch"):
        return agent
    if isinstance(agent, str):
        return functools.partial(_named_agent, agent)
    return functools.partial(_factory_agent, agent)


def _named_agent(name: str, env: gym.Env, seed: int) -> Agent:
    return make_agent(name, env, seed)


def _factory_agent(factory: Callable[[gym.Env], Agent], env: gym.Env, seed: int) -> Agent:
    return factory(env)


@dataclass
class EpisodeSpec:
    """One episode to run.

    Attributes:
        task_id: The task (``reset(options={"task": ...})``); None lets the env choose.
        seed: The ``reset`` seed (also the one-env agent's seed).
        group_id: Group identity copied to the trajectory.
        episode: The caller's index for the episode (kept in ``metadata["episode"]``).
        options: More ``reset`` options.
    """

    task_id: str | None = None
    seed: int | None = None
    group_id: str | None = None
    episode: int | None = None
    options: dict[str, Any] | None = None


@dataclass
class RolloutGroup:
    """Episodes that share a start: a GRPO group, or an anchor-state fork group.

    Attributes:
        group_id: The members' ``group_id``.
        task_id: Their task.
        seed: Their reset seed.
        trajectories: Members that ran to their end (compare their rewards).
        infra: Members lost to infrastructure (``infra_error`` set): left out, counted here.
        anchor_step: For fork groups, the step at which the env was forked.
        skipped: For fork groups, why no fork happened (the episode ended, or was lost,
            before the anchor step); the prefix episode is then the only member.
    """

    group_id: str
    task_id: str | None
    seed: int | None
    trajectories: list[Trajectory] = field(default_factory=list)
    infra: list[Trajectory] = field(default_factory=list)
    anchor_step: int | None = None
    skipped: str | None = None

    @property
    def rewards(self) -> list[float]:
        """Each valid member's total reward (what a group-relative advantage compares)."""
        return [t.total_reward for t in self.trajectories]


@dataclass
class RolloutStats:
    """Counters of an engine since it was made (or :meth:`RolloutEngine.reset_stats`)."""

    episodes: int = 0
    infra_errors: int = 0
    steps: int = 0
    agent_calls: int = 0
    seconds: float = 0.0

    @property
    def steps_per_second(self) -> float:
        return self.steps / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, float]:
        return {
            "episodes": self.episodes,
            "infra_errors": self.infra_errors,
            "steps": self.steps,
            "agent_calls": self.agent_calls,
            "seconds": self.seconds,
            "steps_per_second": self.steps_per_second,
        }


def sanitize_prompt(prompt: Any) -> Any:
    """A prompt as JSON-safe data for a trajectory file: image parts become
    ``{"type": "image"}`` placeholders (the screenshots themselves are not stored)."""
    if prompt is None or isinstance(prompt, str):
        return prompt
    out = []
    for message in prompt:
        content = message.get("content")
        if not isinstance(content, str):
            content = [
                {"type": "text", "text": p.get("text", "")}
                if p.get("type") == "text"
                else {"type": "image"}
                for p in content
            ]
        out.append({"role": message.get("role"), "content": content})
    return out


# ---------------------------------------------------------------------------------- engine


class _Batcher:
    """Collects the act requests of a synchronous batch agent and answers them with one
    ``act_batch`` call once every live episode is waiting (or busy in an env worker)."""

    def __init__(self, engine: RolloutEngine):
        self.engine = engine
        self.pending: list[tuple[dict[str, Any], dict[str, Any], list[Turn], asyncio.Future]] = []

    async def submit(
        self, observation: dict[str, Any], info: dict[str, Any], turns: list[Turn]
    ) -> AgentStep:
        future = asyncio.get_running_loop().create_future()
        self.pending.append((observation, info, turns, future))
        self.maybe_flush()
        return await future

    def maybe_flush(self) -> None:
        engine = self.engine
        if self.pending and len(self.pending) >= engine._live - engine._in_env:
            batch, self.pending = self.pending, []
            engine.stats.agent_calls += 1
            try:
                steps = engine.agent.act_batch(  # type: ignore[union-attr]
                    [b[0] for b in batch], [b[1] for b in batch], [b[2] for b in batch]
                )
                if len(steps) != len(batch):
                    raise ValueError(
                        f"act_batch returned {len(steps)} steps for {len(batch)} observations"
                    )
            except Exception as err:
                for *_, future in batch:
                    future.set_exception(err)
                return
            for (*_, future), step in zip(batch, steps, strict=True):
                future.set_result(step)


class RolloutEngine:
    """Runs episodes of one env id with one policy on many envs at once (module docstring).

    Args:
        env: A registered id, or a callable that makes one (wrapped) env.
        agent: A :class:`~gui_gym.agents.base.BatchAgent`, or a factory
            ``(env, seed) -> Agent`` for one-env agents.
        num_envs: Episodes in flight at once (envs kept).
        env_kwargs: ``gym.make`` arguments when ``env`` is an id.
        workers: ``"inline"`` (envs in this process) or ``"process"`` (one worker process
            per env; see the module docstring).
        record_trees: Store each step's UI tree in the trajectory (and the last screen's
            in ``metadata["final_tree"]``).
        record_prompts: Store each step's prompt (images as placeholders) and generation.
        on_step: Called as ``on_step(trajectory, step, observation)`` after each step is
            recorded, with the observation the action was chosen on (``gui-gym record``
            saves screenshots with it).
        on_end: Called as ``on_end(trajectory, observation, info)`` when an episode ends
            (not when it is lost to infrastructure), with the last observation and info.
        info_keys: Keys of each step's ``info`` to keep in ``Step.info`` (wrapper components
            a trainer reads: ``"semi_online"``, ``"milestone"``, ``"prm"``, ``"judge"``).
        final_prompts: For an episode cut by a step limit (truncated, not terminated), keep
            the prompt the policy would see at its last state in ``metadata["final_prompt"]``
            (``{"prompt_ids", "vision", "prompt"}``, from the batch agent's ``encode_state``):
            PPO bootstraps the critic's value there (GAE's ``V(s_T)``).
        step_timeout: Seconds one env call (reset, step, a one-env agent's act) may take
            (default :data:`~gui_gym.runs.deadline.DEFAULT_STEP_TIMEOUT`, 60 s; None: no
            limit). Past it the call counts as hung (:mod:`gui_gym.runs.deadline`): a worker
            process is killed and restarted; for an inline env the engine stops waiting,
            rebuilds the env at once and closes the old one on a daemon thread, from any
            thread the engine runs in (no signals; the hung call's thread ends only when the
            call returns). The episode ends as ``infra_error``
            (:class:`~gui_gym.runs.deadline.EnvHung`), as in the Ray pool and OpenEnv server.

    Raises:
        ValueError: for a bad ``num_envs``, ``workers`` or ``step_timeout``.
        TypeError: for an agent that is neither a batch agent nor a factory.
    """

    def __init__(
        self,
        env: str | Callable[[], gym.Env],
        agent: BatchAgent | AgentFactory,
        *,
        num_envs: int = 8,
        env_kwargs: dict[str, Any] | None = None,
        workers: str = "inline",
        record_trees: bool = False,
        record_prompts: bool = True,
        on_step: Callable[[Trajectory, Step, dict[str, Any]], None] | None = None,
        on_end: Callable[[Trajectory, dict[str, Any], dict[str, Any]], None] | None = None,
        info_keys: Sequence[str] = (),
        final_prompts: bool = False,
        step_timeout: float | None = DEFAULT_STEP_TIMEOUT,
    ):
        step_timeout = check_timeout(step_timeout)
        if not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        if workers not in ("inline", "process"):
            raise ValueError(f"workers must be 'inline' or 'process', got {workers!r}")
        if isinstance(env, str):
            import gui_gym  # noqa: F401  (registers the ids)

            self.env_id = env
            make: Callable[[], gym.Env] = functools.partial(gym.make, env, **(env_kwargs or {}))
        elif callable(env):
            if env_kwargs:
                raise ValueError("env_kwargs goes with an env id, not with an env callable")
            self.env_id = ""
            make = env
        else:
            raise TypeError(f"env must be an id or a callable, got {type(env).__name__}")
        self.batch_agent = hasattr(agent, "act_batch")
        if not self.batch_agent and not callable(agent):
            raise TypeError(
                "agent must be a BatchAgent (act_batch) or a factory (env, seed) -> Agent, "
                f"got {type(agent).__name__}"
            )
        self.agent = agent
        self.num_envs = num_envs
        self.workers = workers
        self.record_trees = record_trees
        self.record_prompts = record_prompts
        self.on_step = on_step
        self.on_end = on_end
        self.info_keys = tuple(info_keys)
        self.final_prompts = bool(final_prompts)
        self.step_timeout = step_timeout
        self._make = make
        factory = None if self.batch_agent else agent
        self._slots: list[Any] = []
        for i in range(num_envs):
            if workers == "inline":
                self._slots.append(InlineEnv(make, factory))  # type: ignore[arg-type]
            else:
                self._slots.append(ProcessEnv(i, make, factory, self.step_timeout))  # type: ignore[arg-type]
        if not self.env_id:
            spec = getattr(self._slots[0].env, "spec", None) if workers == "inline" else None
            self.env_id = spec.id if spec is not None else ""
        self._keep_screenshots = int(getattr(agent, "images", 0) or 0) > 0
        self._async_agent = self.batch_agent and bool(getattr(agent, "is_async", False))
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._inline = InlineRounds(self.step_timeout)  # the inline envs' calls
        self._live = 0
        self._in_env = 0
        self._batcher: _Batcher | None = None
        self.stats = RolloutStats()
        self._closed = False

    # ---------------------------------------------------------------------------- helpers

    @property
    def agent_name(self) -> str:
        return str(getattr(self.agent, "name", getattr(self.agent, "__name__", "agent")))

    def reset_stats(self) -> None:
        self.stats = RolloutStats()

    async def _env_call(self, slot: Any, method: str, *args: Any) -> Any:
        """Call an env slot: in a thread for in-process envs (the calls issued together run
        together, see :class:`~gui_gym.runs.slots.InlineRounds`), in a thread waiting on the worker process for
        worker processes (the loop keeps serving other envs while one waits)."""
        if isinstance(slot, InlineEnv):
            return await self._inline.call(slot, method, args)
        if self._executor is None:
            self._executor = concurrent.futures.ThreadPoolExecutor(self.num_envs)
        self._in_env += 1
        if self._batcher is not None:
            self._batcher.maybe_flush()
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._executor, getattr(slot, method), *args)
        finally:
            self._in_env -= 1

    async def _act(
        self, slot: Any, observation: dict[str, Any], info: dict[str, Any], turns: list[Turn]
    ) -> AgentStep:
        if not self.batch_agent:
            return await self._env_call(slot, "act", observation, info)
        if self._async_agent:
            self.stats.agent_calls += 1
            [step] = await self.agent.aact_batch([observation], [info], [turns])  # type: ignore[union-attr]
            return step
        assert self._batcher is not None
        return await self._batcher.submit(observation, info, turns)

    def _fail(self, slot: Any, trajectory: Trajectory, cause: str, restart: bool) -> None:
        where = f"task {trajectory.task_id or '?'} (seed {trajectory.seed})"
        index = getattr(slot, "index", None)
        label = f"env worker {index}" if index is not None else "env"
        trajectory.infra_error = cause
        logger.warning("%s: episode of %s lost to infrastructure: %s", label, where, cause)
        if restart:
            try:
                slot.restart()
                logger.warning("%s restarted", label)
            except Exception as err:  # reported; the next episode fails too
                logger.error("%s could not be restarted: %s", label, err)

    # --------------------------------------------------------------------------- episodes

    def _new_trajectory(self, spec: EpisodeSpec) -> Trajectory:
        metadata: dict[str, Any] = {}
        if spec.episode is not None:
            metadata["episode"] = spec.episode
        return Trajectory(
            env_id=self.env_id,
            task_id=spec.task_id or "",
            instruction="",
            seed=spec.seed,
            agent=self.agent_name,
            metadata=metadata,
            group_id=spec.group_id,
        )

    async def _start(
        self, slot: Any, spec: EpisodeSpec, trajectory: Trajectory
    ) -> tuple[dict[str, Any], dict[str, Any]] | None:
        options = dict(spec.options or {})
        if spec.task_id is not None:
            options["task"] = spec.task_id
        try:
            observation, info, meta = await self._env_call(
                slot, "reset", spec.seed, options or None
            )
        except Exception as err:  # an env that raised: infrastructure
            self._fail(slot, trajectory, f"reset failed: {_short_error(err)}", restart=True)
            return None
        trajectory.task_id = str(info.get("task_id", trajectory.task_id))
        trajectory.instruction = str(observation.get("instruction", ""))
        trajectory.agent = str(meta.pop("agent", trajectory.agent))  # a one-env agent's own
        trajectory.metadata.update(meta)
        return observation, info

    async def _play(
        self,
        slot: Any,
        trajectory: Trajectory,
        observation: dict[str, Any],
        info: dict[str, Any],
        turns: list[Turn],
        stop_at: int | None = None,
    ) -> tuple[dict[str, Any], dict[str, Any], bool]:
        """Play from the current state until the episode ends (or ``stop_at`` steps are in
        the trajectory). Returns the last observation and info and whether it ended."""
        done = False
        while not done and (stop_at is None or len(trajectory.steps) < stop_at):
            try:
                step = await self._act(slot, observation, info, turns)
            except LLMError as err:
                self._fail(slot, trajectory, f"model failed: {err}", restart=False)
                return observation, info, True
            except EnvFailure as err:  # a one-env agent in a worker
                self._fail(slot, trajectory, f"agent in env worker: {err}", restart=True)
                return observation, info, True
            tree = None
            if self.record_trees:
                try:
                    tree = await self._env_call(slot, "tree")
                except EnvHung as err:
                    self._fail(slot, trajectory, f"tree failed: {err}", restart=True)
                    return observation, info, True
                except Exception:  # no tree: the step is recorded without one
                    tree = None
            screen = str(observation.get("screen", ""))
            try:
                result = await self._env_call(slot, "step", step.action)
            except LLMError as err:  # a reward model's server is down: the env is fine
                self._fail(slot, trajectory, f"reward model failed: {err}", restart=False)
                return observation, info, True
            except Exception as err:  # an env that raised or died
                self._fail(slot, trajectory, f"step failed: {_short_error(err)}", restart=True)
                return observation, info, True
            new_observation, reward, terminated, truncated, new_info = result
            record = Step.from_transition(
                len(trajectory.steps),
                screen,
                step.action,
                reward,
                terminated,
                truncated,
                new_info,
                thought=step.thought,
                tree=tree,
            )
            if self.record_prompts and step.prompt is not None:
                record.prompt = sanitize_prompt(step.prompt)
                record.completion = step.text
            if self.info_keys:  # JSON-safe, as the recorded components are (Step.info)
                record.info.update(
                    {k: json_safe(new_info[k]) for k in self.info_keys if k in new_info}
                )
            record.prompt_ids = step.prompt_ids
            record.completion_ids = step.completion_ids
            record.logprobs = step.logprobs
            record.vision = step.vision
            trajectory.steps.append(record)
            if self.on_step is not None:
                self.on_step(trajectory, record, observation)
            turns.append(
                Turn(
                    screen=screen,
                    step=step,
                    screenshot=observation.get("screenshot") if self._keep_screenshots else None,
                    action_description=history_description(new_info),
                    action_valid=bool(new_info.get("action_valid", True)),
                )
            )
            self.stats.steps += 1
            observation, info = new_observation, new_info
            done = bool(terminated or truncated)
        if done:
            trajectory.finish(observation, info)
            last = trajectory.steps[-1] if trajectory.steps else None
            if self.final_prompts and last is not None and last.truncated and not last.terminated:
                encode = getattr(self.agent, "encode_state", None)
                try:
                    final = encode(observation, info, turns) if encode is not None else None
                except Exception as err:  # the episode stays; PPO then bootstraps with 0
                    logger.warning(
                        "final prompt of task %s not encoded: %s", trajectory.task_id, err
                    )
                    final = None
                if final is not None:
                    final["prompt"] = sanitize_prompt(final["prompt"])
                    trajectory.metadata["final_prompt"] = final
            if self.record_trees:
                with contextlib.suppress(Exception):
                    trajectory.metadata["final_tree"] = await self._env_call(slot, "tree")
            if self.on_end is not None:
                self.on_end(trajectory, observation, info)
        return observation, info, done

    async def _episode(self, slot: Any, spec: EpisodeSpec) -> Trajectory:
        trajectory = self._new_trajectory(spec)
        started = await self._start(slot, spec, trajectory)
        if started is not None:
            await self._play(slot, trajectory, *started, turns=[])
        return trajectory

    async def _fork_group(
        self, slot: Any, spec: EpisodeSpec, anchor_step: int, size: int, to_end: bool
    ) -> RolloutGroup:
        group_id = spec.group_id or f"fork:{spec.task_id}:{spec.seed}:{anchor_step}"
        group = RolloutGroup(group_id, spec.task_id, spec.seed, anchor_step=anchor_step)
        prefix = self._new_trajectory(spec)
        prefix.group_id = group_id
        started = await self._start(slot, spec, prefix)
        if started is None:
            group.infra.append(prefix)
            group.skipped = "the episode was lost before the anchor step"
            return group
        turns: list[Turn] = []
        observation, info, ended = await self._play(
            slot, prefix, *started, turns=turns, stop_at=anchor_step
        )
        group.task_id = prefix.task_id
        if prefix.infra_error is not None or ended:
            (group.infra if prefix.infra_error else group.trajectories).append(prefix)
            group.skipped = (
                "the episode was lost before the anchor step"
                if prefix.infra_error
                else f"the episode ended after {len(prefix.steps)} steps, before step {anchor_step}"
            )
            return group
        if not isinstance(slot, InlineEnv):
            raise TypeError("fork groups need in-process envs (workers='inline')")
        children = [InlineEnv.forked(slot, spec.seed or 0) for _ in range(size)]
        members = [copy.deepcopy(prefix) for _ in children]
        for member in members:
            member.anchor_step = anchor_step
        # the parent waits while its members act: it leaves the live count and each member
        # joins it until its own end (so a batch never waits for a finished member)
        self._live += size - 1
        try:
            await asyncio.gather(
                *(
                    self._member(child, member, observation, info, list(turns), to_end)
                    for child, member in zip(children, members, strict=True)
                )
            )
        finally:
            self._live += 1
            for child in children:
                child.close()
        for member in members:
            (group.infra if member.infra_error else group.trajectories).append(member)
        return group

    async def _member(
        self,
        slot: InlineEnv,
        member: Trajectory,
        observation: dict[str, Any],
        info: dict[str, Any],
        turns: list[Turn],
        to_end: bool,
    ) -> None:
        try:
            await self._play(
                slot,
                member,
                observation,
                info,
                turns,
                stop_at=None if to_end else len(member.steps) + 1,
            )
        finally:
            self._live -= 1
            if self._batcher is not None:
                self._batcher.maybe_flush()
        if not to_end and member.infra_error is None and member.steps:
            last = member.steps[-1]
            if not (last.terminated or last.truncated):
                member.metadata["stopped_after_anchor"] = True

    async def _schedule(
        self,
        jobs: Sequence[Any],
        run_one: Callable[[Any, Any], Any],
        on_done: Callable[[int, Any], None] | None,
    ) -> list[Any]:
        if self._closed:
            raise RuntimeError("this RolloutEngine is closed")
        results: list[Any] = [None] * len(jobs)
        free: asyncio.Queue[Any] = asyncio.Queue()
        for slot in self._slots:
            free.put_nowait(slot)
        self._batcher = _Batcher(self) if self.batch_agent and not self._async_agent else None
        started = time.perf_counter()

        async def job(position: int, slot: Any, item: Any) -> None:
            try:
                results[position] = await run_one(slot, item)
            finally:
                self._live -= 1
                free.put_nowait(slot)
                if self._batcher is not None:
                    self._batcher.maybe_flush()
            if on_done is not None:
                on_done(position, results[position])

        tasks = []
        try:
            for position, item in enumerate(jobs):
                slot = await free.get()
                self._live += 1
                tasks.append(asyncio.ensure_future(job(position, slot, item)))
            await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            self._live = 0
            self._in_env = 0
            self._inline.stop()
            self.stats.seconds += time.perf_counter() - started
        return results

    def _count(self, trajectories: Sequence[Trajectory]) -> None:
        self.stats.episodes += len(trajectories)
        self.stats.infra_errors += sum(t.infra_error is not None for t in trajectories)

    # ------------------------------------------------------------------------- public API

    async def arun(
        self,
        specs: Sequence[EpisodeSpec],
        on_episode: Callable[[int, Trajectory], None] | None = None,
    ) -> list[Trajectory]:
        """The coroutine form of :meth:`run`."""
        specs = [s if isinstance(s, EpisodeSpec) else EpisodeSpec(*s) for s in specs]
        out = await self._schedule(specs, self._episode, on_episode)
        self._count(out)
        return out

    def run(
        self,
        specs: Sequence[EpisodeSpec],
        on_episode: Callable[[int, Trajectory], None] | None = None,
    ) -> list[Trajectory]:
        """Run ``specs`` (at most ``num_envs`` at once) and return their trajectories in
        order; an episode lost to infrastructure has ``infra_error`` set.

        Args:
            specs: The episodes.
            on_episode: Called with ``(position, trajectory)`` as each episode finishes.
        """
        return self._on_own_loop(self.arun(specs, on_episode))

    def _on_own_loop(self, work: Coroutine[Any, Any, _T]) -> _T:
        """Run ``work`` on a fresh event loop, then close the agent's connections of that
        loop (an :class:`OpenAICompatLLM`'s): they belong to it, and the next run's loop
        could not close them."""

        async def main() -> _T:
            try:
                return await work
            finally:
                disconnect = getattr(self.agent, "adisconnect", None)
                if disconnect is not None:
                    await disconnect()

        return asyncio.run(main())

    def run_groups(
        self,
        tasks: Sequence[str | None],
        group_size: int,
        *,
        seed: int = 0,
        on_episode: Callable[[int, Trajectory], None] | None = None,
    ) -> list[RolloutGroup]:
        """GRPO groups: ``group_size`` episodes of each task, all reset with the same seed
        (task ``k`` uses ``seed + k``), so they start from the identical state and differ
        only by the policy's sampling.

        Raises:
            ValueError: for ``group_size < 1``.
        """
        if not isinstance(group_size, int) or group_size < 1:
            raise ValueError(f"group_size must be a positive int, got {group_size!r}")
        specs = []
        for k, task in enumerate(tasks):
            group_id = f"grpo:{k}:{task}:{seed + k}"
            specs += [
                EpisodeSpec(task, seed + k, group_id=group_id, episode=k * group_size + j)
                for j in range(group_size)
            ]
        trajectories = self.run(specs, on_episode)
        groups = []
        for k, task in enumerate(tasks):
            members = trajectories[k * group_size : (k + 1) * group_size]
            group = RolloutGroup(specs[k * group_size].group_id or "", task, seed + k)
            group.task_id = members[0].task_id or task
            for t in members:
                (group.infra if t.infra_error else group.trajectories).append(t)
            groups.append(group)
        return groups

    def run_fork_groups(
        self,
        specs: Sequence[EpisodeSpec],
        *,
        anchor_step: int,
        group_size: int,
        continue_to_end: bool = True,
    ) -> list[RolloutGroup]:
        """Anchor-state groups: run each spec to step ``anchor_step``, fork the env
        ``group_size`` times and let the policy act from each identical copy (see the module
        docstring). Returns one :class:`RolloutGroup` per spec.

        Raises:
            ValueError: for ``anchor_step < 0`` or ``group_size < 1``.
            TypeError: with ``workers="process"`` (forks live in this process).
        """
        if not isinstance(anchor_step, int) or anchor_step < 0:
            raise ValueError(f"anchor_step must be an int >= 0, got {anchor_step!r}")
        if not isinstance(group_size, int) or group_size < 1:
            raise ValueError(f"group_size must be a positive int, got {group_size!r}")
        if self.workers != "inline":
            raise TypeError("fork groups need in-process envs (workers='inline')")

        async def one(slot: Any, spec: EpisodeSpec) -> RolloutGroup:
            return await self._fork_group(slot, spec, anchor_step, group_size, continue_to_end)

        groups = self._on_own_loop(self._schedule(list(specs), one, None))
        for group in groups:
            self._count(group.trajectories + group.infra)
        return groups

    def close(self) -> None:
        """Close every env (and stop the worker processes)."""
        if self._closed:
            return
        self._closed = True
        for slot in self._slots:
            slot.close()
        if self._executor is not None:
            self._executor.shutdown(wait=False)
        self._inline.close()

    def __enter__(self) -> RolloutEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _short_error(err: BaseException) -> str:
    text = str(err) or type(err).__name__
    first = text.strip().splitlines()[0] if text.strip() else text
    if isinstance(err, EnvFailure):
        return first
    return f"{type(err).__name__}: {first}"

"""Runs inside verl's own environment (``.venv-verl``, built by ``scripts/setup.sh``):
gui-gym's verl agent loop driven through verl 0.9.1's own classes, with a server manager
backed by a real tiny Hugging Face model's generation. Prints one JSON object of what
happened; ``tests/test_verl_integration.py`` asserts on it.

The path is verl's: the tasks are exported with ``gui-gym export-tasks``, loaded by verl's
``RLHFDataset`` and collated into a ``DataProto``; ``AgentLoopWorker.generate_sequences``
picks the loop from the agent-loop YAML of ``docs/engines_verl.md`` (loaded as verl loads
``agent_loop_config_path``), instantiates it with hydra, runs it, pads and batches the output
(``rm_scores`` included). Only the worker's ``__init__`` (Ray, model-config loading) is left
out: its attributes are set here.

Usage: python -m tests.verl_checks OUT_DIR
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

AGENT_LOOP_YAML = """\
- name: gui_gym
  _target_: gui_gym.integrations.verl.GuiGymAgentLoop
  env_id: GuiGym/WikiHow-v0
  reward: {reward}
  prompt: default
  max_steps: {max_steps}
"""


def build_model(folder: Path) -> None:
    """A ChatML byte-level BPE tokenizer (trained on WikiHow prompts) and a 2-layer Qwen2:
    ``model_type`` qwen2 makes verl pick its Qwen Continuous Token builder, which inserts the
    newline a ChatML template writes after ``<|im_end|>``."""
    import gymnasium as gym
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    import gui_gym  # noqa: F401

    env = gym.make("GuiGym/WikiHow-v0", split="test")
    texts = []
    for task_id in env.unwrapped.task_ids[:40]:
        observation, _ = env.reset(seed=0, options={"task": task_id})
        texts += [observation["instruction"], observation["screen"]]
    texts.append("Thought: Done: What is the next action? <action>CLICK(3)</action>")
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    core.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=2000,
            special_tokens=SPECIALS,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>"
    )
    tokenizer.chat_template = CHATML
    torch.manual_seed(0)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=16384,
        eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"),
        pad_token_id=tokenizer.convert_tokens_to_ids("<|endoftext|>"),
        tie_word_embeddings=True,
    )
    Qwen2ForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def make_server(model: Any, tokenizer: Any, script: list[str] | None) -> Any:
    """A verl ``LLMServerClient`` whose ``generate`` (the one call verl's agent loops make)
    runs the tiny model's ``generate`` on the prompt ids it is given. With ``script``, turn
    ``k`` is constrained to the tokens of ``script[k]`` followed by ``<|im_end|>`` (so the
    episode follows the expert); log-probs are the model's own either way."""
    import torch
    from verl.workers.rollout.llm_server import LLMServerClient
    from verl.workers.rollout.replica import TokenOutput

    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")

    class TinyModelServer(LLMServerClient):
        def __init__(self) -> None:
            super().__init__(config=None, load_balancer_handle=None)
            self.calls: list[dict[str, Any]] = []

        async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
            turn = sum(1 for c in self.calls if c["request_id"] == request_id)
            torch.manual_seed(1000 + len(self.calls))
            forced = None
            if script is not None:
                forced = [*tokenizer.encode(script[turn], add_special_tokens=False), eos]
            start = len(prompt_ids)

            def allowed(_batch: int, ids: torch.Tensor) -> list[int]:
                done = ids.shape[-1] - start
                return [forced[done] if done < len(forced) else eos]

            with torch.no_grad():
                out = model.generate(
                    torch.tensor([list(prompt_ids)]),
                    attention_mask=torch.ones(1, start, dtype=torch.long),
                    do_sample=True,
                    temperature=float(sampling_params.get("temperature", 1.0)) or 1.0,
                    top_k=0,
                    top_p=1.0,
                    max_new_tokens=len(forced) if forced else 12,
                    eos_token_id=eos,
                    pad_token_id=tokenizer.pad_token_id,
                    prefix_allowed_tokens_fn=allowed if forced else None,
                    output_logits=True,
                    return_dict_in_generate=True,
                )
            ids = out.sequences[0, start:].tolist()
            logprobs = [
                float(torch.log_softmax(out.logits[i][0].float(), dim=-1)[tok])
                for i, tok in enumerate(ids)
            ]
            self.calls.append(
                {
                    "request_id": request_id,
                    "prompt_ids": list(prompt_ids),
                    "token_ids": ids,
                    "log_probs": logprobs,
                }
            )
            return TokenOutput(token_ids=ids, log_probs=logprobs, stop_reason="completed")

    return TinyModelServer()


def verl_config(response_length: int) -> Any:
    from omegaconf import OmegaConf

    return OmegaConf.create(
        {
            "actor_rollout_ref": {
                "rollout": {
                    "name": "vllm",
                    "prompt_length": 4096,
                    "response_length": response_length,
                    "temperature": 1.0,
                    "top_p": 1.0,
                    "top_k": -1,
                    "calculate_log_probs": True,
                    "full_determinism": False,
                    "val_kwargs": {"top_p": 1.0, "top_k": -1, "temperature": 0},
                    "agent": {"default_agent_loop": "gui_gym", "num_workers": 1},
                    "multi_turn": {"max_assistant_turns": None, "max_user_turns": None},
                    "trace": {"token2text": False},
                },
                "model": {},
            },
            "data": {
                "prompt_key": "prompt",
                "max_prompt_length": 4096,
                "filter_overlong_prompts": True,
                "filter_overlong_prompts_workers": 1,
                "apply_chat_template_kwargs": {},
                "return_raw_chat": True,
            },
        }
    )


def run_batch(
    folder: Path, work: Path, *, reward: str, max_steps: int, response_length: int, script: Any
) -> dict[str, Any]:
    """Export one task, load it with verl's dataset, run verl's worker over it."""
    import gymnasium as gym
    from omegaconf import OmegaConf
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from verl.experimental.agent_loop import agent_loop as verl_agent_loop
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
    from verl.protocol import DataProto
    from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn

    import gui_gym.integrations.verl  # noqa: F401  (registers the loop)
    from gui_gym.integrations.tasks import task_rows, write_rows

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    env = gym.make("GuiGym/WikiHow-v0", split="test")
    task_id = script["task_id"]
    parquet = work / f"tasks-{reward.replace('+', '_')}-{max_steps}-{response_length}.parquet"
    write_rows(task_rows(env, "GuiGym/WikiHow-v0", split="test", tasks=[task_id]), parquet)
    config = verl_config(response_length)
    dataset = RLHFDataset([str(parquet)], tokenizer, config.data, processor=None)
    batch = DataProto.from_single_dict(collate_fn([dataset[0]]))
    # the agent-loop YAML of docs/engines_verl.md, loaded as AgentLoopWorker.__init__ loads it
    yaml = work / "agent_loop.yaml"
    yaml.write_text(AGENT_LOOP_YAML.format(reward=reward, max_steps=max_steps))
    for entry in OmegaConf.load(yaml):
        verl_agent_loop._agent_loop_registry[entry.name] = entry
    assert list(batch.non_tensor_batch["agent_name"]) == ["gui_gym"]  # the rows name the loop

    server = make_server(model, tokenizer, script.get("completions"))
    worker = AgentLoopWorker.__new__(AgentLoopWorker)
    worker.config = config
    worker.llm_client = server
    worker.teacher_client = None
    worker.reward_loop_worker_handles = None
    worker.rollout_config = config.actor_rollout_ref.rollout
    worker.dataset_cls = RLHFDataset
    worker.tokenizer = tokenizer
    worker.processor = None
    worker.hf_model_type = model.config.model_type
    worker.mm_processor_kwargs = {}
    worker.distillation_enabled = False
    worker.tools = []
    output = asyncio.run(worker.generate_sequences(batch))

    prompt_width = config.actor_rollout_ref.rollout.prompt_length
    attention = output.batch["attention_mask"][0].tolist()
    responses = output.batch["responses"][0].tolist()
    n_response = sum(attention[prompt_width:])
    n_prompt = sum(attention[:prompt_width])
    prompts = output.batch["prompts"][0].tolist()[prompt_width - n_prompt :]
    extra = output.non_tensor_batch["gui_gym"][0]
    return {
        "task_id": task_id,
        "calls": server.calls,
        "prompt_ids": prompts,
        "response_ids": responses[:n_response],
        "response_mask": output.batch["response_mask"][0].tolist()[:n_response],
        "rollout_log_probs": output.batch["rollout_log_probs"][0].tolist()[:n_response],
        "rm_scores": output.batch["rm_scores"][0].tolist()[:n_response],
        "num_turns": int(output.non_tensor_batch["__num_turns__"][0]),
        "gui_gym": extra,
        "turn_scores": list(output.non_tensor_batch["turn_scores"][0]),
        "reward_extra_keys": list(output.meta_info.get("reward_extra_keys", [])),
        "success_column": [float(v) for v in output.non_tensor_batch["success"]],
        "eos_id": tokenizer.convert_tokens_to_ids("<|im_end|>"),
        "newline_id": tokenizer.encode("\n", add_special_tokens=False)[0],
        "reference_return": reference_return(reward, task_id, max_steps, extra["actions"]),
    }


def make_vlm_server(model: Any, processor: Any) -> Any:
    """A verl ``LLMServerClient`` over a tiny LLaVA: the pixels of every image verl sends
    (``image_data``) and the prompt ids with their expanded image placeholders go to the
    model's ``generate``; the model may not write an image placeholder itself."""
    import torch
    from verl.workers.rollout.llm_server import LLMServerClient
    from verl.workers.rollout.replica import TokenOutput

    image_id = processor.tokenizer.convert_tokens_to_ids("<image>")

    class TinyVLMServer(LLMServerClient):
        def __init__(self) -> None:
            super().__init__(config=None, load_balancer_handle=None)
            self.calls: list[dict[str, Any]] = []

        async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
            images = kwargs.get("image_data") or []
            pixels = processor.image_processor(images, return_tensors="pt")["pixel_values"]
            torch.manual_seed(2000 + len(self.calls))
            with torch.no_grad():
                out = model.generate(
                    torch.tensor([list(prompt_ids)]),
                    pixel_values=pixels,
                    do_sample=True,
                    max_new_tokens=6,
                    bad_words_ids=[[image_id]],
                    pad_token_id=0,
                    eos_token_id=1,
                    output_logits=True,
                    return_dict_in_generate=True,
                )
            ids = out.sequences[0, len(prompt_ids) :].tolist()
            logprobs = [
                float(torch.log_softmax(out.logits[i][0].float(), dim=-1)[tok])
                for i, tok in enumerate(ids)
            ]
            self.calls.append(
                {
                    "request_id": request_id,
                    "prompt_ids": list(prompt_ids),
                    "token_ids": ids,
                    "log_probs": logprobs,
                    "images": len(images),
                    "image_tokens": sum(1 for t in prompt_ids if t == image_id),
                }
            )
            return TokenOutput(token_ids=ids, log_probs=logprobs, stop_reason="completed")

    return TinyVLMServer()


def run_vlm_batch(work: Path, task_id: str) -> dict[str, Any]:
    """A tiny LLaVA policy with screenshots (two steps) through the same verl path."""
    import numpy as np
    import torch
    from omegaconf import OmegaConf
    from transformers import AutoModelForImageTextToText, AutoProcessor
    from verl.experimental.agent_loop import agent_loop as verl_agent_loop
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
    from verl.protocol import DataProto
    from verl.utils.dataset.rl_dataset import RLHFDataset

    import gui_gym.integrations.verl  # noqa: F401
    from tests.tiny_llm import tiny_llava

    folder = work / "tiny-llava"
    tiny_llava(folder)
    processor = AutoProcessor.from_pretrained(folder)
    model = AutoModelForImageTextToText.from_pretrained(folder).eval()
    config = verl_config(2048)
    verl_agent_loop._agent_loop_registry["gui_gym"] = OmegaConf.create(
        {
            "name": "gui_gym",
            "_target_": "gui_gym.integrations.verl.GuiGymAgentLoop",
            "env_id": "GuiGym/WikiHow-v0",
            "reward": "outcome+format",
            "max_steps": 2,
            "screenshot": True,
        }
    )
    batch = DataProto.from_single_dict(
        {
            "raw_prompt": np.array([[{"role": "user", "content": "-"}]], dtype=object),
            "agent_name": np.array(["gui_gym"], dtype=object),
            "extra_info": np.array([{"task_id": task_id, "seed": 0, "index": 0}], dtype=object),
            "index": np.array([0]),
            "dummy_tensor": torch.zeros(1, 1, dtype=torch.uint8),
        }
    )
    server = make_vlm_server(model, processor)
    worker = AgentLoopWorker.__new__(AgentLoopWorker)
    worker.config = config
    worker.llm_client = server
    worker.teacher_client = None
    worker.reward_loop_worker_handles = None
    worker.rollout_config = config.actor_rollout_ref.rollout
    worker.dataset_cls = RLHFDataset
    worker.tokenizer = processor.tokenizer
    worker.processor = processor
    worker.hf_model_type = model.config.model_type
    worker.mm_processor_kwargs = {}
    worker.distillation_enabled = False
    worker.tools = []
    output = asyncio.run(worker.generate_sequences(batch))
    prompt_width = config.actor_rollout_ref.rollout.prompt_length
    attention = output.batch["attention_mask"][0].tolist()
    n_prompt, n_response = sum(attention[:prompt_width]), sum(attention[prompt_width:])
    extra = output.non_tensor_batch["gui_gym"][0]
    inputs = output.non_tensor_batch["multi_modal_inputs"][0]
    return {
        "calls": server.calls,
        "prompt_ids": output.batch["prompts"][0].tolist()[prompt_width - n_prompt :],
        "response_ids": output.batch["responses"][0].tolist()[:n_response],
        "response_mask": output.batch["response_mask"][0].tolist()[:n_response],
        "rm_scores": output.batch["rm_scores"][0].tolist()[:n_response],
        "pixel_values_shape": list(inputs["pixel_values"].shape),
        "gui_gym": extra,
        "reference_return": reference_return("outcome+format", task_id, 2, extra["actions"]),
    }


def reference_return(reward: str, task_id: str, max_steps: int, actions: list[str]) -> float:
    """The same actions through gui-gym's own training path (the env factory and reward
    stack of ``gui-gym train``, ``run_episode``), read with ``episode_return``."""
    from gui_gym.agents import run_episode
    from gui_gym.train.reward_stack import RewardStack, episode_return
    from gui_gym.train.runner import make_env_factory

    class Replay:
        name = "replay"

        def __init__(self) -> None:
            self.actions = list(actions)

        def reset(self, observation: Any, info: Any) -> None:
            self.left = list(self.actions)

        def act(self, observation: Any, info: Any) -> str:
            return self.left.pop(0)

    stack = RewardStack.from_text(reward, embedder="hashing")
    # an episode the response budget cut ends after its last action here (WikiHow scores an
    # unsolved truncated episode 0, as the cut episode's missing outcome)
    steps = min(max_steps, len(actions))
    env = make_env_factory("GuiGym/WikiHow-v0", {"task": task_id, "max_steps": steps}, stack)()
    trajectory = run_episode(env, Replay(), seed=0)
    return episode_return(trajectory)


def expert_script(max_steps: int) -> dict[str, Any]:
    """A test task the expert solves in 3 or more steps, and its actions as completions."""
    import gymnasium as gym

    from gui_gym.agents import OracleAgent, run_episode

    env = gym.make("GuiGym/WikiHow-v0", split="test", max_steps=max_steps)
    for task_id in env.unwrapped.task_ids:
        trajectory = run_episode(env, OracleAgent(env), seed=0, options={"task": task_id})
        if trajectory.success and len(trajectory.steps) >= 3:
            completions = [f"Thought: go on\n<action>{s.action}</action>" for s in trajectory.steps]
            return {"task_id": task_id, "completions": completions}
    raise RuntimeError("no WikiHow test task takes the expert 3 steps")


def row_settings_check() -> dict[str, Any]:
    """What a dataset row may set (issue 46): the reward and prompt yes, files no."""
    import types

    from gui_gym.integrations.verl import CONFIG_ONLY, GuiGymAgentLoop

    loop = types.SimpleNamespace(
        defaults={"env_id": "GuiGym/WikiHow-v0", "reward": "outcome", **dict.fromkeys(CONFIG_ONLY)}
    )
    refused = {}
    for key in CONFIG_ONLY:
        try:
            GuiGymAgentLoop._settings(loop, {key: "/tmp/elsewhere"})
            refused[key] = ""
        except ValueError as err:
            refused[key] = str(err)
    allowed = GuiGymAgentLoop._settings(loop, {"reward": "outcome+progress"})["reward"]
    return {"refused": refused, "allowed_reward": allowed}


def main(out_dir: str) -> None:
    work = Path(out_dir)
    folder = work / "tiny-qwen2"
    build_model(folder)
    expert = expert_script(max_steps=10)
    results = {
        # the model writes freely; the env cuts the episode after 3 steps
        "free": run_batch(
            folder,
            work,
            reward="outcome+format",
            max_steps=3,
            response_length=2048,
            script={"task_id": expert["task_id"]},
        ),
        # generation constrained to the expert's actions: a success with progress rewards
        "expert": run_batch(
            folder,
            work,
            reward="outcome+progress",
            max_steps=10,
            response_length=4096,
            script=expert,
        ),
        # a response budget shorter than the episode: cut after the first turn
        "budget": run_batch(
            folder,
            work,
            reward="outcome+format",
            max_steps=10,
            response_length=20,
            script={"task_id": expert["task_id"]},
        ),
        # a VLM: each turn's screenshot reaches the server and the trainer's pixel inputs
        "vlm": run_vlm_batch(work, expert["task_id"]),
        "row_settings": row_settings_check(),
    }
    print(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1])

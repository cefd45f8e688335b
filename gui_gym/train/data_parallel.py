"""Data-parallel training on one node: the processes ``accelerate launch`` (or ``torchrun``)
starts, each with a full copy of the policy.

How the RL loop uses it (:class:`~gui_gym.train.trainer.Trainer`):

* rollouts: each process runs its contiguous share of an iteration's episode requests (so a
  GRPO group of ``group_size`` requests stays on one process when the counts divide) and the
  trajectories are all-gathered, as JSON, in request order: every process then holds the
  whole batch and computes the same advantages (group and batch normalisations see every
  episode);
* updates: each mini-batch's turns are split across the processes, each accumulates the
  gradient of its share of the *mini-batch's* loss (the denominators of
  :func:`~gui_gym.train.losses.aggregate_tokens` are whole-mini-batch totals) and the gradients
  are summed with one all-reduce per bucket: the sum is exactly the one-process gradient of
  the mini-batch, so every process clips and steps identically;
* files: only the main process (rank 0) writes metrics, checkpoints, the final model and the
  milestone store; checkpoints hold every process's RNG streams, so a resumed run is exact.

A process that fails ends the run: the launcher (``accelerate launch``/``torchrun``, or
``torch.multiprocessing``) stops the others, so none waits in a collective for it.

Process groups are made by accelerate's :class:`accelerate.PartialState` (NCCL on GPUs, one
device per process; gloo on CPU), or found already initialised (a test that made its own).
Nothing here pickles: objects travel as JSON bytes in uint8 tensors (a VLM's screenshots as
raw pixel bytes, re-hashed to their content keys on arrival: :meth:`DataParallel.share_images`).
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Sequence
from typing import Any

from gui_gym.core.trajectory import json_default

__all__ = ["DataParallel", "shutdown_data_parallel"]

GRAD_BUCKET_ELEMENTS = 2**24
"""Gradient elements flattened into one all-reduce (64 MiB of fp32): few collectives, and a
bounded extra buffer next to the gradients of a billion-parameter model."""
SHUTDOWN_BARRIER_SECONDS = 120
"""How long a process that finished waits at teardown for the others to finish too."""

_STARTED_BY_US: list[bool] = []


def _launched_world_size() -> int:
    try:
        return int(os.environ.get("WORLD_SIZE", "1"))
    except ValueError:
        return 1


class DataParallel:
    """This process's place in the data-parallel group (a group of one without a launcher).

    Attributes:
        rank: This process's index (0 is the main process).
        world_size: Number of processes.
        local_rank: Index on this node (the CUDA device a process uses).
    """

    def __init__(self, rank: int = 0, world_size: int = 1, local_rank: int = 0):
        if world_size < 1 or not 0 <= rank < world_size:
            raise ValueError(f"rank {rank} is not in a group of {world_size}")
        self.rank = rank
        self.world_size = world_size
        self.local_rank = local_rank

    @classmethod
    def from_environment(cls, device: str = "auto") -> DataParallel:
        """The group this process was launched into.

        A process group that is already initialised is used as it is; otherwise, when the
        launcher set ``WORLD_SIZE`` above 1, accelerate's ``PartialState`` initialises one
        (gloo when ``device`` is ``cpu`` or no GPU is visible, NCCL otherwise); else a group
        of one.
        """
        import torch

        distributed = torch.distributed
        if not (distributed.is_available() and distributed.is_initialized()):
            if _launched_world_size() <= 1:
                return cls()
            from accelerate import PartialState

            cpu = (
                device == "cpu"
                or not torch.cuda.is_available()
                or os.environ.get("ACCELERATE_USE_CPU", "").lower() in ("1", "true")
            )
            PartialState(cpu=cpu)
            _STARTED_BY_US.append(True)
        local = int(os.environ.get("LOCAL_RANK", distributed.get_rank()))
        return cls(distributed.get_rank(), distributed.get_world_size(), local)

    @property
    def enabled(self) -> bool:
        """More than one process."""
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        """The process that writes files and shows progress."""
        return self.rank == 0

    def device(self, device: str) -> str:
        """``device`` with this process's GPU index: ``cuda`` becomes ``cuda:<local_rank>``
        (one device per process, as ``accelerate launch`` places them)."""
        if self.enabled and device == "cuda":
            return f"cuda:{self.local_rank}"
        return device

    def shard(self, count: int) -> range:
        """This process's contiguous share of ``count`` items (sizes differ by at most one)."""
        return range(
            self.rank * count // self.world_size, (self.rank + 1) * count // self.world_size
        )

    def seed(self, seed: int) -> int:
        """This process's sampling seed: the run seed on rank 0, a distinct one elsewhere (two
        processes sampling from one stream would roll out the same completions)."""
        return seed + 1_000_003 * self.rank

    # -- collectives --------------------------------------------------------------------------

    def _tensor_device(self) -> Any:
        import torch

        if "nccl" in str(torch.distributed.get_backend()):
            return torch.device("cuda", torch.cuda.current_device())
        return torch.device("cpu")

    def gather_json(self, value: Any) -> list[Any]:
        """Every process's ``value`` (JSON-safe), in rank order; ``[value]`` alone.

        Floats survive exactly (``json`` writes the shortest repr that reads back equal;
        NaN and infinities included)."""
        if not self.enabled:
            return [value]
        import torch

        distributed = torch.distributed
        device = self._tensor_device()
        payload = json.dumps(value, default=json_default).encode()
        size = torch.tensor([len(payload)], dtype=torch.long, device=device)
        sizes = [torch.zeros_like(size) for _ in range(self.world_size)]
        distributed.all_gather(sizes, size)
        width = max(int(s) for s in sizes)
        buffer = torch.zeros(width, dtype=torch.uint8, device=device)
        buffer[: len(payload)] = torch.frombuffer(bytearray(payload), dtype=torch.uint8)
        buffers = [torch.zeros_like(buffer) for _ in range(self.world_size)]
        distributed.all_gather(buffers, buffer)
        return [
            json.loads(bytes(b[: int(s)].cpu().tolist()).decode()) for b, s in zip(buffers, sizes)
        ]

    def broadcast_json(self, value: Any) -> Any:
        """The main process's ``value`` on every process."""
        if not self.enabled:
            return value
        return self.gather_json(value if self.is_main else None)[0]

    def gather_shards(self, local: Sequence[Any]) -> list[Any]:
        """The concatenation, in rank order, of each process's list (JSON-safe items): the
        inverse of :meth:`shard`."""
        return [item for part in self.gather_json(list(local)) for item in part]

    def gather_bytes(self, payload: bytes) -> list[bytes]:
        """Every process's ``payload``, in rank order (raw bytes: screenshots travel without
        a JSON or Python-list detour); ``[payload]`` alone."""
        if not self.enabled:
            return [payload]
        import torch

        distributed = torch.distributed
        device = self._tensor_device()
        size = torch.tensor([len(payload)], dtype=torch.long, device=device)
        sizes = [torch.zeros_like(size) for _ in range(self.world_size)]
        distributed.all_gather(sizes, size)
        buffer = torch.zeros(max(1, max(int(s) for s in sizes)), dtype=torch.uint8, device=device)
        if payload:
            buffer[: len(payload)] = torch.frombuffer(bytearray(payload), dtype=torch.uint8)
        buffers = [torch.zeros_like(buffer) for _ in range(self.world_size)]
        distributed.all_gather(buffers, buffer)
        return [b[: int(s)].cpu().numpy().tobytes() for b, s in zip(buffers, sizes)]

    def share_images(self, store: Any, trajectories: Sequence[Any]) -> int:
        """Give every process's image store the screenshots (and processor settings) that
        this process's ``trajectories`` show.

        A vision-language policy's steps hold content keys into the sampler's
        :class:`~gui_gym.models.llm.vision_inputs.ImageStore`, which is per process; after the
        trajectories are all-gathered, a process scoring another's step needs its pixels.
        Each image travels once per process that made it, as raw bytes, and is stored under
        the key its pixels hash to (a key that does not match its pixels is refused).

        Returns:
            How many images this process added to ``store``.

        Raises:
            ValueError: when an image received does not hash to its key.
        """
        if not self.enabled:
            return 0
        import numpy as np

        images: dict[str, Any] = {}
        settings: dict[str, Any] = {}
        for trajectory in trajectories:
            records = [step.vision for step in trajectory.steps]
            final = (trajectory.metadata or {}).get("final_prompt") or {}
            records.append(final.get("vision"))
            for record in records:
                if not record:
                    continue
                for key in record.get("images", []):
                    if key not in images:
                        images[key] = store.get(key)
                key = record.get("settings")
                if key and key not in settings:
                    settings[key] = store.settings(key)
        header = {
            "images": [[key, list(array.shape)] for key, array in images.items()],
            "settings": settings,
        }
        head = json.dumps(header).encode()
        body = b"".join(np.ascontiguousarray(a, dtype=np.uint8).tobytes() for a in images.values())
        added = 0
        for payload in self.gather_bytes(len(head).to_bytes(8, "little") + head + body):
            length = int.from_bytes(payload[:8], "little")
            received = json.loads(payload[8 : 8 + length].decode())
            for value in received["settings"].values():
                store.put_settings(value)
            offset = 8 + length
            for key, shape in received["images"]:
                count = int(np.prod(shape))
                if key not in store:
                    array = np.frombuffer(payload[offset : offset + count], dtype=np.uint8)
                    if store.put(array.reshape(shape)) != key:
                        raise ValueError(f"screenshot {key[:12]}... arrived with other pixels")
                    added += 1
                offset += count
        return added

    def broadcast_parameters(self, params: Sequence[Any]) -> None:
        """Copy the main process's values into every process's ``params`` (LoRA adapters
        and fresh heads start random: every copy must start equal)."""
        if not self.enabled:
            return
        import torch

        with torch.no_grad():
            for param in params:
                torch.distributed.broadcast(param.data, src=0)

    def all_reduce_gradients(self, params: Sequence[Any]) -> None:
        """Sum ``params``' gradients over the processes, in buckets.

        A process with no gradient for a parameter (it had no turns of the mini-batch)
        contributes zeros; a parameter no process computed a gradient for keeps ``None``, as
        in one process (AdamW then leaves it alone)."""
        if not self.enabled:
            return
        import torch

        distributed = torch.distributed
        device = self._tensor_device()
        present = torch.tensor(
            [p.grad is not None for p in params], dtype=torch.float32, device=device
        )
        distributed.all_reduce(present)
        chosen = [p for p, seen in zip(params, present.tolist()) if seen > 0]
        for p in chosen:
            if p.grad is None:
                p.grad = torch.zeros_like(p)
        bucket: list[Any] = []
        filled = 0
        for p in chosen:
            bucket.append(p)
            filled += p.numel()
            if filled >= GRAD_BUCKET_ELEMENTS:
                self._reduce_bucket(bucket)
                bucket, filled = [], 0
        if bucket:
            self._reduce_bucket(bucket)

    def _reduce_bucket(self, params: list[Any]) -> None:
        import torch

        by_dtype: dict[Any, list[Any]] = {}
        for p in params:
            by_dtype.setdefault(p.grad.dtype, []).append(p)
        for group in by_dtype.values():
            flat = torch.cat([p.grad.reshape(-1) for p in group])
            torch.distributed.all_reduce(flat)
            start = 0
            for p in group:
                p.grad.copy_(flat[start : start + p.numel()].view_as(p.grad))
                start += p.numel()

    def all_reduce_sum(self, values: dict[str, float]) -> dict[str, float]:
        """Per-key sums of every process's ``values`` (keys a process lacks count as 0)."""
        if not self.enabled:
            return dict(values)
        total: dict[str, float] = {}
        for part in self.gather_json(values):
            for key, value in part.items():
                total[key] = total.get(key, 0.0) + value
        return total

    def barrier(self) -> None:
        """Wait until every process gets here."""
        if self.enabled:
            import torch

            torch.distributed.barrier()


def shutdown_data_parallel(*, wait: bool = True) -> None:
    """Tear down the process group :meth:`DataParallel.from_environment` started (before a
    launched process exits); a no-op otherwise.

    With ``wait`` (a run that ended normally), every process first meets at a barrier
    bounded by ``SHUTDOWN_BARRIER_SECONDS``, so no process destroys the group, and exits
    with gloo's threads, while another still talks to it (a rank aborting with "terminate
    called without an active exception" at teardown). After an error pass ``wait=False``: the
    other processes may be gone, and waiting for them would only delay the error.
    """
    if not _STARTED_BY_US:
        return
    import datetime

    import torch

    if torch.distributed.is_initialized():
        if wait:
            try:
                if torch.distributed.get_backend() == "gloo":
                    torch.distributed.monitored_barrier(
                        timeout=datetime.timedelta(seconds=SHUTDOWN_BARRIER_SECONDS)
                    )
                else:
                    torch.distributed.barrier()
            except RuntimeError as error:  # a process died after its last step: say so, go on
                warnings.warn(f"data parallel shutdown: {error}", stacklevel=2)
        torch.distributed.destroy_process_group()
    _STARTED_BY_US.clear()

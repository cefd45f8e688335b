"""GUI-Shepherd's PRM as a vision-language model: instruction + screenshot + candidate action.

GUI-Shepherd's PRM is a Qwen2.5-VL (UI-TARS-1.5) that reads the task, the screenshot and the
candidate action and answers with one of two label tokens (Sec. 3, Eq. 2). :class:`VisionPRM`
is that: the prompt (:class:`~gui_gym.rewards.prm.PromptTemplate`, the same text as the text
PRM's) goes into one user turn after the screenshot, through the model's own processor and
chat template with the generation prompt, and the score is ``sigmoid(logit_pos - logit_neg)``
of the two label tokens the model would write next. It has the text PRM's interface
(``score``, ``positive_logits``, ``training_batch``, ``loss``, ``save``/``load``), so
:class:`~gui_gym.wrappers.PRMWrapper`, best-of-N and :func:`gui_gym.train.prm.train_prm`
take it unchanged; a query without a screenshot is an error (make the env with
``screenshot=True``).

Any Hugging Face image-text folder with a processor loads (``AutoProcessor`` and
``AutoModelForImageTextToText``); :meth:`gui_gym.models.prm.TransformersPRM.load` hands such
a folder here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gui_gym.core.files import write_folder_atomically
from gui_gym.core.trajectory import check_replaceable_folder, errors_naming
from gui_gym.models.prm.checkpoint import read_prm_config
from gui_gym.models.prm.protocol import PRMOutputError, check_queries, label_token_ids
from gui_gym.rewards.prm import LabelledStep, PRMQuery, PromptTemplate

__all__ = ["VISION_FORMAT", "VisionPRM", "has_processor"]

VISION_FORMAT = "gui-gym/vision-prm"
"""``format`` of a vision PRM's ``prm.json``."""


def has_processor(path: str | Path) -> bool:
    """Whether a model folder is an image-text model (it has a processor config)."""
    folder = Path(path)
    return any(
        (folder / name).is_file() for name in ("preprocessor_config.json", "processor_config.json")
    )


class VisionPRM:
    """A vision-language model read at its next token after the screenshot and the question.

    Args:
        model: A ``transformers`` image-text-to-text model.
        processor: Its processor (image processor + tokenizer + chat template).
        positive_token, negative_token: The label texts; each must be one token.
        template: The question's text template (as the text PRM's).
        batch_size: Queries per forward pass.
        device: ``"cpu"``, ``"cuda"``, ...; None keeps the model where it is.

    Raises:
        ValueError: when a label is not exactly one token or the two are equal.
    """

    requires_env = False

    def __init__(
        self,
        model: Any,
        processor: Any,
        *,
        positive_token: str = " True",
        negative_token: str = " False",
        template: PromptTemplate | None = None,
        batch_size: int = 8,
        device: str | None = None,
    ):
        import torch

        self._torch = torch
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.model = model
        self.processor = processor
        self.tokenizer = processor.tokenizer
        self.positive_token = positive_token
        self.negative_token = negative_token
        self.positive_id, self.negative_id = label_token_ids(
            self.tokenizer, positive_token, negative_token
        )
        self.template = template or PromptTemplate()
        self.batch_size = int(batch_size)
        if device is not None:
            self.model.to(device)
        self.model.eval()

    # -- inputs ----------------------------------------------------------------------------

    def prompt_text(self, query: PRMQuery) -> str:
        """The rendered chat turn: the screenshot's placeholder, the question, and the
        assistant's turn opened so the label is the next token."""
        question = self.template.render(query, self.positive_token, self.negative_token)
        messages = [
            {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": question}]}
        ]
        return self.processor.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=True
        )

    def inputs(self, queries: Sequence[PRMQuery]) -> dict[str, Any]:
        """The processor's left-padded batch (every row's label position is the last column).

        Raises:
            ValueError: for a query without a screenshot.
        """
        from PIL import Image

        images = []
        for i, query in enumerate(queries):
            if query.screenshot is None:
                raise ValueError(
                    f"query {i} (step {query.step}) has no screenshot: a vision PRM judges "
                    "(instruction, screenshot, action); make the env with screenshot=True"
                )
            images.append(Image.fromarray(np.asarray(query.screenshot, dtype=np.uint8)))
        side = self.tokenizer.padding_side
        self.tokenizer.padding_side = "left"
        try:
            batch = self.processor(
                text=[self.prompt_text(q) for q in queries],
                images=images,
                return_tensors="pt",
                padding=True,
            )
        finally:
            self.tokenizer.padding_side = side
        device = next(self.model.parameters()).device
        return {k: v.to(device) if hasattr(v, "to") else v for k, v in batch.items()}

    # -- scoring ---------------------------------------------------------------------------

    def _pair(self, inputs: dict[str, Any]) -> Any:
        logits = self.model(**inputs).logits[:, -1]
        return logits[:, [self.negative_id, self.positive_id]].float()

    def label_logits(self, queries: Sequence[PRMQuery]) -> np.ndarray:
        """``(n, 2)`` logits ``[negative, positive]`` at each prompt's end."""
        queries = check_queries(queries)
        out = np.empty((len(queries), 2), dtype=np.float64)
        with self._torch.no_grad():
            for start in range(0, len(queries), self.batch_size):
                chunk = queries[start : start + self.batch_size]
                out[start : start + len(chunk)] = self._pair(self.inputs(chunk)).cpu().numpy()
        if not np.isfinite(out).all():
            raise PRMOutputError("the model produced non-finite label logits (NaN/inf)")
        return out

    def score(self, queries: Sequence[PRMQuery], envs: Sequence[Any] | None = None) -> np.ndarray:
        """The probability of the positive label, ``sigmoid(logit_pos - logit_neg)``."""
        if not queries:
            return np.zeros(0)
        pair = self.label_logits(queries)
        return 1.0 / (1.0 + np.exp(pair[:, 0] - pair[:, 1]))

    def positive_logits(
        self, queries: Sequence[PRMQuery], envs: Sequence[Any] | None = None
    ) -> np.ndarray:
        """The positive label's logit (what GUI-Shepherd's best-of-N ranks by)."""
        return self.label_logits(queries)[:, 1] if queries else np.zeros(0)

    # -- training --------------------------------------------------------------------------

    def training_batch(
        self, steps: Sequence[LabelledStep], rationale_loss: bool = True, prompt_loss: bool = False
    ) -> dict[str, Any]:
        """The processor's batch of the steps' queries with their labels (no rationale or
        prompt loss: the vision PRM is trained on the label alone).

        Raises:
            ValueError: for prompt_loss (not supported here) or a step without a screenshot.
        """
        if prompt_loss:
            raise ValueError("a vision PRM trains on its label only: prompt_lm_weight must be 0")
        batch = self.inputs([s.query for s in steps])
        batch["labels"] = self._torch.tensor([s.label for s in steps], dtype=self._torch.long)
        return batch

    def loss(
        self, batch: dict[str, Any], rationale_weight: float = 1.0, prompt_weight: float = 0.0
    ) -> tuple[Any, Any]:
        """Cross-entropy over the two label tokens at the label position (GUI-Shepherd Eq. 2).

        Returns:
            ``(loss, label_logits)``, the logits ``(batch, 2)`` ``[negative, positive]``.
        """
        inputs = {k: v for k, v in batch.items() if k != "labels"}
        pair = self._pair(inputs)
        labels = batch["labels"].to(pair.device)
        return self._torch.nn.functional.cross_entropy(pair, labels), pair.detach()

    # -- checkpoints -----------------------------------------------------------------------

    def config_dict(self) -> dict[str, Any]:
        return {
            "format": VISION_FORMAT,
            "version": 1,
            "positive_token": self.positive_token,
            "negative_token": self.negative_token,
            "template": self.template.to_dict(),
        }

    def save(self, path: str | Path) -> Path:
        """Write the model (safetensors), processor and ``prm.json``, atomically."""
        check_replaceable_folder(path, "prm.json", "PRM checkpoint")
        return write_folder_atomically(path, self.write_files)

    def write_files(self, folder: Path) -> None:
        self.model.save_pretrained(folder, safe_serialization=True)
        self.processor.save_pretrained(folder)
        (folder / "prm.json").write_text(json.dumps(self.config_dict(), indent=2) + "\n")

    @classmethod
    def load(cls, path: str | Path, *, device: str | None = None, **overrides: Any) -> VisionPRM:
        """Load a folder written by :meth:`save`, or any image-text model folder with
        safetensors weights (then give the label tokens in ``overrides``). Never unpickles.

        Raises:
            FileNotFoundError: when the folder or its safetensors weights are missing.
            ValueError: when ``prm.json`` is not a vision PRM config.
        """
        import transformers

        folder = Path(path)
        if not folder.is_dir() or not any(folder.glob("*.safetensors")):
            raise FileNotFoundError(f"{folder}: no model folder with .safetensors weights")
        settings: dict[str, Any] = {}
        data = read_prm_config(
            folder / "prm.json", VISION_FORMAT, ("positive_token", "negative_token")
        )
        if data is not None:
            settings = {
                "positive_token": data["positive_token"],
                "negative_token": data["negative_token"],
                "template": PromptTemplate.from_dict(data["template"]),
            }
        settings.update(overrides)
        with errors_naming(folder):
            from gui_gym.models.llm.vision_inputs import load_processor

            # AutoProcessor, or Qwen2-VL's image-only processor where torchvision is missing
            processor = load_processor(folder)
            model = transformers.AutoModelForImageTextToText.from_pretrained(
                folder, use_safetensors=True
            )
        return cls(model, processor, device=device, **settings)

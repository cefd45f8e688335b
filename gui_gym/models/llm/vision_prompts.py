"""Prompts that show screenshots to a reward model's LLM (ProRe's judge and evaluator, ADMIRE's
milestone generator), and the rule deciding whether a backend may be shown them.

A reward component built on an :class:`~gui_gym.models.llm.LLM` takes ``screenshots``:

* ``None`` (default, automatic): show the screenshots when what it judges has them, if the
  backend reads images; a text-only backend handed screenshots is an error, never a silent
  drop (:func:`check_screenshot_backend` at construction when the env is known, e.g. by
  :class:`~gui_gym.wrappers.ProbingJudgeWrapper`; :func:`use_screenshots` at the latest);
* ``True``: always show them (a text-only backend is an error at construction; a trace or
  trajectory without screenshots is an error when it is judged);
* ``False``: read the UI text only (the explicit opt-out for a text-only model on an env
  that makes screenshots).

A prompt with screenshots is one user turn: each image after a short label naming the screen
it shows, then the component's text prompt (the question after the pictures, as
:class:`~gui_gym.models.prm.VisionPRM` asks it). The backend renders it in its own chat
template (:class:`~gui_gym.models.llm.TransformersLLM` with a processor) or sends the images
as ``image_url`` parts with PNG data URLs (:class:`~gui_gym.models.llm.OpenAICompatLLM`,
size-bounded by :func:`gui_gym.models.llm.chat_messages.bounded_image`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gui_gym.models.llm.chat_messages import Prompt

__all__ = [
    "ScreenshotReader",
    "check_screenshot_backend",
    "check_screenshots_option",
    "evenly_spaced",
    "reads_images",
    "screenshot_prompt",
    "use_screenshots",
    "with_note",
]


def reads_images(llm: object) -> bool:
    """Whether ``llm`` takes prompts with image parts.

    A backend's own ``reads_images`` attribute decides when it has one (a stub or a custom
    backend says so itself); a :class:`~gui_gym.models.llm.TransformersLLM` reads images
    when it has a processor (an image-text model folder); an
    :class:`~gui_gym.models.llm.OpenAICompatLLM` sends them as ``image_url`` parts (whether
    the served model takes them is the server's to say: a text-only one rejects the request,
    which raises :class:`~gui_gym.models.llm.LLMError`); anything else (a
    :class:`~gui_gym.models.llm.ScriptedLLM`, which reads :func:`prompt_text`) does not.
    """
    own = getattr(llm, "reads_images", None)
    if isinstance(own, bool):
        return own
    from gui_gym.models.llm.openai_compat import OpenAICompatLLM
    from gui_gym.models.llm.transformers_llm import TransformersLLM

    if isinstance(llm, TransformersLLM):
        return llm.processor is not None
    return isinstance(llm, OpenAICompatLLM)


def check_screenshots_option(screenshots: object) -> bool | None:
    """``screenshots`` checked: True, False or None.

    Raises:
        TypeError: for anything else.
    """
    if screenshots is None or isinstance(screenshots, bool):
        return screenshots
    raise TypeError(f"screenshots must be True, False or None (automatic), got {screenshots!r}")


def _backend_name(llm: object) -> str:
    return type(llm).__name__


def check_screenshot_backend(
    llm: object, screenshots: bool | None, owner: str, env_screenshots: bool | None = None
) -> None:
    """The construction-time check of a component's ``screenshots`` against its backend
    and, when known, against whether the env makes screenshots.

    Raises:
        ValueError: (one line) for ``screenshots=True`` on a text-only backend; for an env
            that makes screenshots and a text-only backend left on automatic; for
            ``screenshots=True`` on an env that makes none.
    """
    if screenshots is False:
        return
    if screenshots is True and not reads_images(llm):
        raise ValueError(
            f"{owner}(screenshots=True) needs an image-text backend, but its "
            f"{_backend_name(llm)} reads text only: load a vision-language model folder (one "
            "with a processor) or serve one, or pass screenshots=False"
        )
    if env_screenshots and not reads_images(llm):
        raise ValueError(
            f"the env makes screenshots but {owner}'s {_backend_name(llm)} reads text only: "
            f"use an image-text model, or pass {owner}(..., screenshots=False) to read the UI "
            "text alone"
        )
    if screenshots is True and env_screenshots is False:
        raise ValueError(
            f"{owner}(screenshots=True) but the env makes no screenshots: make it with "
            "screenshot=True (--screenshot on the command line)"
        )


class ScreenshotReader:
    """The ``screenshots`` option of an LLM component that may read screenshots (ProRe's
    judge and evaluator, ADMIRE's milestone generator): the option and ``max_images``
    checked at construction, :attr:`reads_screenshots` and the check against an env."""

    llm: Any
    screenshots: bool | None
    max_images: int

    def _init_screenshots(self, llm: object, screenshots: object, max_images: object) -> None:
        """Check and keep ``screenshots`` (against ``llm``) and ``max_images``.

        Raises:
            TypeError: for ``screenshots`` other than True, False or None.
            ValueError: for ``max_images`` below 1 or not an int; for ``screenshots=True``
                on a text-only backend.
        """
        if isinstance(max_images, bool) or not isinstance(max_images, int) or max_images < 1:
            raise ValueError(f"max_images must be an int >= 1, got {max_images!r}")
        self.screenshots = check_screenshots_option(screenshots)
        self.max_images = max_images
        check_screenshot_backend(llm, self.screenshots, type(self).__name__)

    @property
    def reads_screenshots(self) -> bool:
        """Whether this component may show screenshots (``screenshots`` is not False): the
        traces and episodes it reads should keep them."""
        return self.screenshots is not False

    def check_env(self, env_screenshots: bool) -> None:
        """Check ``screenshots`` against an env that does (or does not) make screenshots.

        Raises:
            ValueError: (one line) for a text-only backend on an env with screenshots left
                on automatic, or ``screenshots=True`` on an env without them.
        """
        check_screenshot_backend(
            self.llm, self.screenshots, type(self).__name__, env_screenshots=env_screenshots
        )


def use_screenshots(
    llm: object, screenshots: bool | None, available: bool, owner: str, what: str
) -> bool:
    """Whether this prompt shows screenshots: ``screenshots`` resolved against whether
    ``what`` (a trace, a trajectory) has them.

    Raises:
        ValueError: (one line) for ``screenshots=True`` when ``what`` has none, and for
            screenshots handed to a text-only backend on automatic (never a silent drop).
    """
    if screenshots is False:
        return False
    if not available:
        if screenshots is True:
            raise ValueError(
                f"{owner}(screenshots=True) but the {what} has no screenshots: make the env "
                "with screenshot=True (or record the dataset with --screenshots)"
            )
        return False
    if not reads_images(llm):
        raise ValueError(
            f"the {what} has screenshots but {owner}'s {_backend_name(llm)} reads text only: "
            f"use an image-text model, or pass {owner}(..., screenshots=False) to read the UI "
            "text alone"
        )
    return True


def evenly_spaced(count: int, limit: int) -> list[int]:
    """At most ``limit`` indices of ``range(count)``, evenly spread, always with the last
    (and the first when ``limit`` > 1), in order."""
    if count <= 0 or limit <= 0:
        return []
    if count <= limit:
        return list(range(count))
    if limit == 1:
        return [count - 1]
    picks = np.linspace(0, count - 1, limit).round().astype(int)
    return sorted(set(int(i) for i in picks))


def screenshot_prompt(text: str, shots: Sequence[tuple[str, Any]]) -> Prompt:
    """``text`` as a prompt showing ``shots`` (``(label, HxWx3 uint8 image)`` pairs) first:
    one user message, each image after its label, then ``text``. With no shots, ``text``
    itself (a plain text prompt)."""
    if not shots:
        return text
    parts: list[dict[str, Any]] = []
    for label, image in shots:
        array = np.asarray(image)
        if array.dtype != np.uint8 or array.ndim != 3 or array.shape[2] != 3:
            raise ValueError(
                f"{label!r}: a screenshot must be an HxWx3 uint8 array, got {array.dtype} "
                f"{array.shape}"
            )
        parts.append({"type": "text", "text": label})
        parts.append({"type": "image", "image": array})
    parts.append({"type": "text", "text": text})
    return [{"role": "user", "content": parts}]


def with_note(prompt: Prompt, note: str) -> Prompt:
    """``prompt`` with ``note`` appended to its text (a retry's complaint): to a string, or to
    the last text part of the last message of a conversation (images stay where they are)."""
    if isinstance(prompt, str):
        return prompt + note
    messages = [dict(m) for m in prompt]
    last = messages[-1]
    content = last["content"]
    if isinstance(content, str):
        last["content"] = content + note
        return messages
    parts = [dict(p) for p in content]
    for part in reversed(parts):
        if part.get("type") == "text":
            part["text"] = part["text"] + note
            break
    else:
        parts.append({"type": "text", "text": note.lstrip()})
    last["content"] = parts
    return messages

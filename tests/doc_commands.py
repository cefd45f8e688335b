"""Reading the commands out of README.md and docs/*.md, and cutting their sizes for tests.

Shared by ``tests/test_readme.py`` and ``tests/test_docs_commands.py``: one parser of fenced
blocks, one rule for which shell lines are commands, one table of small sizes.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Extra arguments that keep a documented ``gui-gym`` line small (appended; a documented value
# of the same option is replaced).
SMALL = {
    "eval": ["--episodes", "3", "--no-progress"],
    "record": ["--episodes", "3", "--no-progress"],
    "label": ["--embedder", "hashing", "--no-progress"],
    "train-prm": [
        "--max-tasks",
        "2",
        "--random-rollouts",
        "1",
        "--epochs",
        "1",
        "--vocab-size",
        "512",
        "--max-length",
        "128",
        "--no-progress",
    ],
    "train-progress": [
        "--epochs",
        "1",
        "--hidden",
        "16",
        "--layers",
        "1",
        "--max-length",
        "64",
        "--vocab-size",
        "200",
        "--no-progress",
    ],
}


@dataclass(frozen=True)
class DocStep:
    """One runnable thing of a document: a Python block or one shell command."""

    kind: str  # "python" or "shell"
    text: str  # the block, or the command with continuations joined
    line: int  # where it starts in the document (1-based)


def code_blocks(text: str, language: str) -> list[str]:
    """The bodies of the fenced blocks of ``language``, in order."""
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def doc_steps(text: str) -> list[DocStep]:
    """Every Python block and every shell command of a document, in document order.

    A command continued with a backslash is one command; a heredoc (``<<'EOF'`` ... ``EOF``)
    belongs to the command that opens it; comments and blank lines are not commands.
    """
    steps: list[DocStep] = []
    for match in re.finditer(r"```(python|bash)\n(.*?)```", text, flags=re.S):
        language, body = match.group(1), match.group(2)
        first_line = text.count("\n", 0, match.start()) + 2
        if language == "python":
            steps.append(DocStep("python", body, first_line))
            continue
        lines = body.split("\n")
        i = 0
        while i < len(lines):
            start = i
            command = lines[i]
            while command.rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                command = command.rstrip()[:-1] + " " + lines[i].strip()
            heredoc = re.search(r"<<-?'?(\w+)'?", command)
            if heredoc:
                while i + 1 < len(lines) and lines[i].strip() != heredoc.group(1):
                    i += 1
                    command += "\n" + lines[i]
            i += 1
            if command.strip() and not command.lstrip().startswith("#"):
                steps.append(DocStep("shell", command.strip(), first_line + start))
    return steps


def command_argv(command: str) -> list[str]:
    """A one-line shell command as argv, its trailing comment dropped."""
    return shlex.split(command, comments=True)


def cli_lines(text: str) -> list[list[str]]:
    """The arguments (after ``gui-gym``) of every ``gui-gym`` command of a document."""
    return [
        command_argv(step.text)[1:]
        for step in doc_steps(text)
        if step.kind == "shell" and step.text.startswith("gui-gym ")
    ]


def small(argv: list[str]) -> list[str]:
    """``argv`` (after ``gui-gym``) with the sizes of :data:`SMALL` and repository paths made
    absolute (``tests/data/...``), so that the command runs in seconds from any folder."""
    argv = [str(ROOT / a) if a.startswith("tests/data/") else a for a in argv]
    extra = SMALL.get(argv[0], [])
    if argv[:2] in (["eval", "--sop"], ["eval", "--offline"]):
        extra = ["--no-progress"]
    out = list(argv)
    i = 0
    while i < len(extra):
        option = extra[i]
        takes_value = i + 1 < len(extra) and not extra[i + 1].startswith("--")
        if option in out and takes_value:
            out[out.index(option) + 1] = extra[i + 1]
        elif option not in out:
            out += [option, extra[i + 1]] if takes_value else [option]
        i += 2 if takes_value else 1
    return out

"""Every option of a tyro command line (benchmarks/, examples/) has its own help or none.

tyro reads a field's help from the comment block right above it, and a field with no comment
of its own *inherits* that block while the lines back to it are bare fields: so

    # rollout sampling temperature
    temperature: float = 0.5
    device: str = "cpu"

prints the temperature's sentence as ``--device``'s help too, which is wrong and misleading.
The fix is an inline comment, a docstring, or a blank line after the commented field.
:func:`inherited_help` finds such fields statically (importing a benchmark pulls in torch),
and a calibration test checks the rule against tyro itself.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(
    p
    for folder in ("benchmarks", "examples", "scripts")
    for p in (ROOT / folder).glob("*.py")
    if "tyro" in p.read_text()
)


def _is_dataclass(node: ast.ClassDef) -> bool:
    def name(d: ast.expr) -> str:
        d = d.func if isinstance(d, ast.Call) else d
        return d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", "")

    return any(name(d) == "dataclass" for d in node.decorator_list)


def inherited_help(source: str) -> list[tuple[int, str, str]]:
    """``(line, field, comment)`` for each dataclass field that tyro would give the comment
    block above an earlier field as its help."""
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.ClassDef) and _is_dataclass(node)):
            continue
        body = node.body
        for i, stmt in enumerate(body):
            if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.target, ast.Name):
                continue
            if "#" in lines[stmt.lineno - 1]:
                continue  # its own inline comment
            nxt = body[i + 1] if i + 1 < len(body) else None
            if isinstance(nxt, ast.Expr) and isinstance(getattr(nxt, "value", None), ast.Constant):
                continue  # its own docstring
            # walk back over bare fields, each on the line right above the next; a standalone
            # comment above the first of them (not right above this field) is handed down
            j, top = i, stmt.lineno
            while j > 0:
                prev = body[j - 1]
                bare = isinstance(prev, ast.AnnAssign) and "#" not in lines[prev.end_lineno - 1]
                if not bare or prev.end_lineno != top - 1:
                    break
                j, top = j - 1, prev.lineno
            above = lines[top - 2].strip() if top >= 2 else ""
            if j < i and above.startswith("#"):
                found.append((stmt.lineno, stmt.target.id, above))
    return found


CALIBRATION = '''
from dataclasses import dataclass
import tyro

@dataclass
class A:
    a: int = 1  # help a
    # help b
    b: int = 2
    c: int = 3
    d: int = 4  # help d
    e: int = 5

    # help f
    f: int = 6

    g: int = 7
    # help h
    h: int = 8
    """h docstring"""
    i: int = 9
    # help j, which
    # spans two lines
    j: int = 10
    k: int = 11
    l: int = 12  # l

tyro.cli(A)
'''


def test_the_rule_matches_tyro(tmp_path: Path) -> None:
    """The static rule flags exactly the fields whose printed help is another field's."""
    script = tmp_path / "calibration.py"
    script.write_text(CALIBRATION)
    out = subprocess.run(
        [sys.executable, str(script), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"COLUMNS": "200", "PATH": ""},
    ).stdout
    helps = {}
    for row in out.splitlines():
        parts = row.strip("│ ").split(None, 2)
        if parts and parts[0].startswith("--") and parts[0] != "--help":
            helps[parts[0][2:]] = (
                parts[2].rsplit("(default", 1)[0].strip() if len(parts) > 2 else ""
            )
    assert helps["a"] == "help a" and helps["b"] == "help b" and helps["f"] == "help f"
    by_tyro = {
        name for name, text in helps.items() if text and list(helps.values()).count(text) > 1
    }
    by_tyro -= {min(n for n, t in helps.items() if t == helps[name]) for name in by_tyro}
    assert by_tyro == {"c", "k"}, helps
    assert {name for _, name, _ in inherited_help(CALIBRATION)} == by_tyro


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_option_borrows_another_options_help(path: Path) -> None:
    leaks = inherited_help(path.read_text())
    assert not leaks, "\n".join(
        f"{path.relative_to(ROOT)}:{line}: --{name.replace('_', '-')} would print {comment!r} "
        "(give it its own comment, or a blank line after the commented field)"
        for line, name, comment in leaks
    )


def test_the_rule_sees_the_bug_it_was_written_for() -> None:
    source = textwrap.dedent(
        """
        @dataclass
        class Args:
            # auto: bf16 autocast where the CPU has native bf16, else fp32
            dtype: str = "auto"
            threads: int = 2
            out: Path = RESULTS
        """
    )
    assert [name for _, name, _ in inherited_help(source)] == ["threads", "out"]

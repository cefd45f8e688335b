"""A faster TextWorld PDDL engine for ALFWorld games, with the same observations.

TextWorld's :class:`~textworld.envs.pddl.PddlEnv` spends most of a step re-parsing grammar
text (every admissible command's template and every feedback rule goes through tatsu again),
re-parsing the same conjunctive queries, and deep-copying derivation contexts; each reset
translates the PDDL problem four times (two ``pddl2sas`` calls in ``load`` and two more in
``reset``), parses the whole grammar and, when the plan is requested, runs the planner at every
step. :class:`FastPddlEnv` keeps the engine and its semantics and removes the repetition:

- grammar derivation with parses cached per text and contexts copied shallowly (nothing in a
  derivation mutates the values, only the dicts), so its output is the same text;
- one parse of ALFWorld's domain and grammar per process (a game's grammar differs from the
  wheel's only in its task line, which is swapped in);
- one ``pddl2sas`` translation per problem (cached, the translation is a pure function);
- no planner call per step: :meth:`FastPddlEnv.plan` runs it on demand, in a child process
  with a CPU-time and memory bound (:mod:`gui_gym.envs.alfworld.planner`), replaying the
  operators applied so far, so a planner run can never hang the env.

Raw alfworld (``AlfredDemangler(PddlEnv(...))``) in the same process is not affected: nothing
upstream is patched. ``tests/test_alfworld.py`` checks observations and rewards equal raw's.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import weakref
from collections import OrderedDict
from typing import Any

import fast_downward
import textworld
from textworld.envs.pddl import PddlEnv, textgen
from textworld.envs.pddl import logic as pddl_logic
from textworld.envs.pddl.textgen import (
    ConditionalSymbol,
    ContextSensitiveGrammar,
    CSGUnknownSymbolError,
    EvalSymbol,
    ListSymbol,
    NonterminalSymbol,
    TerminalSymbol,
)
from textworld.logic import Proposition, Rule, Variable

__all__ = ["FastGrammar", "FastPddlEnv"]

_CACHE_LIMIT = 20_000
_SYMBOLS: dict[str, tuple[Any, ...]] = {}
_QUERIES: dict[str, Rule] = {}
_TRANSLATIONS: OrderedDict[tuple[str, str], tuple[Any, str, str]] = OrderedDict()
_LOGICS: dict[tuple[str, str], Any] = {}
_TASK_LINE = re.compile(r'"rhs": "Your task is to: (.*?)\."')


def _symbols(text: str) -> tuple[Any, ...]:
    """The parsed symbols of a grammar text (never mutated, so shared between derivations)."""
    symbols = _SYMBOLS.get(text)
    if symbols is None:
        if len(_SYMBOLS) > _CACHE_LIMIT:
            _SYMBOLS.clear()
        symbols = tuple(textgen._parse_and_convert(text, rule_name="symbols"))
        _SYMBOLS[text] = symbols
    return symbols


def _query(expression: str) -> Rule:
    rule = _QUERIES.get(expression)
    if rule is None:
        if len(_QUERIES) > _CACHE_LIMIT:
            _QUERIES.clear()
        rule = Rule.parse_conjunctive_query(expression)
        _QUERIES[expression] = rule
    return rule


def _with(context: dict[str, Any], mapping: dict[Any, Any]) -> dict[str, Any]:
    """``context`` extended by a query's ``mapping`` (upstream's ``query`` step, shallow)."""
    variables = dict(context["variables"])
    variables.update({ph.name: context["entity_infos"][var.name] for ph, var in mapping.items()})
    merged = dict(context["mapping"])
    merged.update(mapping)
    return {**context, "variables": variables, "mapping": merged}


class FastGrammar(ContextSensitiveGrammar):
    """:class:`ContextSensitiveGrammar` whose :meth:`derive` gives the same text faster."""

    def _replace(self, symbol: Any, context: dict[str, Any]) -> tuple[Any, ...]:
        rules = self._rules.get(str(symbol))
        if not rules:
            raise CSGUnknownSymbolError(symbol)
        for rule in rules:  # the first applicable production, as upstream picks
            if not rule.condition or any(
                True
                for _ in context["state"].all_assignments(
                    _query(rule.condition), context["mapping"]
                )
            ):
                return tuple(rule.rhs)
        raise IndexError(f"no applicable production for #{symbol}#")

    def _expand(self, symbol: Any, context: dict[str, Any]) -> list[tuple[Any, dict[str, Any]]]:
        """What a conditional (or eval) symbol turns into, each with its context."""
        if isinstance(symbol, ConditionalSymbol):
            if not symbol.given:
                return [(symbol.expression, context)]
            rule = _query(symbol.given)
            return [
                (symbol.expression, _with(context, m))
                for m in context["state"].all_assignments(rule, context["mapping"])
            ]
        if isinstance(symbol, EvalSymbol):
            return [(symbol.derive(context)[0], context)]
        if isinstance(symbol, ListSymbol):
            return self._list(symbol, context)
        raise NotImplementedError(f"Unknown symbol: {type(symbol)}")

    def _list(self, symbol: Any, context: dict[str, Any]) -> list[tuple[Any, dict[str, Any]]]:
        items = self._expand(symbol.symbol, context)
        if not items:
            return [(NonterminalSymbol("list_empty"), context)]
        if len(items) == 1:
            return items
        out = []
        for item in items[:-2]:
            out += [item, (NonterminalSymbol("list_separator"), context)]
        out += [items[-2], (NonterminalSymbol("list_last_separator"), context), items[-1]]
        return out

    def derive(self, start: str, context: dict[str, Any] = {}) -> str:  # noqa: B006 (upstream's signature)
        stack = [(symbol, context) for symbol in reversed(_symbols(start))]
        derived: list[str] = []
        while stack:
            symbol, ctx = stack.pop()
            if isinstance(symbol, TerminalSymbol):
                derived.append(str(symbol))
            elif isinstance(symbol, NonterminalSymbol):
                stack += [(s, ctx) for s in reversed(self._replace(symbol, ctx))]
            else:
                stack += reversed(self._expand(symbol, ctx))
        return "".join(derived)


def _parse(domain: str, problem: str) -> Any:
    """The normalised PDDL task, as ``pddl2sas`` returns it, without translating to SAS."""
    import sys

    argv = sys.argv  # fast_downward's option module reads (and pddl2sas rewrites) sys.argv
    sys.argv = ["translate.py", "domain", "task"]
    try:
        from fast_downward.translate import normalize
        from fast_downward.translate.pddl_parser import lisp_parser, parsing_functions

        task = parsing_functions.parse_task(
            lisp_parser.parse_nested_list(domain.split("\n")),
            lisp_parser.parse_nested_list(problem.split("\n")),
        )
        normalize.normalize(task)
    finally:
        sys.argv = argv
    return task


def _pddl2sas(domain: str, problem: str, optimize: bool) -> tuple[Any, str]:
    import sys

    argv = sys.argv
    try:
        return fast_downward.pddl2sas(domain, problem, verbose=False, optimize=optimize)
    finally:
        sys.argv = argv


def _translate(domain: str, problem: str, sas_file: str | None = None) -> tuple[Any, str, str]:
    """``(task, sas, sas_replan)`` for a problem: from memory (the last 16 problems), else
    from ``sas_file`` (a JSON text cache next to the game, keyed by a hash of the
    fast_downward install, the domain and the problem), else translated."""
    import hashlib

    from gui_gym.core.files import atomic_write_text

    key = (domain, problem)
    hit = _TRANSLATIONS.get(key)
    if hit is not None:
        _TRANSLATIONS.move_to_end(key)
        return hit
    digest = hashlib.sha256(
        "\0".join((fast_downward.__file__, domain, problem)).encode()
    ).hexdigest()
    cached = None
    if sas_file is not None:
        try:
            with open(sas_file) as f:
                cached = json.load(f)
        except (OSError, ValueError):
            cached = None
    if isinstance(cached, dict) and cached.get("key") == digest:
        hit = (_parse(domain, problem), cached["sas"], cached["sas_replan"])
    else:
        task, sas = _pddl2sas(domain, problem, optimize=False)
        _, sas_replan = _pddl2sas(domain, problem, optimize=True)
        hit = (task, sas, sas_replan)
        if sas_file is not None:
            payload = {"key": digest, "sas": sas, "sas_replan": sas_replan}
            atomic_write_text(sas_file, json.dumps(payload))
    _TRANSLATIONS[key] = hit
    if len(_TRANSLATIONS) > 16:
        _TRANSLATIONS.popitem(last=False)
    return hit


class FastPddlState(pddl_logic.PddlState):
    """:class:`PddlState` built from a cached translation (upstream's constructor otherwise)."""

    def __init__(
        self, downward_lib: Any, pddl_problem: str, logic: Any, sas_file: str | None = None
    ):
        from collections import Counter, defaultdict

        self._facts = defaultdict(set)
        self._vars_by_name = {}
        self._vars_by_type = defaultdict(set)
        self._var_counts = Counter()
        self._logic = logic
        self.downward_lib = downward_lib
        self.pddl_problem = pddl_problem
        self.task, self.sas, self.sas_replan = _translate(logic.domain, pddl_problem, sas_file)
        self._actions = {a.name: a for a in self.task.actions}
        for type_ in self.task.types:
            with contextlib.suppress(ValueError):
                self._logic.types.add(textworld.logic.Type(type_.name, type_.supertype_names))
        self.downward_lib.load_sas(self.sas.encode("utf-8"))
        self.downward_lib.load_sas_replan(self.sas_replan.encode("utf-8"))
        self.name2type = {o.name: o.type_name for o in self.task.objects}
        conditions = fast_downward.translate.pddl.conditions
        expressions = fast_downward.translate.pddl.f_expression
        facts = []
        for atom in self.task.init:
            if isinstance(atom, conditions.Atom):
                if atom.predicate != "=":
                    args = [Variable(a, self.name2type[a]) for a in atom.args]
                    facts.append(Proposition(atom.predicate, args))
            elif isinstance(atom, expressions.Assign) and atom.fluent.symbol != "total-cost":
                name = f"{atom.expression.value}"
                if not str.isdigit(name):
                    args = [Variable(a, self.name2type[a]) for a in atom.fluent.args]
                    facts.append(Proposition(name, args))
        self.add_facts(facts)
        atoms = (pddl_logic.Atom * self.downward_lib.get_state_size())()
        self.downward_lib.get_state(atoms)
        facts = [atom.get_fact(self.name2type) for atom in atoms]
        self.add_facts([fact for fact in facts if not fact.is_negation])
        self.applied: list[int] = []
        """The operator ids applied since the initial state (the bounded planner replays them)."""

    def apply(self, action: Any) -> Any:
        self.applied.append(int(self._operators[action.id].id))
        return super().apply(action)


def _logic(domain: str, grammar: str) -> Any:
    """The game logic for ``grammar``: ALFWorld's grammar is parsed once per process and the
    game's task line swapped in; any other grammar is parsed in full (and cached)."""
    import copy

    match = _TASK_LINE.search(grammar)
    if match is not None:
        base_text = grammar[: match.start(1)] + "UNKNOWN GOAL" + grammar[match.end(1) :]
        base = _LOGICS.get((domain, base_text))
        if base is None:
            base = _LOGICS[(domain, base_text)] = pddl_logic.GameLogic(domain, base_text)
        task = ContextSensitiveGrammar.parse(
            json.dumps({"task": [{"rhs": "Your task is to: " + match.group(1) + "."}]})
        )
        logic = copy.copy(base)
        logic.grammar = FastGrammar()
        logic.grammar._rules.update(base.grammar._rules)
        logic.grammar._rules["task"] = list(task._rules["task"])
        return logic
    key = (domain, grammar)
    if key not in _LOGICS:
        if len(_LOGICS) > 64:
            _LOGICS.clear()
        _LOGICS[key] = pddl_logic.GameLogic(domain, grammar)
    logic = copy.copy(_LOGICS[key])
    fast = FastGrammar()
    fast._rules.update(logic.grammar._rules)
    logic.grammar = fast
    return logic


_FREE_LIBS: list[Any] = []
"""Loaded fast-downward libraries no live engine uses. ``load_lib`` copies the 34 MB library
to a temporary file for each engine (so engines keep separate global state); the copy stays on
disk, deleted but mapped, for the process's life. An ALFWorld fork makes an engine, and the
rule PRM forks at every step: without reuse a training run left thousands of copies (a
Table 4 run filled the disk). ``list.pop`` and ``list.append`` are atomic, so no lock: an
engine's finalizer may run from the garbage collector inside any code, a lock's holder too."""


def _take_lib() -> Any:
    try:
        return _FREE_LIBS.pop()
    except IndexError:
        return fast_downward.load_lib()


class FastPddlEnv(PddlEnv):
    """TextWorld's PDDL environment with cached parses and translations and an on-demand
    planner (:meth:`plan`); observations, admissible commands and ``won`` are unchanged.
    Its fast-downward library comes from the engines collected before it (each state loads
    its problem into the library afresh), and goes back when this engine is collected."""

    def __init__(self, infos: Any = None) -> None:
        super(PddlEnv, self).__init__(infos)  # PddlEnv's own, without its load_lib()
        self.downward_lib = _take_lib()
        weakref.finalize(self, _FREE_LIBS.append, self.downward_lib)

    def load(self, filename_or_data: Any) -> None:
        if isinstance(filename_or_data, str):
            with open(filename_or_data) as f:
                data = json.load(f)
            self._game_file = filename_or_data
        else:
            data, self._game_file = filename_or_data, None
        self._game_data = data
        self.walkthrough = data.get("walkthrough", None)
        self._logic = _logic(data["pddl_domain"], data["grammar"])
        self._pddl_state = self._new_state()
        self._entity_infos = self._get_entity_infos()

    def reset(self) -> Any:
        """Upstream's ``reset`` with the state built from the cached translation."""
        from textworld.core import GameState

        self._pddl_state = self._new_state()
        self.prev_state = None
        self.state = GameState()
        self._last_action = None
        self._moves = 0
        context = {
            "state": self._pddl_state,
            "facts": list(self._pddl_state.facts),
            "variables": {},
            "mapping": {},
            "entity_infos": self._entity_infos,
        }
        self.state.feedback = self._logic.grammar.derive("#intro#", context)
        self.state.raw = self.state.feedback
        self._gather_infos()
        if "walkthrough" in self.request_infos.extras:
            self.state["extra.walkthrough"] = self.walkthrough or self.plan()
        return self.state

    def _new_state(self) -> FastPddlState:
        sas_file = None
        if self._game_file is not None:
            sas_file = os.path.join(os.path.dirname(self._game_file), "game.sas.json")
        return FastPddlState(
            self.downward_lib, self._game_data["pddl_problem"], self._logic, sas_file
        )

    def plan(self, cpu_s: float | None = None, memory_mb: int | None = None) -> list[str]:
        """The planner's command sequence from the current state (empty when none), found
        within ``cpu_s`` CPU seconds and ``memory_mb`` MiB (defaults:
        :func:`~gui_gym.envs.alfworld.planner.default_limits`).

        Raises:
            PlannerLimitExceeded: the planner hit a bound.
        """
        from gui_gym.envs.alfworld.planner import bounded_plan

        state = self._pddl_state
        result = bounded_plan(state.sas, state.sas_replan, state.applied, cpu_s, memory_mb)
        self.last_plan_stats = {"cpu_s": result.cpu_s, "peak_mb": result.peak_mb}
        return list(state.plan_to_templated_actions(result.operators, self._entity_infos))

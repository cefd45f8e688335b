"""Policies: random, oracle (and, in later releases, LLM and best-of-N agents)."""

from gui_gym.agents.base import Agent, run_episode
from gui_gym.agents.oracle import OracleAgent
from gui_gym.agents.random_agent import RandomAgent

__all__ = ["Agent", "OracleAgent", "RandomAgent", "run_episode"]

"""Policies: random, oracle, the WebShop BM25-greedy baseline (and, in later releases, LLM and
best-of-N agents)."""

from gui_gym.agents.base import Agent, run_episode
from gui_gym.agents.best_of_n import BestOfNAgent
from gui_gym.agents.best_of_trials import BestOfTrialsAgent
from gui_gym.agents.fallible_oracle import FallibleOracleAgent
from gui_gym.agents.oracle import OracleAgent
from gui_gym.agents.random_agent import RandomAgent
from gui_gym.agents.sampling import LLMPolicy, NoisyOraclePolicy, SamplingPolicy
from gui_gym.agents.webshop_greedy import WebShopGreedyAgent

__all__ = [
    "Agent",
    "BestOfNAgent",
    "BestOfTrialsAgent",
    "FallibleOracleAgent",
    "LLMPolicy",
    "NoisyOraclePolicy",
    "OracleAgent",
    "RandomAgent",
    "SamplingPolicy",
    "WebShopGreedyAgent",
    "run_episode",
]

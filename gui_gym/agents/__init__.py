"""Policies: random, oracle, a fallible oracle, the WebShop BM25-greedy baseline, an LLM
sampling policy, and the best-of-N and best-of-trials agents built on them."""

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

"""Policies: random, oracle, a fallible oracle, the WebShop BM25-greedy baseline, an LLM
sampling policy, the best-of-N and best-of-trials agents built on them (with the actor as its
own verifier, :class:`ActorVerifier`), and the generating
:class:`LLMAgent` (a :class:`BatchAgent` returning :class:`AgentStep` s with exact tokens)."""

from gui_gym.agents.actor_verifier import ActorVerifier
from gui_gym.agents.base import Agent, AgentStep, BatchAgent, Turn, run_episode
from gui_gym.agents.best_of_n import BestOfNAgent
from gui_gym.agents.best_of_trials import BestOfTrialsAgent
from gui_gym.agents.fallible_oracle import FallibleOracleAgent
from gui_gym.agents.llm import LLMAgent
from gui_gym.agents.oracle import OracleAgent
from gui_gym.agents.random_agent import RandomAgent
from gui_gym.agents.sampling import LLMPolicy, NoisyOraclePolicy, SamplingPolicy
from gui_gym.agents.webshop_greedy import WebShopGreedyAgent

__all__ = [
    "ActorVerifier",
    "Agent",
    "AgentStep",
    "BatchAgent",
    "BestOfNAgent",
    "BestOfTrialsAgent",
    "FallibleOracleAgent",
    "LLMAgent",
    "LLMPolicy",
    "NoisyOraclePolicy",
    "OracleAgent",
    "RandomAgent",
    "SamplingPolicy",
    "Turn",
    "WebShopGreedyAgent",
    "run_episode",
]

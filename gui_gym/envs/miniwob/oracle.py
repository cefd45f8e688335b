"""The MiniWoB++ experts' table, kept at its old import path.

The experts and the one ``ORACLES`` table live in :mod:`gui_gym.envs.miniwob.oracles` now;
import them from there.
"""

from gui_gym.envs.miniwob.oracles import ORACLES, UNSCRIPTED, Expert, OracleStuck

__all__ = ["ORACLES", "UNSCRIPTED", "Expert", "OracleStuck"]

"""Reward math as pure, typed functions (no Gymnasium imports): Soft-LCS and ProgRM labels,
ADMIRE milestone rewards, PRM data, ProRe vote combination, UI-S1 semi-online returns and
advantages. Wrappers in :mod:`gui_gym.wrappers` call these; tests hit them with the papers'
numbers. Import the submodules directly (``from gui_gym.rewards.lcs import soft_lcs``)."""

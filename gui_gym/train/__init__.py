"""Training: the rollout engine every trainer and ``gui-gym eval`` share, SFT, and (in later
releases) the RL algorithms. Nothing here is imported by ``import gui_gym``."""

"""``python -m gui_gym.cli``."""

from gui_gym.cli import main

main()

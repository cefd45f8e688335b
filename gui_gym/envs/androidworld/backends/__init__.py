"""Real-device backends of GuiGym/AndroidWorld-v0 (uiautomator2, android_env)."""

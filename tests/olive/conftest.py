import os

# Olive 0.13 sends telemetry unless told not to; nothing in the tests may reach the network. Set before any
# test module imports Olive (conftest files load first).
os.environ["OLIVE_DISABLE_TELEMETRY"] = "1"

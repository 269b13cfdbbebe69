"""Stand-in for huggingface_hub (benchmark_serving.py imports its constants)."""
from . import constants  # noqa: F401

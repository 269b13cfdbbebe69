"""Stand-in for Hugging Face datasets: the random dataset never loads one."""


def load_dataset(*args, **kwargs):
    raise RuntimeError("datasets is not installed (benchmark shim)")

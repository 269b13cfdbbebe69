"""Stand-in for huggingface_hub.constants: read only with VLLM_USE_MODELSCOPE."""
HF_HUB_OFFLINE = True

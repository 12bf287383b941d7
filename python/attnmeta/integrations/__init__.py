"""Integrations of attnmeta into serving engines (each imports its engine
only when called). :mod:`attnmeta.integrations.vllm`: vLLM."""

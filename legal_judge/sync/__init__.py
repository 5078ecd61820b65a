"""Langfuse sync helpers that do not import langfuse: masking, prompt specs, trace plans."""

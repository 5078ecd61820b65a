"""Langfuse sync: everything is stored first, then delivered from the store's outbox.

``settings`` reads the environment, ``sink`` is what the runner, audit and calibration call,
``mask`` redacts, ``prompts`` and ``plan*`` build prompts, traces and scores from the store
(pure); only the ``langfuse_*`` modules import the SDK (client, traces, scores, delivery,
prompts, datasets, labels, evaluators).
"""

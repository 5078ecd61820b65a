"""One judge call: configuration, the prompt and mitigation texts, the provider call, parsing and cost.

The modules, in the order a call passes through them: ``config`` (what a judge is), ``judge`` (identity,
messages, ``Judge.judge``), ``mitigation`` (the debias texts and the position swap), ``calls`` (cache keys,
single flight, the call log), ``attempts`` (the one JSON retry loop, with usage and cost) and ``parse``
(schema, fence, JSON extraction, verdict parsing).
"""

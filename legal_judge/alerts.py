"""Alerts for INCONCLUSIVE verdicts and audits: a log record always, a webhook POST when configured."""

from __future__ import annotations

import logging

import httpx

__all__ = ["post_alert"]

log = logging.getLogger("legal_judge.alerts")


def post_alert(url: str, **fields: str) -> bool:
    """POST ``fields`` as JSON to ``url``; failures are logged, never raised (an alert must not fail a run).

    Returns:
        True when the webhook answered 2xx.
    """
    try:
        resp = httpx.post(url, json={"source": "legal-judge", **fields}, timeout=5.0)
    except httpx.HTTPError as exc:
        log.warning("alert webhook %s unreachable: %s", url, type(exc).__name__)
        return False
    if resp.is_success:
        return True
    log.warning("alert webhook %s answered %s", url, resp.status_code)
    return False

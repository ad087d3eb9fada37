"""Verifies webhooks with the Standard Webhooks reference library
(`standardwebhooks` from PyPI), as a receiver would.

Reads a JSON list of {"secret", "body_base64", "headers"} on stdin and
prints one line per item: "ok", or "refused: <reason>".
"""

import base64
import json
import sys

from standardwebhooks.webhooks import Webhook

for case in json.load(sys.stdin):
    body = base64.b64decode(case["body_base64"])
    try:
        Webhook(case["secret"]).verify(body, case["headers"], json_parse=False)
        print("ok")
    except Exception as refused:  # noqa: BLE001 - any refusal is reported
        print(f"refused: {refused}")

"""A Switchyard webhook receiver in Python, standard library only (docs/events.md, "Headers and signatures").

  1. read the raw body (the signature covers the bytes, not the parsed JSON);
  2. verify it against the subscription's signing secrets (several during a rotation);
  3. skip a delivery already handled, by its x-service-webhook-id (deliveries are at least once);
  4. answer 2xx quickly; anything else makes Switchyard retry.

Run it:

    WEBHOOK_SECRETS=whsec_... PORT=3002 python3 examples/webhook-receiver-python/receiver.py

and subscribe http://127.0.0.1:3002/ (Switchyard refuses loopback URLs unless WEBHOOK_ALLOW_PRIVATE_URLS=true).
"""

import hashlib
import hmac
import json
import os
import re
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOLERANCE_SECONDS = 300
MAX_BODY_BYTES = 1024 * 1024


def sign(secret, timestamp, raw_body):
    """HMAC-SHA256, keyed with the whole secret string's UTF-8 bytes, over b"{timestamp}." + raw body; lower-case hex."""
    return hmac.new(secret.encode("utf-8"), f"{timestamp}.".encode("ascii") + raw_body, hashlib.sha256).hexdigest()


def verify(headers, raw_body, secrets, tolerance_seconds=TOLERANCE_SECONDS, now=None):
    """(True, webhook_id) when any signature matches any secret within the tolerance; else (False, reason)."""
    webhook_id = headers.get("x-service-webhook-id")
    timestamp = headers.get("x-service-webhook-timestamp")
    signatures = headers.get("x-service-webhook-signatures")
    if not webhook_id or not timestamp or not signatures:
        return False, "missing_headers"
    if not re.fullmatch(r"\d{1,12}", timestamp):
        return False, "bad_timestamp"
    if abs((time.time() if now is None else now) - int(timestamp)) > tolerance_seconds:
        return False, "stale_timestamp"
    received = [value.strip() for value in signatures.split(",")]
    for secret in secrets:
        expected = sign(secret, timestamp, raw_body)
        if any(hmac.compare_digest(expected, candidate) for candidate in received):
            return True, webhook_id
    return False, "no_matching_signature"


class SeenWebhookIds:
    """The ids already handled; in memory here, in the receiver's database (with what it did) in a real one."""

    def __init__(self, capacity=100_000):
        self.ids = {}
        self.capacity = capacity

    def __contains__(self, webhook_id):
        return webhook_id in self.ids

    def add(self, webhook_id):
        self.ids[webhook_id] = True
        if len(self.ids) > self.capacity:
            del self.ids[next(iter(self.ids))]


def handler_for(secrets, seen, on_event):
    class WebhookHandler(BaseHTTPRequestHandler):
        def do_POST(self):
            length = int(self.headers.get("content-length") or 0)
            if length > MAX_BODY_BYTES:
                return self.answer(413, "body too large")
            raw_body = self.rfile.read(length)
            headers = {name.lower(): value for name, value in self.headers.items()}
            ok, detail = verify(headers, raw_body, secrets)
            if not ok:
                return self.answer(400, f"invalid webhook: {detail}")
            if detail in seen:
                return self.answer(200, "duplicate: already handled")
            try:
                on_event(json.loads(raw_body), detail)
            except Exception:  # the delivery is retried
                return self.answer(500, "not handled")
            seen.add(detail)
            return self.answer(200, "ok")

        def answer(self, status, message):
            body = f"{message}\n".encode()
            self.send_response(status)
            self.send_header("content-type", "text/plain; charset=utf-8")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    return WebhookHandler


def print_event(event, webhook_id):
    target = event.get("target", {})
    print(f"{event.get('created_at')} {event.get('name')} {target.get('type')} {target.get('id')} ({target.get('status')}) "
          f"[webhook {webhook_id}]", flush=True)


def main():
    secrets = [value for value in os.environ.get("WEBHOOK_SECRETS", os.environ.get("WEBHOOK_SECRET", "")).split(",") if value]
    if not secrets:
        print("Set WEBHOOK_SECRETS (comma separated) to the subscription's signing secrets.", file=sys.stderr)
        sys.exit(1)
    port = int(os.environ.get("PORT", "3002"))
    server = ThreadingHTTPServer(("127.0.0.1", port), handler_for(secrets, SeenWebhookIds(), print_event))
    print(f"listening on http://127.0.0.1:{server.server_address[1]}/", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()

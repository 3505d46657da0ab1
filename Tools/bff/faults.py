"""Faults the reference BFF can inject into its next answers to /graphql.

A fault is set with POST /__faults and a JSON body such as
  {"kind": "status", "status": 503, "retryAfter": "2", "count": 1}
and applies to the next `count` (default 1) requests to /graphql. Kinds:
  status        that HTTP status, JSON body {"error": ...}; optional "retryAfter", "body"
  reset         close the connection without answering
  slow          wait "seconds", then answer normally
  malformed     200 with a body that is not JSON
  truncated     200 announcing more bytes than it sends, then close
  html          200 (or "status") with an HTML page
  empty         200 with an empty body
  graphqlError  200 with {"errors": [...], "data": null}; with "partial": true, data
                holds the real answer beside the errors
  large         200 with a JSON body of "bytes" bytes
  hang          send the status line and headers, then never finish nor close
                (until the server stops)
  mixed         one of status 500/503, reset, malformed, truncated, empty, html,
                graphqlError, drawn at random for each faulty request
With "rate": R (0..1) instead of "count", each request has chance R of the fault,
drawn from a generator seeded with "seed" (default 1), until cleared.
DELETE /__faults clears every fault.
"""
import random
import threading

KINDS = {"status", "reset", "slow", "malformed", "truncated", "html", "empty",
         "graphqlError", "large", "hang", "mixed"}
MIXED = [{"kind": "status", "status": 500}, {"kind": "status", "status": 503}, {"kind": "reset"},
         {"kind": "malformed"}, {"kind": "truncated"}, {"kind": "empty"}, {"kind": "html"},
         {"kind": "graphqlError"}]


class Faults:
    def __init__(self):
        self.lock = threading.Lock()
        self.queue = []  # faults for the next requests, in order
        self.rate = None  # (probability, fault, random.Random)
        self.injected = 0

    def set(self, spec):
        kind = spec.get("kind")
        if kind not in KINDS:
            raise ValueError("unknown fault kind %r; known: %s" % (kind, ", ".join(sorted(KINDS))))
        with self.lock:
            if "rate" in spec:
                self.rate = (float(spec["rate"]), spec, random.Random(spec.get("seed", 1)))
            else:
                self.queue.extend([spec] * int(spec.get("count", 1)))

    def clear(self):
        with self.lock:
            self.queue.clear()
            self.rate = None

    def next(self):
        """The fault for this request, or None."""
        with self.lock:
            fault = None
            if self.queue:
                fault = self.queue.pop(0)
            elif self.rate is not None:
                probability, spec, generator = self.rate
                if generator.random() < probability:
                    fault = spec
            if fault is not None:
                self.injected += 1
                if fault["kind"] == "mixed":
                    generator = self.rate[2] if self.rate is not None else random
                    fault = generator.choice(MIXED)
            return fault

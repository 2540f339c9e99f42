#!/usr/bin/env python3
# The cheapest exec handler child (docs/handler-protocol.md): says hello, then answers every event
# ok without doing anything. bench_redis_throughput --exec runs it to measure what the process
# boundary alone costs per event.
import json
import sys

sys.stdout.write(json.dumps({"protocol": 1}) + "\n")
sys.stdout.flush()
for line in sys.stdin:
    request = json.loads(line)
    sys.stdout.write('{"n":%d,"ok":true}\n' % request["n"])
    sys.stdout.flush()

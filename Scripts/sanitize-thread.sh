#!/usr/bin/env bash
# Runs the store and client tests under the thread sanitizer, in a build folder of
# its own so the normal build is left alone.
#   bash Scripts/sanitize-thread.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
swift test --sanitize=thread --scratch-path .build-tsan \
    --filter 'MomentsStore|HTTPClientTests|EndpointTests|MiddlewareTests|ClientControlTests|AuthenticationTests|RetryTests|CachePolicyTests|ResponseCacheTests|CoalescingTests|BatchTests|ChainTests|LoggingTests|Conformance|CurlTransportTests|CurlBodyMemoryTests|BriefWatchTests|HeaderBytesTests|PThreadMutexTests|FuzzTests|ClientResilienceTests|TraceContextTests|DeadlineTimerTests|LatestValueMailboxTests|AnswerInMemoryTests'

// The benchmarks' baseline for CurlTransport: the same requests sent by a plain C
// program on libcurl's multi interface, with nothing between it and libcurl.
#ifndef MOMENTS_CURL_BASELINE_H
#define MOMENTS_CURL_BASELINE_H

/// Sends POST requests of `body` to `url` for `seconds`, keeping `width` in flight on
/// one multi handle (each reusing its connection), and returns the requests completed
/// with status 200 per second; -1 if one failed.
double moments_curl_baseline_rate(const char *url, const char *body, long body_length, int width, double seconds);

#endif

#include "MomentsCurlBaseline.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <time.h>

static size_t discard(char *data, size_t size, size_t count, void *context) {
    (void)data;
    *(size_t *)context += size * count;
    return size * count;
}

static double now_seconds(void) {
    struct timespec spec;
    clock_gettime(CLOCK_MONOTONIC, &spec);
    return (double)spec.tv_sec + (double)spec.tv_nsec / 1e9;
}

double moments_curl_baseline_rate(const char *url, const char *body, long body_length, int width, double seconds) {
    CURLM *multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)width);
    struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
    headers = curl_slist_append(headers, "Expect:");
    CURL **handles = calloc((size_t)width, sizeof(CURL *));
    size_t *received = calloc((size_t)width, sizeof(size_t));
    for (int index = 0; index < width; index++) {
        CURL *easy = curl_easy_init();
        curl_easy_setopt(easy, CURLOPT_URL, url);
        curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE, body_length);
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
        /* The same request as CurlTransport sends by default: offering every encoding
           libcurl decodes (an Accept-Encoding header, and decoding set up for answers). */
        curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, "");
        curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(easy, CURLOPT_WRITEDATA, &received[index]);
        curl_easy_setopt(easy, CURLOPT_PRIVATE, (void *)(long)index);
        handles[index] = easy;
        curl_multi_add_handle(multi, easy);
    }
    long completed = 0;
    int failed = 0;
    double start = now_seconds();
    int running = width;
    while (!failed) {
        curl_multi_perform(multi, &running);
        CURLMsg *message;
        int left;
        int stop = now_seconds() - start >= seconds;
        while ((message = curl_multi_info_read(multi, &left))) {
            if (message->msg != CURLMSG_DONE) continue;
            CURL *easy = message->easy_handle;
            long status = 0;
            curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
            if (message->data.result != CURLE_OK || status != 200) failed = 1;
            completed++;
            curl_multi_remove_handle(multi, easy);
            if (!stop) curl_multi_add_handle(multi, easy);
        }
        if (stop && running == 0) break;
        curl_multi_poll(multi, NULL, 0, 1000, NULL);
    }
    double elapsed = now_seconds() - start;
    for (int index = 0; index < width; index++) {
        curl_multi_remove_handle(multi, handles[index]);
        curl_easy_cleanup(handles[index]);
    }
    curl_multi_cleanup(multi);
    curl_slist_free_all(headers);
    free(handles);
    free(received);
    return failed ? -1 : (double)completed / elapsed;
}

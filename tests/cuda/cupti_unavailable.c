/* activity_enable where CUPTI cannot give records (no library, or a library without a
 * driver): UNAVAILABLE with the reason, so the profiler falls back to events; nothing
 * stays enabled (query answers at once, a second try fails the same way, disabling is
 * harmless). White-box: the cuda ops table itself (no device is needed to get here).
 * argv[1]: the fragment the sentence must hold. */
#include "harness.h"
#include "backends/backend.h"

extern const hwrt_backend_ops hwrt_backend_cuda;

static void on_records(void *ctx, const hwrt_activity *recs, size_t n) { (void)ctx; (void)recs; (void)n; }

int main(int argc, char **argv)
{
    const char *frag = argc > 1 ? argv[1] : "";
    TEST_CASE("cupti unavailable");
    EXPECT(hwrt_backend_cuda.activity_enable && hwrt_backend_cuda.activity_query);
    for (int i = 0; i < 2; i++) {
        hwrt_status st = hwrt_backend_cuda.activity_enable(on_records, NULL);
        EXPECT(st == HWRT_ERROR_UNAVAILABLE);
        EXPECT(strstr(hwrt_last_error(), frag) != NULL);
        printf("activity_enable: %s: %s\n", hwrt_status_name(st), hwrt_last_error());
        EXPECT(hwrt_backend_cuda.activity_query() == HWRT_SUCCESS);
    }
    EXPECT(hwrt_backend_cuda.activity_enable(NULL, NULL) == HWRT_SUCCESS);
    EXPECT(hwrt_backend_cuda.activity_query() == HWRT_SUCCESS);
    return test_report();
}

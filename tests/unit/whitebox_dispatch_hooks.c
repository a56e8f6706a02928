/* The dispatch point's hook table full (src/exec/dispatch.c, MAX_HOOKS 8): hooks are added
 * until the table refuses one, with a sentence; then one piece of work passes every
 * installed hook once before and once after it is submitted, and a host-blocking call
 * asks each once, nothing past the table's end (seed 3012's dispatch.c:209 survivor, the
 * post loop made `i <= n`, read one slot past a full table). Linked statically: the hook
 * API is internal. */
#include "harness.h"
#include "exec/dispatch.h"

enum { MAX = 8 };
static hwi_hook hook[MAX + 1];
static _Atomic int pre[MAX + 1], post[MAX + 1], sync_asks[MAX + 1];
static int idx[MAX + 1];

static hwrt_status on_pre(void *ctx, hwi_work *w)
{
    (void)w;
    pre[*(int *)ctx]++;
    return HWRT_SUCCESS;
}
static void on_post(void *ctx, const hwi_work *w, hwrt_status st)
{
    (void)w;
    if (st == HWRT_SUCCESS) post[*(int *)ctx]++;
}
static hwrt_status on_sync(void *ctx, const char *api, hwi_stream *s)
{
    (void)api, (void)s;
    sync_asks[*(int *)ctx]++;
    return HWRT_SUCCESS;
}

int main(void)
{
    TEST_CASE("a full hook table");
    OK(hwrt_set_device("sim", 0));
    void *d = NULL;
    OK(hwrt_malloc(&d, 4096));
    int added = 0;
    hwrt_status st = HWRT_SUCCESS;
    for (int i = 0; i <= MAX && st == HWRT_SUCCESS; i++) {
        idx[i] = i;
        hook[i] = (hwi_hook){.pre = on_pre, .post = on_post, .host_sync = on_sync, .ctx = &idx[i]};
        st = hwi_dispatch_add_hook(&hook[i]);
        if (st == HWRT_SUCCESS) added++;
    }
    EXPECT(st == HWRT_ERROR_INTERNAL && strstr(hwrt_last_error(), "more than 8 hooks"));
    EXPECT(added >= 1 && added <= MAX);
    OK(hwrt_memset_async(d, 0, 4096, NULL));
    OK(hwrt_stream_synchronize(NULL));
    for (int i = 0; i < added; i++) {
        EXPECT(pre[i] == 1 && post[i] == 1);
        EXPECT(sync_asks[i] >= 1);
    }
    EXPECT(pre[added] == 0 && post[added] == 0);   /* the refused one saw nothing */
    for (int i = 0; i < added; i++) hwi_dispatch_remove_hook(&hook[i]);
    OK(hwrt_memset_async(d, 0, 4096, NULL));
    OK(hwrt_stream_synchronize(NULL));
    for (int i = 0; i < added; i++) EXPECT(pre[i] == 1 && post[i] == 1);   /* removed */
    OK(hwrt_free(d));
    OK(hwrt_shutdown());
    return test_report();
}

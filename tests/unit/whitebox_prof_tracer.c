/* The profiler's per-thread buffer registry (src/prof/prof_tracer.c buf_for_thread)
 * when host memory runs out: realloc and calloc are wrapped (-Wl,--wrap=..., libhwrt
 * linked statically so that the wraps reach prof_tracer.c).
 * - realloc: the registries' first growth (16 entries, from NULL) fails during one op (the
 *   profiler's stream registry grows the same way and fails too: its markers count as
 *   missing). The thread's record is then not kept, nothing is registered, and the record
 *   counts as dropped; issue 25's mutant at prof_tracer.c (`ok && nbufs < capbufs` made
 *   `||`) stored the buffer into the NULL registry (a crash). The next record, with
 *   realloc working again, registers the thread.
 * - calloc: a new thread's buffer (calloc of one prof_buf) cannot be allocated during one op
 *   on that thread: its record is lost and counts as dropped (it was lost silently before).
 */
#include "harness.h"
#include "harness_files.h"
#include "prof/prof.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void *__real_realloc(void *p, size_t n);
void *__real_calloc(size_t n, size_t size);
static atomic_int fail_next, fired, fired_calloc;
static __thread int fail_calloc;            /* on this thread only */

void *__wrap_realloc(void *p, size_t n)
{
    if (!p && n == 16 * sizeof(void *) && atomic_load(&fail_next)) {
        atomic_fetch_add(&fired, 1);
        return NULL;
    }
    return __real_realloc(p, n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    if (n == 1 && size == sizeof(prof_buf) && fail_calloc) {
        atomic_fetch_add(&fired_calloc, 1);
        return NULL;
    }
    return __real_calloc(n, size);
}

static hwrt_tensor t;
static hwrt_status thread_st = HWRT_ERROR_INVALID_ARGUMENT;   /* until the thread ran */

static void *fill_on_thread(void *arg)
{
    (void)arg;
    thread_st = hwrt_set_device("sim", 0);
    if (thread_st == HWRT_SUCCESS) {
        fail_calloc = 1;
        thread_st = hwrt_op_fill(t, 3.0, NULL);   /* its buffer cannot be allocated */
        fail_calloc = 0;
    }
    return NULL;
}

int main(void)
{
    TEST_CASE("a thread whose buffer cannot be registered records nothing, counted");
    char dir[] = "/tmp/hwrt-wb-tracer-XXXXXX";
    EXPECT(mkdtemp(dir) != NULL);
    OK(hwrt_set_device("sim", 0));
    int64_t shape[1] = {1024};
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    OK(hwrt_op_fill(t, 0.0, NULL));          /* the default stream exists from here on */
    OK(hwrt_device_synchronize());
    OK(hwrt_profiler_start(dir));
    hwrt_profiler_stats s;
    atomic_store(&fail_next, 1);
    OK(hwrt_op_fill(t, 1.0, NULL));          /* its record: the registry cannot grow */
    atomic_store(&fail_next, 0);
    EXPECT(atomic_load(&fired) >= 1);
    OK(hwrt_profiler_get_stats(&s));
    EXPECT(s.threads == 0);
    EXPECT(s.dropped >= 1);                  /* the lost record is counted */
    uint64_t dropped_before = s.dropped;
    OK(hwrt_op_fill(t, 2.0, NULL));          /* realloc works again: registered */
    OK(hwrt_device_synchronize());
    OK(hwrt_profiler_get_stats(&s));
    EXPECT(s.threads == 1 && s.events >= 1);
    EXPECT(s.dropped == dropped_before);

    TEST_CASE("a thread whose buffer cannot be allocated records nothing, counted");
    pthread_t th;
    EXPECT(pthread_create(&th, NULL, fill_on_thread, NULL) == 0);
    pthread_join(th, NULL);
    OK(thread_st);                           /* the op itself is not affected */
    EXPECT(atomic_load(&fired_calloc) >= 1);
    OK(hwrt_device_synchronize());
    OK(hwrt_profiler_get_stats(&s));
    EXPECT(s.threads == 1);                  /* the other thread never registered */
    EXPECT(s.dropped > dropped_before);      /* its record counted as dropped */
    if (s.dropped <= dropped_before)
        fprintf(stderr, "dropped %llu, before %llu\n", (unsigned long long)s.dropped,
                (unsigned long long)dropped_before);
    OK(hwrt_profiler_stop());
    float out[1024];
    OK(hwrt_tensor_copy_to_host(t, out, sizeof out));
    EXPECT(out[0] == 3.0f && out[1023] == 3.0f);
    OK(hwrt_tensor_release(t));
    OK(hwrt_shutdown());
    remove_tree(dir);
    return test_report();
}

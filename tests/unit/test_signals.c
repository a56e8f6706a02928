/* A process whose timer signals interrupt hwrt's threads (a sampling profiler's SIGALRM or
 * SIGPROF, installed without SA_RESTART): every sleep and wait resumes, nothing fails with
 * EINTR or hangs, and the data is right. The sim's seeded delays (HWRT_SIM_JITTER, set
 * here) put sleeps of up to 5 ms in the worker threads for the signals to interrupt (issue
 * 25's hunt run 4001, sim_sched.c: `nanosleep(..) != 0 && errno == EINTR` made `||` slept
 * the rest of an interrupted delay again and again, forever, once a sleep had returned with
 * errno still EINTR). */
#include "harness.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/time.h>

#define N 4096
#define ROUNDS 400

static volatile sig_atomic_t ticks;
static void on_tick(int sig) { (void)sig; ticks++; }

int main(void)
{
    setenv("HWRT_SIM_JITTER", "4001", 1);
    struct sigaction sa = {0};
    sa.sa_handler = on_tick;                  /* no SA_RESTART: calls return EINTR */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 200}, {0, 200}};
    setitimer(ITIMER_REAL, &it, NULL);

    TEST_CASE("copies and kernels on two streams under a 200 us timer signal");
    OK(hwrt_set_device("sim", 0));
    hwrt_stream a = NULL, b = NULL;
    OK(hwrt_stream_create(&a, 0));
    OK(hwrt_stream_create(&b, 0));
    hwrt_event e = NULL;
    OK(hwrt_event_create(&e, 0));
    int64_t shape[1] = {N};
    hwrt_tensor t = NULL;
    OK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    void *d = NULL;
    OK(hwrt_tensor_data(t, &d));
    OK(hwrt_op_fill(t, 0.0, a));
    OK(hwrt_op_fill(t, 0.0, b));
    OK(hwrt_device_synchronize());
    /* hwrt's threads now run, with the signal unblocked (the mask they were made with):
     * blocked in this thread, it goes to them */
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &alrm, NULL);
    static float in[N], out[N];
    int bad = 0;
    for (int r = 0; r < ROUNDS && !bad; r++) {
        for (int i = 0; i < N; i++) in[i] = (float)(r + i);
        OK(hwrt_memcpy_async(d, in, sizeof in, HWRT_MEMCPY_HOST_TO_DEVICE, a));
        OK(hwrt_op_scale(t, t, 2.0, a));
        OK(hwrt_event_record(e, a));
        OK(hwrt_stream_wait_event(b, e));
        OK(hwrt_op_scale(t, t, 0.5, b));
        OK(hwrt_op_scale(t, t, 3.0, b));
        OK(hwrt_memcpy_async(out, d, sizeof out, HWRT_MEMCPY_DEVICE_TO_HOST, b));
        OK(hwrt_stream_synchronize(b));
        for (int i = 0; i < N; i += 97)
            if (out[i] != 3.0f * (float)(r + i)) bad = 1;
    }
    EXPECT(!bad);
    OK(hwrt_event_synchronize(e));
    OK(hwrt_device_synchronize());
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    EXPECT(ticks > 0);
    printf("%d timer signals\n", (int)ticks);
    OK(hwrt_event_destroy(e));
    OK(hwrt_tensor_release(t));
    OK(hwrt_stream_destroy(a));
    OK(hwrt_stream_destroy(b));
    return test_report();
}

/* A program whose names try to break the profiler's files: its thread name carries
 * invalid UTF-8, a terminal escape and a newline followed by a forged "#pid" header, and
 * it records a span whose name holds a tab, a newline, a comma, a quote, an escape code
 * and a truncated UTF-8 sequence. check_injection.py checks the raw file and every
 * export. usage: prof_inject OUTDIR (prints "pid N"). */
#define _GNU_SOURCE
#include <hwrt.h>
#include "prof/prof.h"

#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "example_check.h"   /* CHECK(call) */

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    pthread_setname_np(pthread_self(), "\xff\x1b[2J\n#pid\t42");   /* 13 of 15 bytes */
    CHECK(hwrt_set_device("sim", 0));
    CHECK(hwrt_profiler_start(argv[1]));
    hwrt_tensor t;
    int64_t shape[1] = {1024};
    CHECK(hwrt_tensor_empty(&t, HWRT_FLOAT32, 1, shape));
    CHECK(hwrt_op_fill(t, 1.0, NULL));
    float host[1024];
    CHECK(hwrt_tensor_copy_to_host(t, host, sizeof host));
    uint64_t t0 = hwi_prof_now_ns();
    hwi_prof_record_event(HWI_PROF_USER, "span\tX\n1,\"q\"\x1b]0;t\x07\xc3", 0, t0,
                          hwi_prof_now_ns(), 0);
    CHECK(hwrt_tensor_release(t));
    CHECK(hwrt_profiler_stop());
    CHECK(hwrt_shutdown());
    printf("pid %d\n", (int)getpid());
    return 0;
}

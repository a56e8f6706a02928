/* Test helper: open a simulated device, hold `mb` MiB in the pool (plus a live tensor),
 * run some compute, print "ready <pid>" and wait until stdin closes. Each line "work" on
 * stdin allocates, computes and frees once more (touching the registry: publish and the
 * other processes' figures) and answers "done".
 * usage: smi_holder DEVICE MB */
#include <hwrt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    int dev = atoi(argv[1]);
    size_t mb = (size_t)atol(argv[2]);
    hwrt_status st = hwrt_set_device("sim", dev);
    if (st != HWRT_SUCCESS) {
        printf("error %s: %s\n", hwrt_status_name(st), hwrt_last_error());
        fflush(stdout);
        return 3;
    }
    void *p = NULL;
    if (mb && hwrt_malloc(&p, mb << 20) != HWRT_SUCCESS) return 4;
    hwrt_tensor a;
    int64_t shape[2] = {256, 256};
    if (hwrt_tensor_empty(&a, HWRT_FLOAT32, 2, shape) != HWRT_SUCCESS) return 5;
    for (int i = 0; i < 50; i++) hwrt_op_fill(a, i, NULL);
    hwrt_stream_synchronize(NULL);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    char line[64];
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "work", 4)) continue;
        void *q = NULL;
        hwrt_status w = hwrt_malloc(&q, 8 << 20);
        for (int i = 0; w == HWRT_SUCCESS && i < 20; i++) w = hwrt_op_fill(a, i, NULL);
        if (w == HWRT_SUCCESS) w = hwrt_stream_synchronize(NULL);
        if (q) hwrt_free(q);
        hwrt_empty_cache(dev);           /* segments go back: the registry's figures move */
        printf("%s\n", w == HWRT_SUCCESS ? "done" : hwrt_last_error());
        fflush(stdout);
    }
    hwrt_tensor_release(a);
    hwrt_free(p);
    hwrt_shutdown();
    return 0;
}

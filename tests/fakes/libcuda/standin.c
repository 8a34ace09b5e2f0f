#define _POSIX_C_SOURCE 200809L
/* A stand-in for the CUDA driver library (libcuda) with a card's timings, for the arrival
 * benchmark's no-PyTorch path: the entry points gpufleet_sampler/benchmark/cudadrv.py calls,
 * with the real signatures and return codes. Copies take bytes / rate of wall time; nothing is allocated (device and pinned pointers are numbers, never touched).
 *
 * Copies are timed through a queue (see nap). GPUFLEET_FAKE_CUDA: one "hbm:h2d:d2h:p2p:free_gib" group of GB/s figures per GPU, ';'
 * between GPUs (p2p 0: no peer access, as on GeForce boards). Compiled by the tests with cc.
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define MAXG 16
typedef unsigned long long CUdeviceptr;
static double hbm[MAXG], h2d[MAXG], d2h[MAXG], p2p[MAXG], free_gib[MAXG];
static int ngpu = -1;
static __thread int current = 0; /* as in CUDA, the current context is per host thread */
static CUdeviceptr next_ptr = 1ULL << 40;

/* The GPU's queue, as on a real card: a copy is queued behind the others and the host goes
 * on while the queue is under QUEUE_S long; cuCtxSynchronize waits for it to drain. Deadlines
 * are absolute, so a sleep that overshoots does not push the next copy back (the figures do
 * not depend on how loaded the machine running the tests is). */
#define QUEUE_S 0.05
#define IDLE_GAP_S 0.01
static double busy_until[MAXG]; /* one queue per GPU */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_until(double t) {
    struct timespec ts = {(time_t)t, (long)((t - (double)(time_t)t) * 1e9)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {}
}

static void nap_on(int g, double bytes, double gbps) {
    double now = now_s();
    if (now > busy_until[g] + IDLE_GAP_S) busy_until[g] = now; /* the queue ran dry */
    busy_until[g] += gbps > 0 ? bytes / (gbps * 1e9) : 0.0;
    if (busy_until[g] - now > QUEUE_S) sleep_until(busy_until[g] - QUEUE_S);
}

static void nap(double bytes, double gbps) { nap_on(current, bytes, gbps); }

int cuInit(unsigned flags) {
    (void)flags;
    const char *spec = getenv("GPUFLEET_FAKE_CUDA");
    if (!spec) return 100; /* CUDA_ERROR_NO_DEVICE */
    char buf[4096];
    strncpy(buf, spec, sizeof buf - 1);
    buf[sizeof buf - 1] = 0;
    ngpu = 0;
    for (char *g = strtok(buf, ";"); g && ngpu < MAXG; g = strtok(NULL, ";"), ngpu++)
        if (sscanf(g, "%lf:%lf:%lf:%lf:%lf", &hbm[ngpu], &h2d[ngpu], &d2h[ngpu], &p2p[ngpu],
                   &free_gib[ngpu]) != 5)
            return 1; /* CUDA_ERROR_INVALID_VALUE */
    return 0;
}

static int dev_ok(int d) { return ngpu >= 0 && d >= 0 && d < ngpu; }
int cuDeviceGet(int *dev, int ordinal) { if (!dev_ok(ordinal)) return 101; *dev = ordinal; return 0; }
int cuDevicePrimaryCtxRetain(void **ctx, int dev) { if (!dev_ok(dev)) return 101; *ctx = (void *)(long)(dev + 1); return 0; }
int cuDevicePrimaryCtxRelease(int dev) { return dev_ok(dev) ? 0 : 101; }
int cuCtxSetCurrent(void *ctx) { int d = (int)(long)ctx - 1; if (!dev_ok(d)) return 201; current = d; return 0; }
int cuCtxSynchronize(void) { sleep_until(busy_until[current]); return 0; }
int cuMemGetInfo_v2(size_t *free_b, size_t *total) {
    *free_b = (size_t)(free_gib[current] * 1073741824.0);
    *total = *free_b + 1073741824ULL;
    return 0;
}
int cuMemAlloc_v2(CUdeviceptr *p, size_t n) { *p = next_ptr; next_ptr += n + 4096; return 0; }
int cuMemFree_v2(CUdeviceptr p) { (void)p; return 0; }
int cuMemAllocHost_v2(void **p, size_t n) { *p = (void *)(size_t)next_ptr; next_ptr += n + 4096; return 0; }
int cuMemFreeHost(void *p) { (void)p; return 0; }
/* A device-to-device copy reads and writes each byte: 2 x bytes of HBM traffic. */
int cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) { (void)d; (void)s; nap(2.0 * n, hbm[current]); return 0; }
int cuMemcpyHtoD_v2(CUdeviceptr d, const void *h, size_t n) { (void)d; (void)h; nap((double)n, h2d[current]); return 0; }
int cuMemcpyDtoH_v2(void *h, CUdeviceptr d, size_t n) { (void)d; (void)h; nap((double)n, d2h[current]); return 0; }
int cuDeviceCanAccessPeer(int *can, int a, int b) {
    if (!dev_ok(a) || !dev_ok(b)) return 101;
    *can = p2p[a] > 0 && p2p[b] > 0;
    return 0;
}
int cuCtxEnablePeerAccess(void *ctx, unsigned flags) { (void)ctx; (void)flags; return 0; }
int cuMemcpyPeer(CUdeviceptr d, void *dctx, CUdeviceptr s, void *sctx, size_t n) {
    (void)d; (void)s; (void)dctx;
    int a = (int)(long)sctx - 1;
    if (dev_ok(a)) nap_on(a, (double)n, p2p[a]);
    return 0;
}

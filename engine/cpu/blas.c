/* blas.c: which BLAS kernels run, made to agree with what the CPU can do (issue #31).
 *
 * OpenBLAS built with DYNAMIC_ARCH (Debian's) picks its kernels from a table of CPU models
 * when it is loaded; a model it does not know (a Xeon newer than the library) gets its
 * slowest, Prescott's SSE3 kernels, at about a sixth of the speed. dse decides from the
 * CPU's features (cpuid, and xgetbv for whether the OS saves the registers), never from
 * model numbers: the best core type the library has whose instructions this CPU runs. Where OpenBLAS chose a weaker one and the user did not set
 * OPENBLAS_CORETYPE, dse selects the better one once, before any BLAS call, by setting the
 * variable for OpenBLAS's own selection and running it again (gotoblas_dynamic_quit and
 * _init, exported by every DYNAMIC_ARCH build), then puts the environment back as it was,
 * so child processes decide again for themselves. The new kernels must then pass a small
 * sgemm check against a double-precision product, or the library's own choice is restored.
 *
 * The engine's results do not depend on this choice in how they depend on the threads: every
 * sgemm is the same call with any number of threads (conv2d.c fwd_kblocks, the slices), so
 * the thread-count guarantee holds whatever kernels run (tests: train-threads-blas). */
#include "engine/engine.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cblas.h>

/* OpenBLAS's DYNAMIC_ARCH selection, absent (NULL) from other builds and other BLAS. */
extern void gotoblas_dynamic_init(void) __attribute__((weak));
extern void gotoblas_dynamic_quit(void) __attribute__((weak));
/* Its server threads' end (pthread builds; started again by the next threaded call). */
extern int blas_thread_shutdown_(void) __attribute__((weak));

/* OpenBLAS's x86-64 core types, best first, each with the instructions its kernels need and
 * the symbol a library that has it exports. `pick` 0: a core OpenBLAS chooses itself for
 * its vendor's CPUs, ranked but never chosen by dse in place of Intel's of its level. */
static const struct core {
    const char *name, *sym;
    unsigned    needs;
    int         level, pick;
} cores[] = {
    { "SapphireRapids", "gotoblas_SAPPHIRERAPIDS", DSE_CPU_AVX512 | DSE_CPU_AVX512BF16 | DSE_CPU_AMX, 6, 1 },
    { "Cooperlake", "gotoblas_COOPERLAKE", DSE_CPU_AVX512 | DSE_CPU_AVX512BF16, 5, 1 },
    { "SkylakeX", "gotoblas_SKYLAKEX", DSE_CPU_AVX512, 4, 1 },
    { "Zen", "gotoblas_ZEN", DSE_CPU_AVX2, 3, 0 },
    { "Haswell", "gotoblas_HASWELL", DSE_CPU_AVX2, 3, 1 },
    { "Excavator", "gotoblas_EXCAVATOR", DSE_CPU_AVX, 2, 0 },
    { "Steamroller", "gotoblas_STEAMROLLER", DSE_CPU_AVX, 2, 0 },
    { "Piledriver", "gotoblas_PILEDRIVER", DSE_CPU_AVX, 2, 0 },
    { "Bulldozer", "gotoblas_BULLDOZER", DSE_CPU_AVX, 2, 0 },
    { "Sandybridge", "gotoblas_SANDYBRIDGE", DSE_CPU_AVX, 2, 1 },
    { "Nehalem", "gotoblas_NEHALEM", DSE_CPU_SSE42, 1, 1 },
    { "Prescott", "gotoblas_PRESCOTT", 0, 0, 1 },
};

static const struct core *core_named(const char *name) {
    for (int i = 0; name && i < DSE_ARRAY_LEN(cores); i++)
        if (!strcasecmp(cores[i].name, name)) return &cores[i];
    return NULL;
}

/* cpuid's words, and the OS's register state (xgetbv): read directly, since compilers
 * differ in the feature names __builtin_cpu_supports knows (clang 14 knows no AMX). */
static void cpuid(unsigned leaf, unsigned sub, unsigned r[4]) {
#if defined(__x86_64__) || defined(__i386__)
    __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
#else
    (void)leaf, (void)sub;
    r[0] = r[1] = r[2] = r[3] = 0;
#endif
}

static unsigned long long xgetbv0(void) {
#if defined(__x86_64__) || defined(__i386__)
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long)hi << 32) | lo;
#else
    return 0;
#endif
}

static unsigned features_now(void) {
    unsigned f = 0, r[4], max, l7[4] = { 0 }, l71[4] = { 0 };
    cpuid(0, 0, r);
    max = r[0];
    if (max < 1) return 0;
    cpuid(1, 0, r);
    const unsigned c1 = r[2];
    if (c1 & (1u << 20)) f |= DSE_CPU_SSE42;
    if (max >= 7) {
        cpuid(7, 0, l7);
        if (l7[0] >= 1) cpuid(7, 1, l71);
    }
    const unsigned long long xcr0 = (c1 & (1u << 27)) ? xgetbv0() : 0; /* OSXSAVE: the OS saves what it lists */
    const int ymm = (xcr0 & 0x6) == 0x6, zmm = ymm && (xcr0 & 0xe0) == 0xe0, tiles = (xcr0 & 0x60000) == 0x60000;
    if (ymm && (c1 & (1u << 28))) f |= DSE_CPU_AVX;
    if ((f & DSE_CPU_AVX) && (c1 & (1u << 12)) && (l7[1] & (1u << 5))) f |= DSE_CPU_AVX2;
    const unsigned avx512 = (1u << 16) | (1u << 17) | (1u << 28) | (1u << 30) | (1u << 31); /* F DQ CD BW VL */
    if (zmm && (l7[1] & avx512) == avx512) f |= DSE_CPU_AVX512;
    if ((f & DSE_CPU_AVX512) && (l71[0] & (1u << 5))) f |= DSE_CPU_AVX512BF16;
    if (tiles && (l7[3] & (1u << 24)) && (l7[3] & (1u << 22))) f |= DSE_CPU_AMX; /* AMX-TILE, AMX-BF16 */
    return f;
}

/* Read once (kept with bit 31 set, which no feature takes, so 0 means not yet): the bf16 ops
 * ask on every call, and under a hypervisor each cpuid traps to it (four cpuids and an xgetbv
 * a call took 14% of v1.0's batch-1 bf16 inference on the 2-core Xeon VM). Two threads asking
 * at once store the same. */
unsigned dse_cpu_features(void) {
    static unsigned known;
    unsigned f = __atomic_load_n(&known, __ATOMIC_ACQUIRE);
    if (!f) {
        f = features_now() | 0x80000000u;
        __atomic_store_n(&known, f, __ATOMIC_RELEASE);
    }
    return f & ~0x80000000u;
}

void dse_cpu_model(char *buf, int size) {
    char line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    buf[0] = '\0';
    while (f && fgets(line, sizeof line, f)) {
        const char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) || !colon) continue;
        colon += 1 + strspn(colon + 1, " \t");
        snprintf(buf, (size_t)size, "%.*s", (int)strcspn(colon, "\n"), colon);
        break;
    }
    if (f) fclose(f);
    for (char *p = buf; *p; p++) /* one line, whatever the kernel says */
        if (*p == '\r' || *p == '\t') *p = ' ';
}

int dse_cpu_features_str(unsigned f, char *buf, int size) {
    static const struct { unsigned bit; const char *name; } names[] = {
        { DSE_CPU_SSE42, "sse4.2" },
        { DSE_CPU_AVX, "avx" },
        { DSE_CPU_AVX2, "avx2+fma" },
        { DSE_CPU_AVX512, "avx512(f,cd,bw,dq,vl)" },
        { DSE_CPU_AVX512BF16, "avx512_bf16" },
        { DSE_CPU_AMX, "amx(tile,bf16)" },
    };
    int n = 0;
    buf[0] = '\0';
    for (int i = 0; i < DSE_ARRAY_LEN(names); i++)
        if (f & names[i].bit) n += snprintf(buf + n, (size_t)(size > n ? size - n : 0), "%s%s", n ? " " : "", names[i].name);
    if (!n) snprintf(buf, (size_t)size, "sse3 or older only");
    return n;
}

const char *dse_blas_pick(unsigned features, int (*has)(const char *sym)) {
    for (int i = 0; i < DSE_ARRAY_LEN(cores); i++)
        if (cores[i].pick && (cores[i].needs & ~features) == 0 && has(cores[i].sym)) return cores[i].name;
    return NULL;
}

int dse_blas_level(const char *core) {
    const struct core *c = core_named(core);
    return c ? c->level : -1;
}

static int lib_has(const char *sym) { return dlsym(RTLD_DEFAULT, sym) != NULL; }

static int can_switch(void) { return gotoblas_dynamic_init && gotoblas_dynamic_quit; }

/* OpenBLAS's selection run again with OPENBLAS_CORETYPE = core (NULL: unset, its own
 * choice); the environment is put back as it was. Its server threads are ended first: one
 * that is still starting when the selection is cleared runs the selection itself (its first
 * buffer), at the same time as this one, and either can then read the table as NULL (a
 * SIGSEGV in gotoblas_dynamic_init seen 2 times in 6,000 starts of dse on a 2-core Xeon with
 * 4 starts at once; 0 in 12,000 with them ended first). The next threaded call starts them
 * again (OpenBLAS's exec_blas, where its server is not up). */
static void reselect(const char *core) {
    if (blas_thread_shutdown_) blas_thread_shutdown_();
    const char *was = getenv("OPENBLAS_CORETYPE");
    char *saved = was ? strdup(was) : NULL;
    if (core)
        setenv("OPENBLAS_CORETYPE", core, 1);
    else
        unsetenv("OPENBLAS_CORETYPE");
    gotoblas_dynamic_quit();
    gotoblas_dynamic_init();
    if (saved)
        setenv("OPENBLAS_CORETYPE", saved, 1);
    else
        unsetenv("OPENBLAS_CORETYPE");
    free(saved);
}

/* A product of odd sizes, both layouts, alpha and beta, against doubles: 0 when right. */
static int sgemm_check(void) {
    enum { M = 37, N = 29, K = 53 };
    float a[M * K], b[K * N], c[M * N], bt[N * K];
    for (int i = 0; i < M * K; i++) a[i] = (float)((i * 7 % 23) - 11) / 8.0f;
    for (int i = 0; i < K * N; i++) b[i] = (float)((i * 5 % 19) - 9) / 4.0f;
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++) bt[j * K + k] = b[k * N + j];
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < M * N; i++) c[i] = 1.0f;
        if (pass == 0)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 0.5f, a, K, b, N, 2.0f, c, N);
        else
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 0.5f, a, K, bt, K, 2.0f, c, N);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double r = 0.0;
                for (int k = 0; k < K; k++) r += (double)a[i * K + k] * b[k * N + j];
                if (fabs(0.5 * r + 2.0 - c[i * N + j]) > 1e-3 * (1.0 + fabs(r))) return -1;
            }
    }
    return 0;
}

const char *dse_blas_decide(const char *detected, unsigned features, const char *user, int (*has)(const char *sym),
                            int can_switch, char *how, int size) {
    const char *best = dse_blas_pick(features, has);
    const int now = dse_blas_level(detected), want = dse_blas_level(best);
    if (user && *user)
        snprintf(how, (size_t)size, "OPENBLAS_CORETYPE=%.40s, set by the user%s%s%s", user,
                 best && dse_blas_level(user) < want ? "; this CPU runs " : "", best && dse_blas_level(user) < want ? best : "",
                 best && dse_blas_level(user) < want ? "'s, faster" : "");
    else if (!best || now < 0)
        snprintf(how, (size_t)size, "OpenBLAS's own choice (a core type dse does not rank)");
    else if (now >= want)
        snprintf(how, (size_t)size, "OpenBLAS's own choice, the best this CPU runs");
    else if (!can_switch)
        snprintf(how, (size_t)size, "OpenBLAS's own choice; %s's would be faster, but this library cannot switch "
                                    "(set OPENBLAS_CORETYPE=%s)", best, best);
    else {
        snprintf(how, (size_t)size, "chosen by dse from the CPU's features; OpenBLAS chose %.31s", detected);
        return best;
    }
    return NULL;
}

static struct dse_blas_info info;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void setup(void) {
    struct dse_blas_info *b = &info;
    const unsigned f = dse_cpu_features();
    dse_strlcpy(b->library, openblas_get_config(), sizeof b->library);
    dse_strlcpy(b->detected, openblas_get_corename(), sizeof b->detected);
    dse_cpu_features_str(f, b->features, sizeof b->features);
    const char *best = dse_blas_pick(f, lib_has);
    dse_strlcpy(b->best, best ? best : "", sizeof b->best);
    const char *to = dse_blas_decide(b->detected, f, getenv("OPENBLAS_CORETYPE"), lib_has, can_switch(), b->how,
                                     sizeof b->how);
    if (to) {
        reselect(to);
        if (strcasecmp(openblas_get_corename(), to) || sgemm_check()) {
            reselect(NULL);
            snprintf(b->how, sizeof b->how, "OpenBLAS's own choice: %s's kernels failed dse's sgemm check", to);
        } else {
            b->switched = 1;
        }
    }
    dse_strlcpy(b->core, openblas_get_corename(), sizeof b->core);
}

const struct dse_blas_info *dse_blas_setup(void) {
    pthread_once(&once, setup);
    return &info;
}

int dse_blas_has(const char *core) {
    const struct core *c = core_named(core);
    return c && can_switch() && lib_has(c->sym);
}

int dse_blas_force(const char *core) {
    dse_blas_setup();
    if (!can_switch()) return -1;
    if (!core) core = info.core;
    reselect(core);
    if (strcasecmp(openblas_get_corename(), core)) return -1;
    return sgemm_check();
}

const char *dse_blas_core(void) { return openblas_get_corename(); }

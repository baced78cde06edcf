/* mm_amx.c: dse_mm_bf16's C = A B on Intel AMX tiles (issue #37 item 4; Sapphire Rapids and
 * later: amx-tile, amx-bf16). The packed operands are already AMX's layout: A's k-pairs
 * [m][kp] are a tile of 16 rows of 16 pairs, B's [kp][n] pairs the "VNNI" rows TDPBF16PS
 * wants. 16 x 16 blocks of C go to the tiles (k in blocks of 16 pairs, a block short of 16
 * or a shifted B (boff) copied zero-padded first), the edges to the AVX512-BF16 kernel.
 *
 * UNTESTED: the development machine (AMD Zen 4) has no AMX and no emulator was at hand. So
 * the tiles run only where the CPU has AMX, Linux grants the process the tile state
 * (arch_prctl ARCH_REQ_XCOMP_PERM) and DSE_CPU_BF16_AMX=1 asks for them; otherwise
 * dse_cpu_bf16_isa() never returns DSE_CPU_BF16_AMX. TDPBF16PS's order of additions is not
 * vdpbf16ps's, so its bits differ from the reference's; test_engine_cpu bf16-amx holds it to
 * the bf16 error bound against double where it can run. */
#define _DEFAULT_SOURCE /* syscall(2), for arch_prctl, which glibc does not wrap */
#include "engine/cpu/bf16_impl.h"

#include <stdlib.h>

#if defined(DSE_CPU_HAS_AVX2_CODE) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>

#define DSE_CPU_HAS_AMX_CODE 1
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

/* Linux grants a process AMX's tile state only on request; asked once (a repeated request
 * is harmless), the answer kept: 1 granted, -1 refused, 0 not asked yet. */
static int tile_permission(void) {
    static int state;
    int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (!s) {
        s = syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0 ? 1 : -1;
        __atomic_store_n(&state, s, __ATOMIC_RELEASE);
    }
    return s > 0;
}
#endif

int dse_cpu_bf16_amx_ok(void) {
#ifdef DSE_CPU_HAS_AMX_CODE
    const char *on = getenv("DSE_CPU_BF16_AMX");
    if (!on || strcmp(on, "1") || dse_cpu_bf16_why()) return 0;
    /* cpuid and the OS's state (dse_cpu_features): clang 14's __builtin_cpu_supports knows no AMX */
    if (!(dse_cpu_features() & DSE_CPU_AMX)) return 0;
    return tile_permission();
#else
    return 0;
#endif
}

#ifdef DSE_CPU_HAS_AMX_CODE

#define TAMX __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512vl,avx512bf16")))

/* The tile configuration (palette 1): tile 0 C, 1 A, 2 B, each 16 rows of 64 bytes. */
struct tilecfg {
    uint8_t  palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t  rows[16];
};

/* C's 16 x 16 block at (m0, n0): k-blocks of 16 pairs in order, summed in tile 0; then
 * stored, and (not acc) + bias, ReLU. abuf, bbuf: 256 words each, for a short k-block or a
 * shifted B. */
TAMX static void amx_block(const struct dse_mm_bf16 *p, int64_t m0, int64_t n0, uint32_t *abuf, uint32_t *bbuf) {
    float *c = p->c + m0 * p->ldc + n0;
    if (p->acc) _tile_loadd(0, c, p->ldc * (int64_t)sizeof(float));
    else _tile_zero(0);
    for (int64_t k0 = 0; k0 < p->KP; k0 += 16) {
        const int64_t kn = p->KP - k0 < 16 ? p->KP - k0 : 16;
        const uint32_t *a = p->ap + m0 * p->lda + k0;
        if (kn == 16 && !p->boff) {
            _tile_loadd(1, a, p->lda * (int64_t)sizeof(uint32_t));
            _tile_loadd(2, p->bp + k0 * p->ldb + n0, p->ldb * (int64_t)sizeof(uint32_t));
        } else {
            for (int r = 0; r < 16; r++)
                for (int k = 0; k < 16; k++) abuf[r * 16 + k] = k < kn ? a[r * p->lda + k] : 0;
            for (int k = 0; k < 16; k++) {
                const uint32_t *row = k < kn ? p->bp + (p->boff ? p->boff[k0 + k] : (k0 + k) * p->ldb) + n0 : NULL;
                for (int n = 0; n < 16; n++) bbuf[k * 16 + n] = row ? row[n] : 0;
            }
            _tile_loadd(1, abuf, 64);
            _tile_loadd(2, bbuf, 64);
        }
        _tile_dpbf16ps(0, 1, 2);
    }
    _tile_stored(0, c, p->ldc * (int64_t)sizeof(float));
    if (p->acc || (!p->bias && !p->relu)) return;
    for (int r = 0; r < 16; r++) {
        __m512 v = _mm512_loadu_ps(c + r * p->ldc);
        if (p->bias) v = _mm512_add_ps(v, _mm512_set1_ps(p->bias[m0 + r]));
        if (p->relu) v = _mm512_max_ps(v, _mm512_setzero_ps());
        _mm512_storeu_ps(c + r * p->ldc, v);
    }
}

TAMX static void amx_tiles(const struct dse_mm_bf16 *p, int64_t M16, int64_t N16) {
    struct tilecfg cfg;
    uint32_t abuf[256], bbuf[256];
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 3; t++) cfg.rows[t] = 16, cfg.colsb[t] = 64;
    _tile_loadconfig(&cfg);
    for (int64_t m0 = 0; m0 < M16; m0 += 16)
        for (int64_t n0 = 0; n0 < N16; n0 += 16) amx_block(p, m0, n0, abuf, bbuf);
    _tile_release();
}

#endif /* DSE_CPU_HAS_AMX_CODE */

void dse_cpu_mm_amx(const struct dse_mm_bf16 *p) {
    const int64_t M16 = p->M / 16 * 16, N16 = p->N / 16 * 16;
#ifdef DSE_CPU_HAS_AMX_CODE
    if (M16 && N16 && p->KP > 0) amx_tiles(p, M16, N16);
    const int64_t done_m = p->KP > 0 ? M16 : 0, done_n = p->KP > 0 ? N16 : 0;
#else
    const int64_t done_m = 0, done_n = 0;
    (void)M16, (void)N16;
#endif
    struct dse_mm_bf16 e = *p; /* the edges: rows past the tiles, then their columns past */
    if (done_m < p->M) {
        e.M = p->M - done_m, e.ap = p->ap + done_m * p->lda, e.c = p->c + done_m * p->ldc;
        e.bias = p->bias ? p->bias + done_m : NULL;
        dse_cpu_mm_bf16(&e, DSE_CPU_BF16_AVX512);
    }
    if (done_m > 0 && done_n < p->N) {
        e = *p;
        e.M = done_m, e.N = p->N - done_n, e.bp = p->bp + done_n, e.c = p->c + done_n;
        dse_cpu_mm_bf16(&e, DSE_CPU_BF16_AVX512);
    }
}

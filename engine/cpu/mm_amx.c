/* mm_amx.c: the bf16 products on Intel AMX tiles (issue #37; Sapphire Rapids and later:
 * amx-tile, amx-bf16), 32 x 32 blocks of C in four tiles, A's two row blocks and B's two
 * column blocks in the other four (TDPBF16PS: 16 x 16 outputs of 16 pairs an instruction).
 * C = A B (dse_mm_bf16): B's k-pairs loaded as they lie where a block is whole, and through
 * a panel of 32 columns (64 KiB at most, in L2 while every row block of A passes over it)
 * where they are shifted rows (boff, the direct convs) or the last columns; a short last
 * k-block of B through a 16-row copy, of A zero-padded once a call. The weight gradients' dot
 * products (dse_mm_nt_bf16): B's rows turned into pairs along l by 16 x 16 transposes into
 * the panel, A's rows loaded as they are. Rows past the last multiple of 16 run on tiles of
 * that many rows, so every output runs on the tiles whatever block of rows a caller passes.
 *
 * The tiles run where the CPU has AMX, Linux grants the process the tile state (arch_prctl
 * ARCH_REQ_XCOMP_PERM) and DSE_CPU_BF16_AMX is not 0 (which asks for AVX512-BF16 alone).
 * TDPBF16PS's order of additions is not vdpbf16ps's, so its bits differ from the
 * reference's (the same with any number of threads: every product is the same call, and an
 * output's chain does not depend on the rows and columns beside it): test_engine_cpu
 * bf16-amx holds it to the bf16 error bound against double. First run on a 2-core Xeon with
 * AMX on 2026-11-29. Scratch on the stack, about 100 KiB (glibc's threads get 8 MiB). */
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
    if ((on && !strcmp(on, "0")) || dse_cpu_bf16_why()) return 0;
    /* cpuid and the OS's state (dse_cpu_features): clang 14's __builtin_cpu_supports knows no AMX */
    if (!(dse_cpu_features() & DSE_CPU_AMX)) return 0;
    return tile_permission();
#else
    return 0;
#endif
}

#ifdef DSE_CPU_HAS_AMX_CODE

#define TAMX __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512vl,avx512bf16")))

/* The tile configuration (palette 1): tiles 0-3 a 32 x 32 block of C (0 top left, 1 top
 * right, 2 bottom left, 3 bottom right), 4-5 A's two row blocks, 6-7 B's two column blocks;
 * each 16 rows of 64 bytes. */
struct tilecfg {
    uint8_t  palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t  rows[16];
};

/* tr rows in the tiles of C and A (16, or the rows past the last multiple of 16: those run on
 * the tiles too, so no output's bits depend on where a caller's block of rows begins). */
TAMX static void tiles_on(int tr) {
    struct tilecfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; t++) cfg.rows[t] = (uint8_t)(t < 6 ? tr : 16), cfg.colsb[t] = 64;
    _tile_loadconfig(&cfg);
}

/* Panels: B's k-pairs for 32 columns, PANEL_KB blocks of 16 pairs at a time (64 KiB, on the
 * stack: L2-resident while every row block of A passes over it). */
#define PANEL_KB 32
#define PANEL_WORDS (PANEL_KB * 16 * 32)

/* The 32 x 32 block of C at (m0, n0), mt row blocks and nt column blocks of 16 (1 or 2),
 * at cb (ldcb floats apart): from C (acc) or zero, += A's rows [m0, m0 + 16 mt) times kb
 * blocks of 16 k-pairs of B (A's pairs [m][k0 + 16 b + j], lda apart; the last block from
 * at (16 words a row) when at is not NULL; B's rows of 32 columns at bs, ldbs words apart:
 * a panel's, or B's own, the last block's from bt (32 words a row) when bt is not NULL). */
TAMX static void block(const uint32_t *a, int64_t lda, const uint32_t *at, const uint32_t *bs, int64_t ldbs,
                       const uint32_t *bt, int64_t kb, int mt, int nt, int acc, float *cb, int64_t ldcb) {
    const int64_t sc = ldcb * (int64_t)sizeof(float), sa = lda * (int64_t)sizeof(uint32_t);
    const int64_t sb = ldbs * (int64_t)sizeof(uint32_t);
    if (acc) {
        _tile_loadd(0, cb, sc);
        if (nt > 1) _tile_loadd(1, cb + 16, sc);
        if (mt > 1) _tile_loadd(2, cb + 16 * ldcb, sc);
        if (mt > 1 && nt > 1) _tile_loadd(3, cb + 16 * ldcb + 16, sc);
    } else {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
    }
    for (int64_t b = 0; b < kb; b++) {
        if (at && b == kb - 1) {
            _tile_loadd(4, at, 64);
            if (mt > 1) _tile_loadd(5, at + 16 * 16, 64);
        } else {
            _tile_loadd(4, a + 16 * b, sa);
            if (mt > 1) _tile_loadd(5, a + 16 * lda + 16 * b, sa);
        }
        const uint32_t *bb = bt && b == kb - 1 ? bt : bs + b * 16 * ldbs;
        const int64_t sbb = bt && b == kb - 1 ? 128 : sb;
        _tile_loadd(6, bb, sbb);
        _tile_dpbf16ps(0, 4, 6);
        if (mt > 1) _tile_dpbf16ps(2, 5, 6);
        if (nt > 1) {
            _tile_loadd(7, bb + 16, sbb);
            _tile_dpbf16ps(1, 4, 7);
            if (mt > 1) _tile_dpbf16ps(3, 5, 7);
        }
    }
    _tile_stored(0, cb, sc);
    if (nt > 1) _tile_stored(1, cb + 16, sc);
    if (mt > 1) _tile_stored(2, cb + 16 * ldcb, sc);
    if (mt > 1 && nt > 1) _tile_stored(3, cb + 16 * ldcb + 16, sc);
}

/* + bias[r], then ReLU, on rows x nv floats of C (ld apart): a block's, while it is in L1. */
TAMX static void epilogue(float *c, int64_t ld, int rows, int64_t nv, const float *bias, int relu) {
    const __mmask16 m0 = dse_cpu_lanes16(nv), m1 = dse_cpu_lanes16(nv - 16);
    for (int r = 0; r < rows; r++)
        for (int h = 0; h < 2; h++) {
            float *x = c + r * ld + 16 * h;
            const __mmask16 mk = h ? m1 : m0;
            __m512 v = _mm512_maskz_loadu_ps(mk, x);
            if (bias) v = _mm512_add_ps(v, _mm512_set1_ps(bias[r]));
            if (relu) v = _mm512_max_ps(v, _mm512_setzero_ps());
            _mm512_mask_storeu_ps(x, mk, v);
        }
}

/* rows x nv floats between C (ldc apart) and a 32-wide scratch: to it (in) or back. */
TAMX static void edge_copy(float *c, int64_t ldc, float *e, int rows, int64_t nv, int in) {
    const __mmask16 m0 = dse_cpu_lanes16(nv), m1 = dse_cpu_lanes16(nv - 16);
    for (int r = 0; r < rows; r++) {
        float *x = c + r * ldc, *y = e + r * 32;
        if (in) {
            _mm512_storeu_ps(y, _mm512_maskz_loadu_ps(m0, x));
            _mm512_storeu_ps(y + 16, _mm512_maskz_loadu_ps(m1, x + 16));
        } else {
            _mm512_mask_storeu_ps(x, m0, _mm512_loadu_ps(y));
            _mm512_mask_storeu_ps(x + 16, m1, _mm512_loadu_ps(y + 16));
        }
    }
}

/* The 32-column panel at n0 of C = A B's k-pairs [k0, k0 + 16 kb): rows past KP and columns
 * past N zero. */
TAMX static void panel_mm(const struct dse_mm_bf16 *p, int64_t n0, int64_t k0, int64_t kb, uint32_t *pan) {
    const int64_t nv = p->N - n0;
    const __mmask16 m0 = dse_cpu_lanes16(nv), m1 = dse_cpu_lanes16(nv - 16);
    for (int64_t k = k0; k < k0 + 16 * kb; k++) {
        uint32_t *o = pan + (k - k0) * 32;
        if (k >= p->KP) {
            _mm512_storeu_si512(o, _mm512_setzero_si512());
            _mm512_storeu_si512(o + 16, _mm512_setzero_si512());
            continue;
        }
        const uint32_t *row = p->bp + (p->boff ? p->boff[k] : k * p->ldb) + n0;
        _mm512_storeu_si512(o, _mm512_maskz_loadu_epi32(m0, row));
        _mm512_storeu_si512(o + 16, _mm512_maskz_loadu_epi32(m1, row + 16));
    }
}

/* A's rows [m0, m0 + rows) at pairs [k0, KP), zero past KP to 16: the last, short k-block. */
TAMX static void a_tail(const struct dse_mm_bf16 *p, int64_t m0, int rows, int64_t k0, uint32_t *at) {
    const __mmask16 mk = dse_cpu_lanes16(p->KP - k0);
    for (int r = 0; r < rows; r++)
        _mm512_storeu_si512(at + r * 16, _mm512_maskz_loadu_epi32(mk, p->ap + (m0 + r) * p->lda + k0));
}

/* A's short last k-block kept for this many rows at once (32 KiB), else taken per block. */
#define TAIL_ROWS 512

/* C = A B (+ bias, ReLU) or C += A B on rows [mlo, mhi), tr rows a tile (16, or all of them
 * when fewer): for each 32 columns and each PANEL_KB blocks of k-pairs, B's blocks (their
 * own rows or the panel), then every 32 rows of A over them. */
TAMX static void amx_mm(const struct dse_mm_bf16 *p, int64_t mlo, int64_t mhi, int tr) {
    uint32_t pan[PANEL_WORDS] __attribute__((aligned(64))), at[TAIL_ROWS * 16] __attribute__((aligned(64)));
    uint32_t bt[16 * 32] __attribute__((aligned(64)));
    float edge[32 * 32] __attribute__((aligned(64)));
    const int64_t KB = (p->KP + 15) / 16;
    const int short_k = p->KP % 16 != 0, tail_once = short_k && tr == 16 && mhi - mlo <= TAIL_ROWS;
    tiles_on(tr);
    if (tail_once) a_tail(p, mlo, (int)(mhi - mlo), 16 * (KB - 1), at);
    for (int64_t n0 = 0; n0 < p->N; n0 += 32) {
        const int64_t nv = p->N - n0 < 32 ? p->N - n0 : 32;
        const int nt = nv > 16 ? 2 : 1;
        for (int64_t b0 = 0; b0 < KB; b0 += PANEL_KB) {
            const int64_t kb = KB - b0 < PANEL_KB ? KB - b0 : PANEL_KB;
            const int last = b0 + kb == KB, acc = p->acc || b0 > 0;
            /* whole blocks of B's own rows are loaded as they lie (a short last one through bt);
               shifted rows and the last columns through the panel */
            const int own = !p->boff && nv == 32;
            if (!own) panel_mm(p, n0, 16 * b0, kb, pan);
            else if (last && short_k) panel_mm(p, n0, 16 * (KB - 1), 1, bt);
            const uint32_t *bs = own ? p->bp + 16 * b0 * p->ldb + n0 : pan;
            const int64_t ldbs = own ? p->ldb : 32;
            for (int64_t m0 = mlo; m0 < mhi; m0 += 32) {
                const int mt = tr == 16 && mhi - m0 >= 32 ? 2 : 1, rows = tr == 16 ? 16 * mt : tr;
                if (last && short_k && !tail_once) a_tail(p, m0, rows, 16 * (KB - 1), at);
                float *c = p->c + m0 * p->ldc + n0;
                if (nv < 32 && acc) edge_copy(c, p->ldc, edge, rows, nv, 1);
                float *cb = nv < 32 ? edge : c;
                const int64_t ldcb = nv < 32 ? 32 : p->ldc;
                block(p->ap + m0 * p->lda + 16 * b0, p->lda,
                      last && short_k ? at + (tail_once ? (m0 - mlo) * 16 : 0) : NULL, bs, ldbs,
                      own && last && short_k ? bt : NULL, kb, mt, nt, acc, cb, ldcb);
                if (last && !p->acc && (p->bias || p->relu))
                    epilogue(cb, ldcb, rows, nv, p->bias ? p->bias + m0 : NULL, p->relu);
                if (nv < 32) edge_copy(c, p->ldc, edge, rows, nv, 0);
            }
        }
    }
    _tile_release();
}

/* 16 x 16 words turned: r[i][j] becomes r[j][i]. */
TAMX static void turn16(__m512i r[16]) {
    __m512i t[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
        r[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
        r[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
        r[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
        r[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
    }
    for (int i = 0; i < 16; i += 8)
        for (int j = 0; j < 4; j++) {
            t[i + j] = _mm512_shuffle_i32x4(r[i + j], r[i + j + 4], 0x88);
            t[i + j + 4] = _mm512_shuffle_i32x4(r[i + j], r[i + j + 4], 0xdd);
        }
    for (int j = 0; j < 8; j++) {
        r[j] = _mm512_shuffle_i32x4(t[j], t[j + 8], 0x88);
        r[j + 8] = _mm512_shuffle_i32x4(t[j], t[j + 8], 0xdd);
    }
}

/* The 32-column panel at n0 of the dot products' B for image i, pairs [k0, k0 + 16 kb) of
 * each row (l = 2 k, 2 k + 1): pan[k][j] = row n0 + j's pair k, by 16 x 16 turns; rows past N
 * zero. */
TAMX static void panel_nt(const struct dse_mm_nt_bf16 *p, int64_t i, int64_t n0, int64_t k0, int64_t kb,
                          uint32_t *pan) {
    for (int h = 0; h < 2; h++) {
        const dse_bf16 *row[16];
        for (int j = 0; j < 16; j++) {
            const int64_t n = n0 + 16 * h + j;
            row[j] = n < p->N ? p->b + i * p->b_is + (p->boff ? p->boff[n] : n * p->ldb) : NULL;
        }
        for (int64_t b = 0; b < kb; b++) {
            __m512i r[16];
            for (int j = 0; j < 16; j++)
                r[j] = row[j] ? _mm512_loadu_si512(row[j] + 2 * (k0 + 16 * b)) : _mm512_setzero_si512();
            turn16(r);
            for (int k = 0; k < 16; k++) _mm512_storeu_si512(pan + (16 * b + k) * 32 + 16 * h, r[k]);
        }
    }
}

/* The dot products of dse_mm_nt_bf16 on rows [mlo, mhi), tr rows a tile: A's rows are pairs
 * along l as they are (L a multiple of 32: whole blocks of 16 pairs), B's turned into panels;
 * each block of C summed over the images and l in the tiles, from zero (set) or from C. */
TAMX static void amx_nt(const struct dse_mm_nt_bf16 *p, int64_t mlo, int64_t mhi, int tr) {
    uint32_t pan[PANEL_WORDS] __attribute__((aligned(64)));
    float edge[32 * 32] __attribute__((aligned(64)));
    const int64_t KB = p->L / 32, lda = p->lda / 2;
    tiles_on(tr);
    for (int64_t i = 0; i < p->imgs; i++)
        for (int64_t b0 = 0; b0 < KB; b0 += PANEL_KB) {
            const int64_t kb = KB - b0 < PANEL_KB ? KB - b0 : PANEL_KB;
            const int acc = !p->set || i > 0 || b0 > 0;
            for (int64_t n0 = 0; n0 < p->N; n0 += 32) {
                const int64_t nv = p->N - n0 < 32 ? p->N - n0 : 32;
                const int nt = nv > 16 ? 2 : 1;
                panel_nt(p, i, n0, 16 * b0, kb, pan);
                for (int64_t m0 = mlo; m0 < mhi; m0 += 32) {
                    const int mt = tr == 16 && mhi - m0 >= 32 ? 2 : 1, rows = tr == 16 ? 16 * mt : tr;
                    const uint32_t *a = (const uint32_t *)(const void *)(p->a + i * p->a_is + m0 * p->lda) + 16 * b0;
                    float *c = p->c + m0 * p->ldc + n0;
                    if (nv < 32 && acc) edge_copy(c, p->ldc, edge, rows, nv, 1);
                    block(a, lda, NULL, pan, 32, NULL, kb, mt, nt, acc, nv < 32 ? edge : c, nv < 32 ? 32 : p->ldc);
                    if (nv < 32) edge_copy(c, p->ldc, edge, rows, nv, 0);
                }
            }
        }
    _tile_release();
}

#endif /* DSE_CPU_HAS_AMX_CODE */

void dse_cpu_mm_amx(const struct dse_mm_bf16 *p) {
#ifdef DSE_CPU_HAS_AMX_CODE
    if (p->KP > 0) { /* whole tiles of rows, then the rest on tiles of fewer rows */
        const int64_t M16 = p->M / 16 * 16;
        if (M16) amx_mm(p, 0, M16, 16);
        if (M16 < p->M) amx_mm(p, M16, p->M, (int)(p->M - M16));
        return;
    }
#endif
    dse_cpu_mm_bf16(p, DSE_CPU_BF16_AVX512); /* nothing to multiply (C, bias and ReLU), or no AMX code */
}

int dse_cpu_mm_nt_amx(const struct dse_mm_nt_bf16 *p) {
#ifdef DSE_CPU_HAS_AMX_CODE
    /* A's rows read as words: its rows and images must begin on pairs */
    if (p->lda % 2 == 0 && p->a_is % 2 == 0 && ((uintptr_t)(const void *)p->a & 3u) == 0) {
        const int64_t M16 = p->M / 16 * 16;
        if (M16) amx_nt(p, 0, M16, 16);
        if (M16 < p->M) amx_nt(p, M16, p->M, (int)(p->M - M16));
        return 1;
    }
#endif
    (void)p;
    return 0;
}

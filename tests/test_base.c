/* test_base.c: status names, error records and string helpers. */
#include "base/base.h"

#include <stdlib.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>

#include "base/fs.h"
#include "base/pb.h"
#include "base/pcg32.h"
#include "tests/check.h"
#include "tests/testfs.h"

static void test_errors(void) {
    struct dse_err err = { 0 };
    char buf[300];
    CHECK_INT_EQ(dse_err_set(&err, DSE_ERR_CONFIG, "a.cfg", 7, "bad %s = %d", "x", 3), DSE_ERR_CONFIG);
    CHECK_STR_EQ(dse_err_format(&err, buf, sizeof buf), "a.cfg:7: bad x = 3");
    err.line = 0;
    CHECK_STR_EQ(dse_err_format(&err, buf, sizeof buf), "a.cfg: bad x = 3");
    dse_err_set(&err, DSE_ERR_CONFIG, NULL, 7, "bad x = 3");
    CHECK_STR_EQ(dse_err_format(&err, buf, sizeof buf), "bad x = 3");
    CHECK_INT_EQ(dse_err_set(NULL, DSE_ERR_IO, NULL, 0, "ignored"), DSE_ERR_IO);
    CHECK_STR_EQ(dse_status_str(DSE_ERR_SHAPE), "shape error");
    CHECK_STR_EQ(dse_status_str((enum dse_status)99), "unknown status");
    CHECK_INT_EQ(dse_err_layer(&err, DSE_ERR_SHAPE, "n.cfg", 4, "conv1", "conv", "kernel %d > %d", 9, 8),
                 DSE_ERR_SHAPE);
    CHECK_STR_EQ(dse_err_format(&err, buf, sizeof buf), "n.cfg:4: layer 'conv1' (conv): kernel 9 > 8");
}

/* The record owns its file (issue #31): a path built in a buffer that then changes or goes
 * (a returning frame's local) is still named right; "" is none; a file is added only to a
 * record that names none; the arguments may be the record's own text; a path too long is cut. */
static void test_error_owns_file(void) {
    struct dse_err err = { 0 };
    char path[64], buf[700];
    snprintf(path, sizeof path, "out/%s", "sweep.txt");
    dse_err_set(&err, DSE_ERR_IO, path, 0, "cannot create");
    memset(path, 'x', sizeof path - 1);
    CHECK_STR_EQ(err.file, "out/sweep.txt");
    dse_err_name_file(&err, "other.cfg");
    CHECK_STR_EQ(dse_err_format(&err, buf, sizeof buf), "out/sweep.txt: cannot create");
    dse_err_set(&err, DSE_ERR_CONFIG, NULL, 4, "bad");
    CHECK_STR_EQ(err.file, "");
    dse_err_name_file(&err, "net.cfg");
    dse_err_name_file(NULL, "net.cfg");
    CHECK_STR_EQ(dse_err_format(&err, buf, sizeof buf), "net.cfg:4: bad");
    dse_err_set(&err, err.code, err.file, err.line + 1, "%s (%s)", err.msg, err.file);
    CHECK_STR_EQ(dse_err_format(&err, buf, sizeof buf), "net.cfg:5: bad (net.cfg)");
    char *long_path = malloc(DSE_ERR_FILE_MAX + 10);
    CHECK(long_path != NULL);
    if (!long_path) return;
    memset(long_path, 'a', DSE_ERR_FILE_MAX + 9);
    long_path[DSE_ERR_FILE_MAX + 9] = '\0';
    dse_err_set(&err, DSE_ERR_IO, long_path, 0, "x");
    CHECK_INT_EQ((int)strlen(err.file), DSE_ERR_FILE_MAX - 1);
    CHECK(!strncmp(err.file, long_path, DSE_ERR_FILE_MAX - 1));
    free(long_path);
}

static void test_strings(void) {
    char small[4];
    CHECK_INT_EQ(dse_strlcpy(small, "abc", 4), 0);
    CHECK_STR_EQ(small, "abc");
    CHECK_INT_EQ(dse_strlcpy(small, "abcd", 4), -1);
    CHECK_STR_EQ(small, "abc");
    CHECK_INT_EQ(dse_edit_distance("stride", "strid"), 1);
    CHECK_INT_EQ(dse_edit_distance("pct3x3", "pct3x33"), 1);
    CHECK_INT_EQ(dse_edit_distance("kernel", "kernel"), 0);
    CHECK_INT_EQ(dse_edit_distance("", "abc"), 3);
    char sug[16];
    CHECK_INT_EQ(dse_word_index("  name type  inputs ", "inputs"), 2);
    CHECK_INT_EQ(dse_word_index("name type", "nam"), -1);
    CHECK_INT_EQ(dse_word_index("", "x"), -1);
    CHECK_INT_EQ(dse_word_suggest("kernel stride pad", "strid", sug, sizeof sug), 1);
    CHECK_STR_EQ(sug, "stride");
    CHECK_INT_EQ(dse_word_suggest("kernel stride pad", "dilation", sug, sizeof sug), 0);
    CHECK_STR_EQ(sug, "");
}

/* dse_name_*: the enum name tables. Index 1 has no name (a hole), as in a table whose
 * first value is a "none" placeholder. */
static void test_names(void) {
    static const char *const names[] = { [0] = "fp32", [1] = "", [2] = "fp16", [3] = "bf16" };
    static const struct { const char *s; int want; } finds[] = {
        { "fp32", 0 }, { "fp16", 2 }, { "bf16", 3 }, { "", -1 }, { "FP32", -1 }, { "fp3", -1 }, { NULL, -1 },
    };
    for (size_t i = 0; i < DSE_ARRAY_LEN(finds); i++)
        CHECK_INT_EQ(dse_name_find(names, 4, finds[i].s), finds[i].want);
    CHECK_STR_EQ(dse_name_of(names, 4, 2, "?"), "fp16");
    CHECK_STR_EQ(dse_name_of(names, 4, 1, "?"), "?");
    CHECK_STR_EQ(dse_name_of(names, 4, 4, "?"), "?");
    CHECK_STR_EQ(dse_name_of(names, 4, -1, "?"), "?");
    char buf[64], sug[16];
    CHECK_STR_EQ(dse_name_list(names, 4, buf, sizeof buf), "fp32, fp16 or bf16");
    CHECK_STR_EQ(dse_name_list(names, 1, buf, sizeof buf), "fp32");
    CHECK_INT_EQ(dse_name_suggest(names, 4, "fp166", sug, sizeof sug), 1);
    CHECK_STR_EQ(sug, "fp16");
    CHECK_INT_EQ(dse_name_suggest(names, 4, "double", sug, sizeof sug), 0);
    CHECK_STR_EQ(sug, "");
    struct dse_err err;
    int v = -1;
    CHECK_OK(dse_name_parse(names, 4, "precision", "bf16", &v, &err));
    CHECK_INT_EQ(v, 3);
    CHECK_INT_EQ(dse_name_parse(names, 4, "precision", "fp8", &v, &err), DSE_ERR_CONFIG);
    CHECK_STR_EQ(err.msg, "precision 'fp8' is not known; expected fp32, fp16 or bf16");
    CHECK_INT_EQ(v, 3);
}

/* The reference output of pcg32-demo (pcg-c-basic): seed 42, stream 54. */
static void test_pcg32(void) {
    static const uint32_t want[6] = { 0xa15c02b7, 0x7b47f409, 0xba1d3330,
                                      0x83d2f293, 0xbfa4784b, 0xcbed606e };
    struct dse_pcg32 r;
    dse_pcg32_seed(&r, 42u, 54u);
    for (int i = 0; i < 6; i++) CHECK_INT_EQ(dse_pcg32_next(&r), want[i]);
    /* bounded draws stay in range and cover it */
    int seen[7] = { 0 };
    for (int i = 0; i < 700; i++) {
        uint32_t v = dse_pcg32_bounded(&r, 7);
        CHECK(v < 7);
        if (v < 7) seen[v]++;
    }
    for (int i = 0; i < 7; i++) CHECK(seen[i] > 50);
    for (int i = 0; i < 100; i++) CHECK(dse_pcg32_bounded64(&r, 30000000000ULL) < 30000000000ULL);
}

static void test_fnv(void) {
    /* FNV-1a 64 test vectors (Fowler/Noll/Vo): "" and "a" and "foobar" */
    CHECK(dse_fnv1a64(DSE_FNV64_INIT, "", 0) == 0xcbf29ce484222325ULL);
    CHECK(dse_fnv1a64(DSE_FNV64_INIT, "a", 1) == 0xaf63dc4c8601ec8cULL);
    CHECK(dse_fnv1a64(DSE_FNV64_INIT, "foobar", 6) == 0x85944171f73967e8ULL);
}

static int bytes_eq(const struct dse_pb *w, const char *hex) {
    char got[256] = "";
    for (size_t i = 0; i < w->len && 2 * i + 3 < sizeof got; i++) snprintf(got + 2 * i, 3, "%02x", w->buf[i]);
    if (strcmp(got, hex)) fprintf(stderr, "pb bytes %s, expected %s\n", got, hex);
    return !strcmp(got, hex);
}

/* The wire format's own examples (protobuf.dev, "Encoding"): 150 as field 1, the string
 * "testing" as field 2, a message holding field 1 = 150 as field 3, packed 3, 270, 86942
 * as field 4; then a message longer than 127 bytes (a two-byte length) inside another, and
 * everything read back. */
static void test_pb(void) {
    struct dse_pb w;
    struct dse_err err = { 0 };
    dse_pb_init(&w);
    dse_pb_varint(&w, 1, 150);
    CHECK(bytes_eq(&w, "089601"));
    w.len = 0;
    dse_pb_string(&w, 2, "testing");
    CHECK(bytes_eq(&w, "120774657374696e67"));
    w.len = 0;
    dse_pb_begin(&w, 3);
    dse_pb_varint(&w, 1, 150);
    dse_pb_end(&w);
    CHECK(bytes_eq(&w, "1a03089601"));
    w.len = 0;
    const int64_t packed[3] = { 3, 270, 86942 };
    dse_pb_packed_varints(&w, 4, packed, 3);
    CHECK(bytes_eq(&w, "2206038e029ea705"));
    w.len = 0;
    dse_pb_float(&w, 2, 1.0f);
    CHECK(bytes_eq(&w, "150000803f"));
    w.len = 0;

    float v[40];
    for (int i = 0; i < 40; i++) v[i] = (float)i * 0.5f;
    dse_pb_begin(&w, 7);
    dse_pb_string(&w, 1, "outer");
    dse_pb_begin(&w, 100);
    dse_pb_packed_floats(&w, 5, v, 40); /* 160 bytes: the inner length takes two bytes */
    dse_pb_varint(&w, 3, (uint64_t)-1); /* ten bytes */
    dse_pb_end(&w);
    dse_pb_end(&w);
    CHECK_OK(dse_pb_finish(&w, &err));

    struct dse_pb_reader r, in, inner;
    struct dse_pb_field f, g;
    dse_pb_reader_init(&r, w.buf, w.len);
    CHECK_INT_EQ(dse_pb_next(&r, &f), 1);
    CHECK_INT_EQ(f.field, 7);
    CHECK_INT_EQ(f.wire, DSE_PB_LEN);
    CHECK_INT_EQ(f.len, w.len - 3); /* tag and a two-byte length */
    CHECK_INT_EQ(dse_pb_next(&r, &g), 0);
    dse_pb_reader_init(&in, f.data, f.len);
    CHECK_INT_EQ(dse_pb_next(&in, &g), 1);
    CHECK(g.field == 1 && g.len == 5 && !memcmp(g.data, "outer", 5));
    CHECK_INT_EQ(dse_pb_next(&in, &g), 1);
    CHECK_INT_EQ(g.field, 100);
    dse_pb_reader_init(&inner, g.data, g.len);
    CHECK_INT_EQ(dse_pb_next(&inner, &f), 1);
    float back[40];
    size_t n = 0;
    CHECK_INT_EQ(dse_pb_floats(&f, back, 40, &n), 0);
    CHECK_INT_EQ(n, 40);
    CHECK(!memcmp(back, v, sizeof v));
    n = 0;
    CHECK_INT_EQ(dse_pb_floats(&f, back, 39, &n), -1); /* does not fit */
    CHECK_INT_EQ(dse_pb_next(&inner, &f), 1);
    CHECK(f.field == 3 && f.wire == DSE_PB_VARINT && f.v == UINT64_MAX);
    CHECK_INT_EQ(dse_pb_next(&inner, &f), 0);
    CHECK_INT_EQ(dse_pb_next(&in, &g), 0);

    /* malformed: a length past the end, an unterminated varint, a group, field 0 */
    static const struct { const char *bytes; size_t len; } bad[] = {
        { "\x0a\x05" "abc", 5 }, { "\x08\x80\x80", 3 }, { "\x0b", 1 }, { "\x00\x01", 2 }, { "\x0f\x00", 2 },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(bad); i++) {
        dse_pb_reader_init(&r, bad[i].bytes, bad[i].len);
        CHECK_INT_EQ(dse_pb_next(&r, &f), -1);
    }
    /* unbalanced writes are reported, not written */
    w.len = 0;
    dse_pb_begin(&w, 1);
    CHECK_INT_EQ(dse_pb_finish(&w, &err), DSE_ERR_INTERNAL);
    dse_pb_free(&w);
}

/* dse_pb_next's inline path (keys of one or two bytes, a value or length of one) reads
 * what dse_pb_next_any reads, field for field, to the same end: the edges by hand (a
 * length that ends at the last byte or one past it, a two-byte key, a non-canonical one,
 * a key byte alone at the end), then a million short messages of PCG32 bytes. */
static int pb_same(const uint8_t *b, size_t n) {
    struct dse_pb_reader r1, r2;
    struct dse_pb_field f1, f2;
    dse_pb_reader_init(&r1, b, n);
    dse_pb_reader_init(&r2, b, n);
    for (;;) {
        int a = dse_pb_next(&r1, &f1), c = dse_pb_next_any(&r2, &f2);
        if (a != c) return 0;
        if (a != 1) return 1;
        if (f1.field != f2.field || f1.wire != f2.wire || f1.v != f2.v || f1.data != f2.data || f1.len != f2.len ||
            r1.p != r2.p)
            return 0;
    }
}

static void test_pb_fast(void) {
    static const struct { const char *bytes; size_t len; int fields; } cases[] = {
        { "\x0a\x02" "ab", 4, 1 },         /* LEN ending at the last byte */
        { "\x0a\x03" "ab", 4, -1 },        /* one past it */
        { "\xa0\x01\x05", 3, 1 },         /* field 20 (AttributeProto's type): a two-byte key */
        { "\x88\x00\x05", 3, 1 },         /* field 1 in two bytes (not canonical, still read) */
        { "\xfa\x7f\x01" "x", 4, 1 },     /* field 2047, LEN */
        { "\x08\x05\x88", 3, -1 },        /* a key byte alone at the end */
        { "\x08\x96\x01\x10\x7f", 5, 2 }, /* a two-byte value (the other path), then one */
        { "\x82\x80\x01\x00", 4, 1 },    /* a three-byte key (the other path) */
    };
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        struct dse_pb_reader r;
        struct dse_pb_field f;
        int n = 0, got;
        dse_pb_reader_init(&r, cases[i].bytes, cases[i].len);
        while ((got = dse_pb_next(&r, &f)) == 1) n++;
        CHECK_INT_EQ(got < 0 ? -1 : n, cases[i].fields);
        CHECK(pb_same((const uint8_t *)cases[i].bytes, cases[i].len));
    }
    struct dse_pcg32 rng;
    uint8_t b[24];
    int diff = 0;
    dse_pcg32_seed(&rng, 34, 1);
    for (int it = 0; it < 1000000 && !diff; it++) {
        size_t n = dse_pcg32_bounded(&rng, sizeof b + 1);
        for (size_t i = 0; i < n; i++) { /* half below 0x80, an eighth a key of fields 1 to 15 */
            uint32_t x = dse_pcg32_next(&rng);
            b[i] = (uint8_t)((x & 7) == 0 ? ((x >> 3) % 15 + 1) << 3 | (x >> 8) % 8 : x & 1 ? x >> 8 : (x >> 8) & 0x7f);
        }
        diff = !pb_same(b, n);
    }
    CHECK(!diff);
}

/* dse_fmt_shortest: the shortest text that reads back, as a double or as a float. */
static void test_shortest(void) {
    static const struct { double v; int as_float; const char *want; } cases[] = {
        { 10, 0, "10" }, { 0.1, 0, "0.1" }, { 0.1 + 0.2, 0, "0.30000000000000004" }, { 1e-5, 0, "1e-05" },
        { 1.0, 0, "1" }, { -2.5, 0, "-2.5" }, { 123456789012, 0, "123456789012" },
        { (double)0.7487f, 1, "0.7487" }, { (double)0.1f, 1, "0.1" }, { (double)10.0f, 1, "10" },
        { (double)3.14159274f, 1, "3.1415927" }, { (double)3.5e9f, 1, "3.5e+09" }, { 1e15, 0, "1e+15" },
        { (double)1.23456794e14f, 1, "1.23456796e+14" },
    };
    char buf[64];
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        CHECK_STR_EQ(dse_fmt_shortest(buf, sizeof buf, cases[i].v, cases[i].as_float), cases[i].want);
        if (cases[i].as_float) CHECK(strtof(buf, NULL) == (float)cases[i].v);
        else CHECK(strtod(buf, NULL) == cases[i].v);
    }
}

/* dse_fmt_real: the shortest double, reading as a real: 1.0 stays 1.0. */
static void test_fmt_real(void) {
    static const struct { double v; const char *want; } cases[] = {
        { 1.0, "1.0" }, { 0, "0.0" }, { 0.1, "0.1" }, { 0.125, "0.125" }, { 10, "10.0" }, { -2, "-2.0" },
        { 1e-5, "1e-05" }, { 1e15, "1e+15" }, { 0.1 + 0.2, "0.30000000000000004" },
    };
    char buf[64];
    for (int i = 0; i < DSE_ARRAY_LEN(cases); i++) {
        CHECK_STR_EQ(dse_fmt_real(buf, sizeof buf, cases[i].v), cases[i].want);
        CHECK(strtod(buf, NULL) == cases[i].v);
    }
}

/* A file in dir named name, its mtime age_s seconds ago. */
static void old_file(const char *dir, const char *name, double age_s) {
    char p[4400];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    DSE_ASSERT(f && fputs("torn", f) >= 0 && fclose(f) == 0);
    const struct timespec t[2] = { { time(NULL) - (time_t)age_s, 0 }, { time(NULL) - (time_t)age_s, 0 } };
    DSE_ASSERT(utimensat(AT_FDCWD, p, t, 0) == 0);
}

static int there(const char *dir, const char *name) {
    char p[4400];
    struct stat sb;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &sb) == 0;
}

static int entries(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d) closedir(d);
    return n;
}

/* A file written whole replaces a regular file or makes a new one, but a symbolic link, a
 * FIFO or a device at its path is refused and left as it was, with no temporary file behind
 * (issue #31: `export --out /dev/stdout` renamed a file over the link). */
static void test_fs_target(void) {
    char dir[64], fifo[128], link[128], dangling[128], target[128], file[128];
    struct dse_err err = { 0 };
    char *text = NULL;
    struct stat sb;
    tmpdir_make(dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    snprintf(dangling, sizeof dangling, "%s/dangling", dir);
    snprintf(target, sizeof target, "%s/target", dir);
    snprintf(file, sizeof file, "%s/file", dir);
    DSE_ASSERT(mkfifo(fifo, 0644) == 0);
    write_raw(target, "keep", 4);
    DSE_ASSERT(symlink("target", link) == 0);
    DSE_ASSERT(symlink("nowhere", dangling) == 0);
    const struct { const char *path, *msg; } bad[] = {
        { fifo, "is a FIFO; expected a regular file or a new name" },
        { link, "is a symbolic link; expected a regular file or a new name" },
        { dangling, "is a symbolic link; expected a regular file or a new name" },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(bad); i++) {
        CHECK_INT_EQ(dse_fs_write_atomic(bad[i].path, "new", 3, &err), DSE_ERR_IO);
        CHECK_STR_EQ(err.file, bad[i].path);
        CHECK(!strncmp(err.msg, bad[i].msg, strlen(bad[i].msg)));
        CHECK_INT_EQ(dse_fs_check_file(bad[i].path, &err), DSE_ERR_IO);
        CHECK(!strncmp(err.msg, bad[i].msg, strlen(bad[i].msg)));
    }
    CHECK(lstat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode));
    CHECK(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode));
    CHECK(lstat(dangling, &sb) == 0 && S_ISLNK(sb.st_mode));
    CHECK_OK(dse_fs_read(target, &text, NULL, &err));
    CHECK_STR_EQ(text, "keep");
    free(text);
    CHECK_INT_EQ(entries(dir), 4); /* no temporary file left */
    CHECK_INT_EQ(dse_fs_check_target("/dev/null", &err), DSE_ERR_IO);
    CHECK(!strncmp(err.msg, "is a character device;", 22));
    /* what it may replace: nothing, a regular file; a directory is the rename's to refuse */
    CHECK_OK(dse_fs_write_atomic(file, "one", 3, &err));
    CHECK_OK(dse_fs_write_atomic(target, "two", 3, &err));
    CHECK_OK(dse_fs_read(target, &text, NULL, &err));
    CHECK_STR_EQ(text, "two");
    free(text);
    CHECK_OK(dse_fs_check_target(dir, &err));
    CHECK_INT_EQ(entries(dir), 5);
    tmpdir_remove(dir);
}

/* An input that is a FIFO, a device or a socket is refused before it is opened (issue #31: a
 * FIFO given to dse predict blocked in open); a regular file, a link to one, a directory and
 * a missing path are left to their readers. */
static void test_fs_input(void) {
    char dir[64], fifo[128], link[128], file[128];
    struct dse_err err = { 0 };
    tmpdir_make(dir);
    snprintf(fifo, sizeof fifo, "%s/fifo.png", dir);
    snprintf(link, sizeof link, "%s/link.png", dir);
    snprintf(file, sizeof file, "%s/file.png", dir);
    DSE_ASSERT(mkfifo(fifo, 0644) == 0);
    write_raw(file, "x", 1);
    DSE_ASSERT(symlink("file.png", link) == 0);
    CHECK_INT_EQ(dse_fs_check_input(fifo, &err), DSE_ERR_IO);
    CHECK_STR_EQ(err.file, fifo);
    CHECK_STR_EQ(err.msg, "is a FIFO; expected a regular file (opening a FIFO waits for a writer, a device may "
                          "never end)");
    CHECK_INT_EQ(dse_fs_check_input("/dev/zero", &err), DSE_ERR_IO);
    CHECK(!strncmp(err.msg, "is a character device;", 22));
    CHECK_OK(dse_fs_check_input(file, &err));
    CHECK_OK(dse_fs_check_input(link, &err));
    CHECK_OK(dse_fs_check_input(dir, &err));
    CHECK_OK(dse_fs_check_input("/nonexistent/dse.png", &err));
    tmpdir_remove(dir);
}

/* dse_fs_dir_in (issue #31): folders made and opened inside dir, never through a link. */
static void test_dir_in(void) {
    char dir[64], out[64], p[200];
    tmpdir_make(dir);
    tmpdir_make(out); /* outside dir: nothing may appear there */
    snprintf(p, sizeof p, "%s/link", dir);
    DSE_ASSERT(symlink(out, p) == 0);
    snprintf(p, sizeof p, "%s/sub", dir);
    DSE_ASSERT(mkdir(p, 0755) == 0);
    snprintf(p, sizeof p, "%s/sub/ln", dir);
    DSE_ASSERT(symlink(out, p) == 0);
    old_file(dir, "file", 0);
    static const struct {
        const char *rel;
        int         create;
        const char *want; /* NULL: DSE_OK; else in the message */
    } t[] = {
        { "a/b",      1, NULL },
        { "a/b",      0, NULL },
        { "sub//c/",  1, NULL },
        { "link",     1, "link is a symbolic link: refusing to write through it" },
        { "link/x",   1, "link is a symbolic link" },
        { "sub/ln/x", 1, "sub/ln is a symbolic link" },
        { "file/x",   1, "file exists and is not a directory" },
        { "../x",     1, "Invalid argument" },
        { "none",     0, "none: cannot open: No such file or directory" },
    };
    for (int i = 0; i < DSE_ARRAY_LEN(t); i++) {
        struct dse_err err = { 0 };
        int fd = -2;
        enum dse_status st = dse_fs_dir_in(dir, t[i].rel, t[i].create, &fd, &err);
        const int ok = t[i].want ? st == DSE_ERR_IO && fd == -1 && strstr(err.msg, t[i].want) != NULL
                                 : st == DSE_OK && fd >= 0;
        if (!ok) printf("  dir_in %s: status %d, fd %d, '%s'\n", t[i].rel, (int)st, fd, err.msg);
        CHECK(ok);
        if (fd >= 0) close(fd);
    }
    CHECK(there(dir, "a/b") && there(dir, "sub/c"));
    CHECK(!there(out, "x"));
    tmpdir_remove(dir);
    tmpdir_remove(out);
}

/* dse_fs_clean_temps (issue #18): a killed writer's temporary file goes, a live one's never. */
static void test_clean_temps(void) {
    char dir[64], host[64] = "host", name[8][200];
    tmpdir_make(dir);
    gethostname(host, sizeof host - 1);
    for (char *p = host; *p; p++)
        if (*p == '/' || *p == '.') *p = '_';
    pid_t dead = fork(); /* a pid whose process has ended */
    DSE_ASSERT(dead >= 0);
    if (dead == 0) _exit(0);
    DSE_ASSERT(waitpid(dead, NULL, 0) == dead);
    const long me = (long)getpid();
    snprintf(name[0], sizeof name[0], ".c1.json.%s.%ld.0.1a.tmp", host, (long)dead); /* dead, 2 min old: goes */
    snprintf(name[1], sizeof name[1], ".c2.json.%s.%ld.0.1a.tmp", host, me);        /* live writer: stays */
    snprintf(name[2], sizeof name[2], ".c3.json.%s.%ld.3.ff.tmp", host, (long)dead); /* dead, just written: stays */
    snprintf(name[3], sizeof name[3], ".c4.json.otherhost.%ld.0.1.tmp", (long)dead); /* another host's: stays */
    snprintf(name[4], sizeof name[4], ".c5.json.otherhost.%ld.0.1.tmp", (long)dead); /* ... 2 days old: goes */
    snprintf(name[5], sizeof name[5], "frontier.svg.%ld.tmp", (long)dead);           /* other form, 2 min: stays */
    snprintf(name[6], sizeof name[6], "curves.svg.%ld.tmp", (long)dead);             /* ... 2 days: goes */
    snprintf(name[7], sizeof name[7], "c6.json");                                     /* not temporary: stays */
    const double age[8] = { 120, 120, 0, 120, 2 * 86400, 120, 2 * 86400, 2 * 86400 };
    const int gone[8] = { 1, 0, 0, 0, 1, 0, 1, 0 };
    for (int i = 0; i < 8; i++) old_file(dir, name[i], age[i]);
    CHECK_INT_EQ(dse_fs_clean_temps(dir, 60, 86400), 3);
    for (int i = 0; i < 8; i++) {
        if (there(dir, name[i]) == gone[i]) printf("  %s: %s\n", name[i], gone[i] ? "left" : "removed");
        CHECK_INT_EQ(there(dir, name[i]), !gone[i]);
    }
    CHECK_INT_EQ(dse_fs_clean_temps("/nonexistent/dse", 60, 86400), 0);
    tmpdir_remove(dir);
}

/* dse_alloc_big: 64-byte aligned below 2 MiB, 2 MiB aligned from there (where the kernel
 * can back it with transparent huge pages), every byte writable, NULL past what size_t holds.
 * Whether the pages came huge depends on the kernel's setting: said, not checked. */
static void test_alloc_big(void) {
    static const size_t sizes[] = { 0, 1, 100, ((size_t)2 << 20) - 1, (size_t)2 << 20, ((size_t)3 << 20) + 5 };
    for (int i = 0; i < DSE_ARRAY_LEN(sizes); i++) {
        unsigned char *p = dse_alloc_big(sizes[i]);
        CHECK(p != NULL);
        if (!p) continue;
        const size_t align = sizes[i] >= ((size_t)2 << 20) ? (size_t)2 << 20 : 64;
        if ((uintptr_t)p % align) printf("  %zu bytes at %p: not %zu-aligned\n", sizes[i], (void *)p, align);
        CHECK((uintptr_t)p % align == 0);
        memset(p, 0xa5, sizes[i]);
        CHECK(sizes[i] == 0 || (p[0] == 0xa5 && p[sizes[i] - 1] == 0xa5));
        free(p);
    }
    CHECK(dse_alloc_big(SIZE_MAX) == NULL);
    CHECK(dse_alloc_big(SIZE_MAX - ((size_t)1 << 20)) == NULL);
}

static const struct check_case cases[] = {
    { "base-errors",  test_errors },
    { "base-errors-own-file", test_error_owns_file },
    { "base-strings", test_strings },
    { "base-names",   test_names },
    { "base-pcg32",   test_pcg32 },
    { "base-fnv",     test_fnv },
    { "base-dir-in",  test_dir_in },
    { "base-pb",      test_pb },
    { "base-pb-fast", test_pb_fast },
    { "base-shortest", test_shortest },
    { "base-fmt-real", test_fmt_real },
    { "base-clean-temps", test_clean_temps },
    { "base-fs-target", test_fs_target },
    { "base-fs-input", test_fs_input },
    { "base-alloc-big", test_alloc_big },
};

int main(int argc, char **argv) { return check_main(cases, DSE_ARRAY_LEN(cases), argc, argv); }

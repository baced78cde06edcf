/* testfs.h: files and folders for the data tests (test_data, test_data_pack): a
 * fresh folder under /tmp, removed with everything in it, and whole-file reads and writes
 * that abort on failure (a test's own setup failing is a broken test, not a result). */
#ifndef DSE_TESTS_TESTFS_H
#define DSE_TESTS_TESTFS_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"

static inline void tmpdir_make(char *dir) {
    strcpy(dir, "/tmp/dse_test_data_XXXXXX");
    DSE_ASSERT(mkdtemp(dir) != NULL);
}

static inline void tmpdir_remove(const char *dir) {
    DIR           *d = opendir(dir);
    struct dirent *e;
    char           p[4096];
    struct stat    st;
    if (!d) return;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (snprintf(p, sizeof p, "%s/%.255s", dir, e->d_name) >= (int)sizeof p) continue;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) tmpdir_remove(p);
        else unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static inline void write_raw(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    DSE_ASSERT(f);
    DSE_ASSERT(n == 0 || fwrite(data, 1, n, f) == n);
    fclose(f);
}

static inline unsigned char *read_all(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    DSE_ASSERT(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(*n + 1);
    DSE_ASSERT(b && (*n == 0 || fread(b, 1, *n, f) == *n));
    fclose(f);
    return b;
}

#endif

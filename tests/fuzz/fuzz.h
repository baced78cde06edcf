/* fuzz.h: what the libFuzzer targets (tests/fuzz/fuzz_*.c, cmake/fuzz.cmake) share. The
 * readers that take a path get the input through one temporary file per process, rewritten
 * for every input and removed at exit. */
#ifndef DSE_FUZZ_H
#define DSE_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fuzz_path_buf[64];

static inline void fuzz_path_remove(void) { unlink(fuzz_path_buf); }

/* Write data to this process's temporary file (suffix: ".cfg", ".ckpt", ...) and return
 * its path; exits on an I/O error (not a finding of the reader). */
static inline const char *fuzz_file(const uint8_t *data, size_t size, const char *suffix)
{
    if (!fuzz_path_buf[0]) {
        snprintf(fuzz_path_buf, sizeof fuzz_path_buf, "/tmp/dse-fuzz-%ld%s", (long)getpid(), suffix);
        atexit(fuzz_path_remove);
    }
    FILE *f = fopen(fuzz_path_buf, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
        perror(fuzz_path_buf);
        exit(2);
    }
    return fuzz_path_buf;
}

#endif

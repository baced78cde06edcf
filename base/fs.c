/* fs.c: atomic whole-file writes (temp file, fsync, rename, fsync the directory),
 * mkdir -p, whole-file reads. POSIX only. */
#include "base/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static enum dse_status io_err(struct dse_err *err, const char *path, const char *what) {
    return dse_err_set(err, DSE_ERR_IO, path, 0, "%s: %s", what, strerror(errno));
}

enum dse_status dse_fs_write_atomic(const char *path, const void *data, size_t len,
                                    struct dse_err *err) {
    char tmp[4096], dir[4096], host[64] = "host";
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    int dlen = slash ? (int)(slash - path) : 0;
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    for (char *p = host; *p; p++)
        if (*p == '/' || *p == '.') *p = '_';
    if (snprintf(dir, sizeof dir, "%.*s", dlen ? dlen : 1, dlen ? path : ".") >= (int)sizeof dir ||
        snprintf(tmp, sizeof tmp, "%s/.%s.%s.%ld.tmp", dir, base, host, (long)getpid()) >= (int)sizeof tmp)
        return dse_err_set(err, DSE_ERR_IO, path, 0, "path too long");
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return io_err(err, tmp, "cannot create");
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) {
            enum dse_status st = io_err(err, tmp, "cannot write");
            close(fd);
            unlink(tmp);
            return st;
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        enum dse_status st = io_err(err, tmp, "cannot sync");
        unlink(tmp);
        return st;
    }
    if (rename(tmp, path) != 0) {
        enum dse_status st = io_err(err, path, "cannot rename the temporary file into place");
        unlink(tmp);
        return st;
    }
    int dfd = open(dir, O_RDONLY);
    if (dfd >= 0) { /* the rename itself must reach the disk */
        fsync(dfd);
        close(dfd);
    }
    return DSE_OK;
}

enum dse_status dse_fs_mkdirs(const char *path, struct dse_err *err) {
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return dse_err_set(err, DSE_ERR_IO, path, 0, "path too long");
    for (char *p = buf + 1; ; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST) return io_err(err, buf, "cannot create directory");
            struct stat st;
            if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
                return dse_err_set(err, DSE_ERR_IO, buf, 0, "exists and is not a directory");
            *p = c;
            if (!c) break;
        }
    }
    return DSE_OK;
}

enum dse_status dse_fs_read(const char *path, char **data, size_t *len, struct dse_err *err) {
    FILE *f = fopen(path, "rb");
    *data = NULL;
    if (!f) return io_err(err, path, "cannot open");
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1) break;
        char *nb = realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf) return dse_err_set(err, DSE_ERR_NOMEM, path, 0, "out of memory");
    if (bad) {
        free(buf);
        return dse_err_set(err, DSE_ERR_IO, path, 0, "read error");
    }
    buf[n] = '\0';
    *data = buf;
    if (len) *len = n;
    return DSE_OK;
}

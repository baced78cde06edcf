/* fs.c: atomic whole-file writes (temp file, fsync, rename, fsync the directory),
 * mkdir -p, whole-file reads. POSIX only. */
#include "base/fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A write's error, the path in the message rather than in err->file (callers name the
 * files they write in their own words). Reads below name their path as err->file. */
static enum dse_status io_err(struct dse_err *err, const char *path, const char *what) {
    return dse_err_set(err, DSE_ERR_IO, NULL, 0, "%s: %s: %s", path, what, strerror(errno));
}

/* The directory part of path ("." if none, "/" for "/x"). */
static int dir_of(const char *path, char *dir, size_t size) {
    const char *slash = strrchr(path, '/');
    int n = !slash ? snprintf(dir, size, ".")
          : slash == path ? snprintf(dir, size, "/")
          : snprintf(dir, size, "%.*s", (int)(slash - path), path);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* This host's name as temporary names carry it: '/' and '.' made '_', so that it is one
 * dot-separated field. */
static void temp_host(char *host, size_t size) {
    snprintf(host, size, "host");
    gethostname(host, size - 1);
    host[size - 1] = '\0';
    for (char *p = host; *p; p++)
        if (*p == '/' || *p == '.') *p = '_';
}

/* Write data to a new, uniquely named temporary file next to path (O_EXCL, never
 * following a symlink), fsync it and close it; its name goes to tmp. Names mix the host,
 * the pid, a per-call counter and the clock, and a clash is retried. */
static enum dse_status write_temp(const char *path, const void *data, size_t len, char *tmp,
                                  size_t tmp_size, struct dse_err *err) {
    char dir[4096], host[64];
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    static _Atomic unsigned counter; /* makes names unique across threads of one process */
    if (dir_of(path, dir, sizeof dir)) return dse_err_set(err, DSE_ERR_IO, path, 0, "path too long");
    temp_host(host, sizeof host);
    int fd = -1;
    for (int attempt = 0; fd < 0 && attempt < 100; attempt++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        unsigned c = counter++;
        if (snprintf(tmp, tmp_size, "%s/.%s.%s.%ld.%u.%lx.tmp", dir, base, host, (long)getpid(), c,
                     (unsigned long)ts.tv_nsec) >= (int)tmp_size)
            return dse_err_set(err, DSE_ERR_IO, path, 0, "path too long");
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
        if (fd < 0 && errno != EEXIST) return io_err(err, path, "cannot create its temporary file in that directory");
    }
    if (fd < 0) return io_err(err, path, "cannot create a unique temporary file in that directory");
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) { /* errors name the file the temporary one stands for */
            enum dse_status st = io_err(err, path, "cannot write (its temporary file is removed; the file is as it was)");
            close(fd);
            unlink(tmp);
            return st;
        }
        p += w;
        left -= (size_t)w;
    }
    int synced = fsync(fd) == 0;
    if (close(fd) != 0 || !synced) {
        enum dse_status st = io_err(err, path, "cannot sync (its temporary file is removed; the file is as it was)");
        unlink(tmp);
        return st;
    }
    return DSE_OK;
}

/* The rename or link itself must reach the disk: fsync the directory. */
enum dse_status dse_fs_sync_dir(const char *path, struct dse_err *err) {
    char dir[4096];
    if (dir_of(path, dir, sizeof dir)) return DSE_OK;
    int dfd = open(dir, O_RDONLY);
    if (dfd < 0) return io_err(err, dir, "cannot open the directory to sync it");
    int ok = fsync(dfd) == 0 || errno == EINVAL; /* some filesystems cannot sync directories */
    close(dfd);
    return ok ? DSE_OK : io_err(err, dir, "cannot sync the directory");
}

/* What a file of mode m is, if neither a regular file nor a directory; NULL if it is one. */
static const char *special_kind(mode_t m) {
    if (S_ISREG(m) || S_ISDIR(m)) return NULL;
    return S_ISLNK(m)  ? "a symbolic link"
         : S_ISFIFO(m) ? "a FIFO"
         : S_ISCHR(m)  ? "a character device"
         : S_ISBLK(m)  ? "a block device"
         : S_ISSOCK(m) ? "a socket"
                       : "not a regular file";
}

/* path refused, with `expected`, where it is (follow: links followed) a special file. */
static enum dse_status check_kind(const char *path, int follow, const char *expected, struct dse_err *err) {
    struct stat sb;
    const char *what = (follow ? stat(path, &sb) : lstat(path, &sb)) == 0 ? special_kind(sb.st_mode) : NULL;
    return what ? dse_err_set(err, DSE_ERR_IO, path, 0, "is %s; expected %s", what, expected) : DSE_OK;
}

enum dse_status dse_fs_check_target(const char *path, struct dse_err *err) {
    return check_kind(path, 0, "a regular file or a new name (dse writes a whole new file and renames it into "
                      "place, which would replace it)", err);
}

enum dse_status dse_fs_check_input(const char *path, struct dse_err *err) {
    return check_kind(path, 1, "a regular file (opening a FIFO waits for a writer, a device may never end)", err);
}

enum dse_status dse_fs_write_atomic(const char *path, const void *data, size_t len,
                                    struct dse_err *err) {
    char tmp[4400];
    enum dse_status st = dse_fs_check_target(path, err);
    if (!st) st = write_temp(path, data, len, tmp, sizeof tmp, err);
    if (st) return st;
    if (rename(tmp, path) != 0) {
        st = io_err(err, path, "cannot rename the temporary file into place");
        unlink(tmp);
        return st;
    }
    return dse_fs_sync_dir(path, err);
}

enum dse_status dse_fs_create_atomic(const char *path, const void *data, size_t len, int *existed,
                                     struct dse_err *err) {
    char tmp[4400];
    *existed = 0;
    enum dse_status st = write_temp(path, data, len, tmp, sizeof tmp, err);
    if (st) return st;
    if (link(tmp, path) != 0) { /* link() fails if path exists: create-if-absent, atomically */
        int e = errno;
        unlink(tmp);
        if (e == EEXIST) {
            *existed = 1;
            return DSE_OK;
        }
        errno = e;
        return io_err(err, path, "cannot create");
    }
    unlink(tmp);
    return dse_fs_sync_dir(path, err);
}

enum dse_status dse_fs_mkdirs(const char *path, struct dse_err *err) {
    char buf[4096];
    if (!path[0]) return dse_err_set(err, DSE_ERR_IO, path, 0, "empty directory name");
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return dse_err_set(err, DSE_ERR_IO, path, 0, "path too long");
    for (char *p = buf + 1; ; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            /* err->file is path (the caller's); the part at fault goes into the message */
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return dse_err_set(err, DSE_ERR_IO, path, 0, "cannot create directory %s: %s", buf, strerror(errno));
            struct stat st;
            if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
                return dse_err_set(err, DSE_ERR_IO, path, 0, "%s exists and is not a directory", buf);
            *p = c;
            if (!c) break;
        }
    }
    return DSE_OK;
}

enum dse_status dse_fs_dir_in(const char *dir, const char *rel, int create, int *fd, struct dse_err *err) {
    char buf[4096], done[4400];
    if (fd) *fd = -1;
    if (snprintf(buf, sizeof buf, "%s", rel) >= (int)sizeof buf ||
        snprintf(done, sizeof done, "%s", dir) >= (int)sizeof done)
        return dse_err_set(err, DSE_ERR_IO, NULL, 0, "%s/%s: path too long", dir, rel);
    int at = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (at < 0) return dse_err_set(err, DSE_ERR_IO, NULL, 0, "%s: cannot open: %s", dir, strerror(errno));
    char *save = NULL;
    for (char *part = strtok_r(buf, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
        size_t n = strlen(done);
        snprintf(done + n, sizeof done - n, "/%s", part);
        int e = 0;
        if (!strcmp(part, "..")) e = EINVAL;
        else if (create && mkdirat(at, part, 0755) != 0 && errno != EEXIST) e = errno;
        int next = e ? -1 : openat(at, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0) {
            struct stat sb;
            if (!e) e = errno;
            const int link = fstatat(at, part, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(sb.st_mode);
            close(at);
            if (link)
                return dse_err_set(err, DSE_ERR_IO, NULL, 0, "%s is a symbolic link: refusing to write through it "
                                   "(a sweep writes only inside %s; replace the link with a folder)", done,
                                   dir);
            if (e == ENOTDIR) return dse_err_set(err, DSE_ERR_IO, NULL, 0, "%s exists and is not a directory", done);
            return dse_err_set(err, DSE_ERR_IO, NULL, 0, "%s: cannot %s: %s", done, create ? "create" : "open",
                               strerror(e));
        }
        close(at);
        at = next;
    }
    if (fd) *fd = at;
    else close(at);
    return DSE_OK;
}

/* A new file made in dir and removed at once (named as write_temp's are); errno on failure. */
static int probe_in(const char *dir) {
    char probe[4400], host[64] = "host";
    static _Atomic unsigned counter;
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    for (char *p = host; *p; p++)
        if (*p == '/' || *p == '.') *p = '_';
    for (int attempt = 0; attempt < 100; attempt++) {
        if (snprintf(probe, sizeof probe, "%s/.probe.%s.%ld.%u.tmp", dir, host, (long)getpid(), counter++) >=
            (int)sizeof probe)
            return ENAMETOOLONG;
        int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
        if (fd >= 0) {
            close(fd);
            unlink(probe);
            return 0;
        }
        if (errno != EEXIST) return errno;
    }
    return EEXIST;
}

enum dse_status dse_fs_check_dir(const char *dir, struct dse_err *err) {
    int e = probe_in(dir);
    return e ? dse_err_set(err, DSE_ERR_IO, dir, 0, "cannot write a file there: %s", strerror(e)) : DSE_OK;
}

enum dse_status dse_fs_check_file(const char *path, struct dse_err *err) {
    char dir[4096];
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return dse_err_set(err, DSE_ERR_IO, path, 0, "is a directory; expected a file");
    enum dse_status st = dse_fs_check_target(path, err);
    if (st) return st;
    if (dir_of(path, dir, sizeof dir)) return dse_err_set(err, DSE_ERR_IO, path, 0, "path too long");
    int e = probe_in(dir);
    return e ? dse_err_set(err, DSE_ERR_IO, path, 0, "cannot write a file in %s: %s", dir, strerror(e)) : DSE_OK;
}

enum dse_status dse_fs_read(const char *path, char **data, size_t *len, struct dse_err *err) {
    FILE *f = fopen(path, "rb");
    struct stat sb;
    *data = NULL;
    if (!f) return dse_err_set(err, DSE_ERR_IO, path, 0, "cannot open: %s", strerror(errno));
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fclose(f);
        errno = EISDIR; /* callers tell a missing file by errno (ENOENT): not a stale one */
        return dse_err_set(err, DSE_ERR_IO, path, 0, "is a directory; expected a file");
    }
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

/* The writer a temporary name of write_temp's names: ".<base>.<host>.<pid>.<n>.<hex>.tmp",
 * read from the right. 0 if the name is not of that form. */
static int temp_writer(const char *name, char *host, size_t host_size, long *pid) {
    size_t n = strlen(name);
    const char *end = name + n - 4, *f[4]; /* the starts of hex, n, pid, host */
    if (name[0] != '.' || n < 5 || strcmp(end, ".tmp") != 0) return 0;
    const char *p = end;
    for (int k = 0; k < 4; k++) {
        while (p > name && p[-1] != '.') p--;
        if (p <= name + 1) return 0;
        f[k] = p;
        p--; /* onto the dot before this field */
    }
    char *stop;
    *pid = strtol(f[2], &stop, 10);
    if (stop != f[1] - 1 || *pid <= 0 || (size_t)(f[2] - 1 - f[3]) >= host_size) return 0;
    snprintf(host, host_size, "%.*s", (int)(f[2] - 1 - f[3]), f[3]);
    return 1;
}

int dse_fs_clean_temps(const char *dir, double min_age_s, double foreign_age_s) {
    char host[64], whose[64], path[4400];
    long pid;
    int removed = 0;
    struct stat sb;
    temp_host(host, sizeof host);
    DIR *d = opendir(dir);
    struct dirent *de;
    const time_t now = time(NULL);
    while (d && (de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (n < 5 || strcmp(de->d_name + n - 4, ".tmp") != 0) continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (lstat(path, &sb) || !S_ISREG(sb.st_mode)) continue;
        const double age = difftime(now, sb.st_mtime);
        int gone;
        if (temp_writer(de->d_name, whose, sizeof whose, &pid) && !strcmp(whose, host))
            gone = age >= min_age_s && kill((pid_t)pid, 0) != 0 && errno == ESRCH; /* its writer is dead */
        else
            gone = age >= foreign_age_s; /* another host's, or a name of another form: only when old */
        if (gone && unlink(path) == 0) removed++;
    }
    if (d) closedir(d);
    return removed;
}

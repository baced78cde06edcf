/* fs.h: files that survive crashes and concurrent writers (docs/sweep-dir.md):
 * whole-file replacement by atomic rename, and directory creation. */
#ifndef DSE_BASE_FS_H
#define DSE_BASE_FS_H

#include <stddef.h>

#include "base/base.h"

/* Write len bytes to path atomically: a unique temporary file in the same directory
 * (".<name>.<host>.<pid>.tmp"), fsync, rename over path, fsync the directory. Readers
 * see the old file or the new one, never a part. A path that is a symbolic link, FIFO or
 * device is refused before anything is written (dse_fs_check_target). */
enum dse_status dse_fs_write_atomic(const char *path, const void *data, size_t len,
                                    struct dse_err *err);

/* Create path with the given contents only if it does not exist yet, atomically (a
 * temporary file hard-linked into place: link() refuses to replace). *existed = 1 and
 * nothing changes if it was there. Two processes racing: exactly one creates it. */
enum dse_status dse_fs_create_atomic(const char *path, const void *data, size_t len, int *existed,
                                     struct dse_err *err);

/* fsync the directory that holds path, so that a rename or link into it is on disk. */
enum dse_status dse_fs_sync_dir(const char *path, struct dse_err *err);

/* mkdir -p. An error names path (err->file, the caller's string) and, in the message, the
 * part of it that could not be made. */
enum dse_status dse_fs_mkdirs(const char *path, struct dse_err *err);

/* The folder dir/rel (rel relative, '/'-separated, no ".."), opened without following a
 * symbolic link anywhere in rel: each part is opened inside the one before (openat with
 * O_NOFOLLOW; made with mkdirat first if create), so what is then written through *fd (or
 * through dir/rel at once) cannot leave dir through a link inside it (dir itself may be
 * one). A part that is a link or not a folder is refused (DSE_ERR_IO; the message names
 * it). *fd (NULL: closed) gets the open folder; the caller closes it. */
enum dse_status dse_fs_dir_in(const char *dir, const char *rel, int create, int *fd, struct dse_err *err);

/* Remove the temporary files that writers killed mid-write left in dir (issue #18): one of
 * this host's names (dse_fs_write_atomic's) whose writing process is gone and that is at
 * least min_age_s old; any other "*.tmp" (another host's: its pid means nothing here) only
 * once foreign_age_s old, longer than any write lasts. Never a live writer's file. Returns
 * how many went; a missing dir is none. */
int dse_fs_clean_temps(const char *dir, double min_age_s, double foreign_age_s);

/* Checks before the work that writes there (issue #18 item 4): whether a new file can be
 * made in the existing directory dir, or next to path (which must not be a directory), by
 * making one (".probe.<host>.<pid>.<n>.tmp") and removing it at once. An error names dir or
 * path and says why (not a directory, permission denied, read-only file system). */
enum dse_status dse_fs_check_dir(const char *dir, struct dse_err *err);
enum dse_status dse_fs_check_file(const char *path, struct dse_err *err);

/* Whether a file written whole (a temporary file renamed into place) may replace what is at
 * path (issue #31: `export --out /dev/stdout` replaced that link with a file): DSE_OK if
 * nothing is there, a regular file, or a directory (which the rename refuses itself). A
 * symbolic link, FIFO, device or socket is refused, DSE_ERR_IO with err->file = path: the
 * rename would put a file in its place, not write through it. Every writer of that kind checks
 * it (dse_fs_write_atomic, dse_fs_check_file, packs, plots). */
enum dse_status dse_fs_check_target(const char *path, struct dse_err *err);

/* Whether path, followed through links, may be opened as an input file (issue #31: a FIFO
 * given to `dse predict` blocked it): DSE_OK if it is a regular file, a directory (its
 * reader says what it expected) or absent (the open says so). A FIFO, device or socket is
 * refused, DSE_ERR_IO with err->file = path, before anything opens it. */
enum dse_status dse_fs_check_input(const char *path, struct dse_err *err);

/* Read a whole file into a malloc'ed, NUL-terminated buffer. A directory is refused as one. */
enum dse_status dse_fs_read(const char *path, char **data, size_t *len, struct dse_err *err);

#endif

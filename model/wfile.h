/* wfile.h — output that never loses data: every file commscale writes goes through here.
 *
 * The rules, in one place (docs/outputs.md explains them to users):
 * - A regular file, a path that does not exist yet, or a symlink to either is written to a unique
 *   temporary file in the final target's directory (mkstemp) and renamed onto the target on
 *   commit, after every write, fflush, fsync and fclose succeeded. A symlink is resolved (a chain
 *   of them too) and kept: the file it points to is replaced, the link itself stays. The new file
 *   keeps the old file's permission bits; a new file gets 0666 & ~umask. On any error the old file
 *   is untouched and the temporary removed.
 * - Standard output ("-" or NULL), /dev/stdout, /dev/fd/N, a character device, a FIFO or a socket
 *   is written through, never replaced, and checked the same way (ferror, fflush).
 * - A directory is an error.
 * - A set of files (cs_wdir) is built in a unique temporary directory beside DIR and renamed into
 *   place on commit.
 * - SIGINT, SIGTERM and SIGHUP remove every live temporary (cs_wfile_install_signal_cleanup).
 * - Append-mode measurement files keep their append-and-flush contract and take an advisory lock
 *   (cs_wfile_lock_append) so that two runs cannot interleave rows.
 *
 * Only libc and POSIX (plus flock) are used, so the measurement runner can use it anywhere.
 * Messages follow status.h: "PATH: cannot write: strerror" with CS_ERR_IO.
 */
#ifndef CS_WFILE_H
#define CS_WFILE_H

#include <spawn.h>
#include <stdio.h>

#include "status.h"

/* One output file being written. Opaque; created by cs_wfile_open, freed by cs_wfile_commit or
 * cs_wfile_abort. */
struct cs_wfile;

/* Opens path for writing under the rules above and stores the handle in *w. path NULL or "-" is
 * standard output. Errors (CS_ERR_IO, *w left NULL): a directory ("PATH: is a directory"), a
 * missing or unwritable directory ("PATH: cannot create: strerror"), a symlink loop. */
enum cs_status cs_wfile_open(const char *path, struct cs_wfile **w, struct cs_error *err);

/* The stream to write to; owned by w (never fclose it). */
FILE *cs_wfile_fp(struct cs_wfile *w);

/* The path the user named ("-" for standard output). */
const char *cs_wfile_path(const struct cs_wfile *w);

/* 1 when w writes through (standard output, a device, a FIFO), 0 when it renames on commit. */
int cs_wfile_through(const struct cs_wfile *w);

/* Finishes w: checks ferror, fflush, fsync (regular files), fclose and renames the temporary onto
 * the target. Frees w in every case (NULL is CS_OK). On any error the old file is untouched, the
 * temporary removed and err says "PATH: cannot write: strerror" (CS_ERR_IO). Standard output is
 * flushed and checked, never closed. */
enum cs_status cs_wfile_commit(struct cs_wfile *w, struct cs_error *err);

/* Gives w up: closes the stream, removes the temporary (the old file stays as it was) and frees
 * w. NULL is harmless. Standard output is flushed, not closed. */
void cs_wfile_abort(struct cs_wfile *w);

/* A set of files written as one (a report, a plot set). Opaque. */
struct cs_wdir;

/* Creates a unique temporary directory beside dir (dir's parent must exist). On commit the
 * temporary takes dir's name; an existing dir is moved aside first and removed (recursively,
 * symlinks not followed) only after the rename succeeded. An existing dir is replaced only when it
 * is empty or was itself written by cs_wdir (it holds the marker file CS_WDIR_MARKER): any other
 * directory is refused with CS_ERR_IO "DIR: exists and was not written by commscale", so that
 * `-o ~` cannot delete a home directory. An existing non-directory is an error. */
enum cs_status cs_wdir_open(const char *dir, struct cs_wdir **d, struct cs_error *err);

/* The name of the marker file cs_wdir leaves in every directory it writes. */
#define CS_WDIR_MARKER ".commscale-output"

/* Where to write the files meanwhile (a directory path; owned by d). */
const char *cs_wdir_tmp(const struct cs_wdir *d);

/* The directory the user named. */
const char *cs_wdir_path(const struct cs_wdir *d);

/* Renames the temporary directory into place (see cs_wdir_open) and frees d in every case. On error
 * (CS_ERR_IO "DIR: cannot write: strerror") the old directory is back in place and the temporary
 * removed. */
enum cs_status cs_wdir_commit(struct cs_wdir *d, struct cs_error *err);

/* Removes the temporary directory and everything in it, and frees d. NULL is harmless. */
void cs_wdir_abort(struct cs_wdir *d);

/* Installs SIGINT, SIGTERM and SIGHUP handlers that remove every live temporary file and
 * directory (async-signal-safe: a fixed table of paths, unlink and rmdir only) and then re-raise
 * the signal with its default action, so the exit status still says which signal ended the run.
 * A signal that was ignored when this is called (nohup) stays ignored. Call once, from main. */
void cs_wfile_install_signal_cleanup(void);

/* Enters a temporary that another program writes (gnuplot's images) in the table the signal
 * handlers clean; returns a handle for cs_wfile_untrack, or -1 when the table is full (the path is
 * then not removed on a signal). */
int cs_wfile_track(const char *path);
void cs_wfile_untrack(int handle);

/* Names the child process (gnuplot) that writes into a tracked temporary while it runs (pid > 0)
 * or says none runs (pid 0): a cleanup signal first kills that child with SIGKILL and reaps it, so
 * that it cannot create a file in the temporary after the handler has emptied it. */
void cs_wfile_child(long pid);

/* Starts a child that writes into a tracked temporary (gnuplot) and names it with cs_wfile_child
 * in one step: the cleanup signals are blocked from before posix_spawn until the child is named,
 * so a signal in between cannot empty the temporary while an unnamed child goes on writing into
 * it; the child runs with the caller's signal mask. path is searched in PATH unless it holds a
 * '/'. Returns 0 with *pid set, or posix_spawn's error number. The caller reaps the child and
 * then calls cs_wfile_child(0). */
int cs_wfile_spawn(long *pid, const char *path, const posix_spawn_file_actions_t *fa,
                   char *const argv[]);

/* Takes an advisory lock (flock LOCK_EX|LOCK_NB) on f, an append-mode measurement file opened at
 * path, for as long as f stays open. CS_ERR_IO "PATH: another run is writing it" when another
 * process holds it; a file system without locks (ENOLCK, EOPNOTSUPP) is accepted unlocked. */
enum cs_status cs_wfile_lock_append(FILE *f, const char *path, struct cs_error *err);

/* Opens path for appending (created 0666 & ~umask when missing) and takes cs_wfile_lock_append on
 * it; with truncate set, empties a regular file once the lock is held (a fresh run), so that a
 * second run never truncates the rows of a first one still writing. Returns the stream (the
 * caller fcloses it, which releases the lock) or NULL with err filled: "PATH: cannot append:
 * reason" or the lock's message. */
FILE *cs_wfile_open_append(const char *path, int truncate, struct cs_error *err);

#endif

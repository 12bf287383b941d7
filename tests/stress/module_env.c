/*
 * What the environment may make the library load (docs/abi.md, "Where a
 * module is looked for"):
 *  - a module path longer than the loader's buffer is refused, never cut
 *    short (a cut path could name another file: here, a module that marks
 *    its loading);
 *  - in a privileged process (set-group-ID here), ATTNMETA_MODULE_DIR and
 *    ATTNMETA_BACKEND are ignored (secure_getenv).
 *
 * Each case runs this program again as a child ("--probe"), since a module
 * is loaded once per process. The privileged cases need root (to give a
 * copy of the program to another group, set-group-ID) and a file system
 * that honours set-group-ID; without them they are reported as skipped.
 * Prints "N passed, N failed, N skipped".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attnmeta/attnmeta.h"

#define PROBE_OUT_MAX 256

static int passed, failed, skipped;

static void check(int ok, const char *what) {
  printf("%s %s\n", ok ? "ok  " : "FAIL", what);
  if (ok) passed++;
  else failed++;
}

/* The child: load the CUDA module (through device_count) and open AUTO. */
static int probe(void) {
  attnmeta_context *ctx = NULL;
  int count = -1;
  attnmeta_status st;
  (void)attnmeta_backend_device_count(ATTNMETA_BACKEND_CUDA, &count);
  st = attnmeta_open(&ctx, ATTNMETA_BACKEND_AUTO, 0);
  printf("secure=%lu open=%d backend=%s\n", getauxval(AT_SECURE), (int)st,
         st == ATTNMETA_OK ? attnmeta_backend_name(attnmeta_context_backend(ctx)) : "none");
  attnmeta_close(ctx);
  return 0;
}

/* Runs `program --probe` with the given environment additions; the probe's
 * line lands in out. 0 on success. */
static int run_probe(const char *program, const char *module_dir, const char *backend,
                     const char *marker, char *out, size_t out_size) {
  int fds[2];
  pid_t pid;
  int status;
  ssize_t n;
  if (pipe(fds) != 0) return -1;
  pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    if (module_dir) setenv("ATTNMETA_MODULE_DIR", module_dir, 1);
    else unsetenv("ATTNMETA_MODULE_DIR");
    if (backend) setenv("ATTNMETA_BACKEND", backend, 1);
    else unsetenv("ATTNMETA_BACKEND");
    setenv("ATTNMETA_TEST_MARKER", marker, 1);
    execl(program, program, "--probe", (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  n = read(fds[0], out, out_size - 1);
  out[n > 0 ? n : 0] = '\0';
  close(fds[0]);
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return 0;
}

static int exists(const char *path) { return access(path, F_OK) == 0; }

/* A folder name that, followed by "/libattnmeta_cuda.so" and cut to the
 * loader's 4095 characters, names FAKE_MODULE_DIR/libattnmeta_cuda.so. */
static void cut_path_dir(char *dir, size_t size) {
  const char *file = "/libattnmeta_cuda.so";
  const size_t want = 4095; /* what snprintf leaves of the path in a 4096-byte buffer */
  size_t len = strlen(FAKE_MODULE_DIR);
  memcpy(dir, FAKE_MODULE_DIR, len);
  if ((want - len - strlen(file)) % 2) dir[len++] = '/';
  while (len + strlen(file) < want) {
    dir[len++] = '/';
    dir[len++] = '.';
  }
  memcpy(dir + len, file, strlen(file));
  len += strlen(file);
  memcpy(dir + len, "/more", 6); /* the folder goes on past the cut */
  (void)size;
}

int main(int argc, char **argv) {
  char out[PROBE_OUT_MAX], marker[PATH_MAX], secure_copy[PATH_MAX], self[PATH_MAX];
  static char long_dir[8192];
  ssize_t n;

  if (argc > 1 && strcmp(argv[1], "--probe") == 0) return probe();
  n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) {
    printf("FAIL cannot find this program\n");
    return 1;
  }
  self[n] = '\0';
  mkdir(WORK_DIR, 0755);
  snprintf(marker, sizeof marker, "%s/marker", WORK_DIR);

  /* the stand-in is loadable and marks it: the checks below can see a load */
  unlink(marker);
  check(run_probe(self, FAKE_MODULE_DIR, NULL, marker, out, sizeof out) == 0 && exists(marker),
        "ATTNMETA_MODULE_DIR names the stand-in module: it is loaded (marker written)");

  /* a path longer than the buffer is refused, not cut to another file */
  unlink(marker);
  cut_path_dir(long_dir, sizeof long_dir);
  check(run_probe(self, long_dir, NULL, marker, out, sizeof out) == 0 && !exists(marker),
        "a module folder whose path would be cut to the stand-in's: nothing loaded");

  /* privileged: a set-group-ID copy of this program */
  snprintf(secure_copy, sizeof secure_copy, "%s/module_env_setgid", WORK_DIR);
  {
    char cmd[3 * PATH_MAX];
    unlink(secure_copy);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", self, secure_copy);
    if (geteuid() != 0 || system(cmd) != 0 || chown(secure_copy, 0, 65534) != 0 ||
        chmod(secure_copy, 02755) != 0 ||
        run_probe(secure_copy, NULL, NULL, marker, out, sizeof out) != 0 ||
        strncmp(out, "secure=1", 8) != 0) {
      printf("skip the set-group-ID cases (need root and a file system honouring set-group-ID; "
             "probe said: %s)\n", out);
      skipped += 2;
    } else {
      unlink(marker);
      check(run_probe(secure_copy, FAKE_MODULE_DIR, NULL, marker, out, sizeof out) == 0 &&
                !exists(marker),
            "set-group-ID: ATTNMETA_MODULE_DIR ignored (stand-in not loaded)");
      /* an unknown ATTNMETA_BACKEND makes AUTO fail (status 6); ignored,
       * AUTO opens what it finds */
      check(run_probe(self, NULL, "bogus", marker, out, sizeof out) == 0 &&
                strstr(out, "open=6") != NULL &&
                run_probe(secure_copy, NULL, "bogus", marker, out, sizeof out) == 0 &&
                strstr(out, "open=0") != NULL,
            "set-group-ID: ATTNMETA_BACKEND ignored (an unknown name fails only without it)");
    }
    unlink(secure_copy);
  }
  unlink(marker);
  printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed ? 1 : 0;
}

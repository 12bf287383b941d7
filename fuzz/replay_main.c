// SPDX-License-Identifier: Apache-2.0
/*
 * Replays files (or every file of folders) through a fuzz harness without
 * libFuzzer, so any compiler can run the committed corpus and regression
 * inputs as an ordinary test. A failing check aborts; otherwise prints
 * "N passed, 0 failed" and exits 0.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  uint8_t *data;
  long size;
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    return 0;
  }
  fseek(f, 0, SEEK_END);
  size = ftell(f);
  fseek(f, 0, SEEK_SET);
  data = (uint8_t *)malloc(size > 0 ? (size_t)size : 1);
  if (!data || (size > 0 && fread(data, 1, (size_t)size, f) != (size_t)size)) {
    fprintf(stderr, "cannot read %s\n", path);
    fclose(f);
    free(data);
    return 0;
  }
  fclose(f);
  LLVMFuzzerTestOneInput(data, (size_t)size);
  free(data);
  return 1;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replays every regular file of `dir` in name order; returns how many. */
static long replay_dir(const char *dir, long *unreadable) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char **names = NULL;
  size_t n = 0, cap = 0, i;
  long done = 0;
  if (!d) return -1;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      names = (char **)realloc(names, cap * sizeof *names);
      if (!names) abort();
    }
    names[n] = (char *)malloc(strlen(dir) + strlen(e->d_name) + 2);
    if (!names[n]) abort();
    sprintf(names[n], "%s/%s", dir, e->d_name);
    n++;
  }
  closedir(d);
  if (n) qsort(names, n, sizeof *names, cmp_names);
  for (i = 0; i < n; ++i) {
    struct stat st;
    if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
      if (replay_file(names[i]))
        done++;
      else
        (*unreadable)++;
    }
    free(names[i]);
  }
  free(names);
  return done;
}

int main(int argc, char **argv) {
  long passed = 0, unreadable = 0;
  int i;
  LLVMFuzzerInitialize(&argc, &argv);
  for (i = 1; i < argc; ++i) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "%s: not found\n", argv[i]);
      unreadable++;
    } else if (S_ISDIR(st.st_mode)) {
      passed += replay_dir(argv[i], &unreadable);
    } else if (replay_file(argv[i])) {
      passed++;
    } else {
      unreadable++;
    }
  }
  printf("%ld passed, %ld failed\n", passed, unreadable);
  return unreadable ? 1 : 0;
}

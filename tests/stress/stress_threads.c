// SPDX-License-Identifier: Apache-2.0
/*
 * Concurrency of the CPU backend (docs/reliability.md, "Threads"):
 *
 *  own_contexts     every thread opens its own context, sets its own launch
 *                   configuration and checks random steps (every product,
 *                   valid and hostile data) against the reference;
 *  shared_context   threads share ONE context (launch configuration set
 *                   before they start) and build steps concurrently into
 *                   their own outputs, from shared read-only inputs, all
 *                   OR-ing flags into ONE shared error word;
 *  shared_failures  threads share one context and mix failing and
 *                   successful calls: each gets its own status back and,
 *                   from attnmeta_last_error, its own message (messages are
 *                   kept per thread and context);
 *  open_close       threads open and close contexts, fail to open a
 *                   device that does not exist (the open error message is
 *                   per thread and must name this thread's device), and
 *                   load the GPU modules for the first time concurrently.
 *
 * Prints "N passed, N failed"; exits non-zero on any failure. Scale with
 * ATTNMETA_STRESS_ITERS (iterations per thread).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnmeta/attnmeta.h"
#include "stress_common.h"

#define NTHREADS 8
#define NBATCHES 16

typedef struct thread_arg {
  int id;
  int iters;
  attnmeta_context *shared;
  int32_t *shared_error_word;
  const char *name;
  int (*run)(const struct thread_arg *a); /* the test: its count of bad iterations */
} thread_arg;

static pthread_barrier_t start_line;

/* A thread: starts with the others, runs its test, reports the bad
 * iterations. */
static void *thread_main(void *p) {
  const thread_arg *a = (const thread_arg *)p;
  int bad;
  pthread_barrier_wait(&start_line);
  bad = a->run(a);
  ST_EXPECT(bad == 0, "%s[%d]: %d bad iterations", a->name, a->id, bad);
  return NULL;
}
static st_batch batches[NBATCHES];

static attnmeta_launch_config random_config(uint64_t *rng) {
  attnmeta_launch_config c = attnmeta_launch_config_default();
  c.block = (int)st_range(rng, 0, 1);
  c.grid = (int)st_range(rng, 0, 7);
  c.stage = (int)st_range(rng, -1, 1);
  c.vector = (int)st_range(rng, -1, 1);
  c.lanes = (int)st_range(rng, 0, 3);
  return c;
}

/* ---- own_contexts ---- */
/* Each iteration passes or fails on its own: no bad iterations to count. */
static int own_contexts(const thread_arg *a) {
  uint64_t rng = 1000u + (uint64_t)a->id;
  attnmeta_context *ctx = NULL;
  attnmeta_status st;
  int i;
  st = attnmeta_open(&ctx, ATTNMETA_BACKEND_CPU, 0);
  ST_EXPECT(st == ATTNMETA_OK, "own_contexts[%d]: open: %s", a->id, attnmeta_open_error());
  if (st != ATTNMETA_OK) return 0;
  for (i = 0; i < a->iters; ++i) {
    st_batch b;
    st_outputs o;
    attnmeta_step s;
    attnmeta_launch_config c = random_config(&rng);
    char why[256] = "";
    st_batch_make(&b, &rng, i % 3 == 2);
    st_outputs_alloc(&o, &b);
    st_step_fill(&s, &b, &o, &o.error_word);
    st = attnmeta_set_launch_config(ctx, &c);
    if (st == ATTNMETA_OK) st = attnmeta_build_step(ctx, &s, NULL);
    if (st != ATTNMETA_OK) {
      st_failf("own_contexts[%d] iteration %d: %s (%s)", a->id, i, attnmeta_status_string(st),
               attnmeta_last_error(ctx));
    } else if (!st_compare(&b, &o, why, sizeof why)) {
      st_failf("own_contexts[%d] iteration %d: %s", a->id, i, why);
    } else if (o.error_word != b.ref_flags) {
      st_failf("own_contexts[%d] iteration %d: error word 0x%x, reference 0x%x", a->id, i,
               (unsigned)o.error_word, (unsigned)b.ref_flags);
    } else if (attnmeta_last_error(ctx)[0] != '\0') {
      st_failf("own_contexts[%d] iteration %d: message after success", a->id, i);
    } else {
      st_pass();
    }
    st_outputs_free(&o);
    st_batch_free(&b);
  }
  attnmeta_close(ctx);
  return 0;
}

/* ---- shared_context ---- */
static int shared_context(const thread_arg *a) {
  int i, bad = 0;
  for (i = 0; i < a->iters; ++i) {
    const st_batch *b = &batches[(a->id + i) % NBATCHES];
    st_outputs o;
    attnmeta_step s;
    attnmeta_status st;
    char why[256] = "";
    st_outputs_alloc(&o, b);
    st_step_fill(&s, b, &o, a->shared_error_word);
    st = attnmeta_build_step(a->shared, &s, NULL);
    if (st != ATTNMETA_OK) {
      st_failf("shared_context[%d] iteration %d: %s", a->id, i, attnmeta_status_string(st));
      bad++;
    } else if (!st_compare(b, &o, why, sizeof why)) {
      st_failf("shared_context[%d] iteration %d: %s", a->id, i, why);
      bad++;
    }
    st_outputs_free(&o);
  }
  return bad;
}

/* ---- shared_failures ---- */
static int shared_failures(const thread_arg *a) {
  int i, bad = 0;
  for (i = 0; i < a->iters; ++i) {
    const st_batch *b = &batches[(a->id * 7 + i) % NBATCHES];
    st_outputs o;
    attnmeta_step s;
    attnmeta_status st, want = ATTNMETA_OK;
    const char *word = NULL; /* a word this thread's message must contain */
    char why[256] = "";
    st_outputs_alloc(&o, b);
    st_step_fill(&s, b, &o, &o.error_word);
    switch ((a->id + i) % 4) {
      case 1:
        s.capacity = s.num_tokens - 1;
        want = s.num_tokens > 0 ? ATTNMETA_ERR_CAPACITY : ATTNMETA_OK;
        word = "capacity";
        break;
      case 2: s.dcp_rank = s.dcp_world_size; want = ATTNMETA_ERR_INVALID_ARGUMENT; word = "dcp_rank"; break;
      case 3: s.seq_lens = NULL; want = ATTNMETA_ERR_NULL_POINTER; word = "seq_lens"; break;
      default: break;
    }
    if (want == ATTNMETA_OK && s.capacity < s.num_tokens) s.capacity = s.num_tokens;
    st = attnmeta_build_step(a->shared, &s, NULL);
    if (st != want) {
      st_failf("shared_failures[%d] iteration %d: status %d, expected %d", a->id, i, (int)st,
               (int)want);
      bad++;
    } else if (st == ATTNMETA_OK && !st_compare(b, &o, why, sizeof why)) {
      st_failf("shared_failures[%d] iteration %d: %s", a->id, i, why);
      bad++;
    } else if (st != ATTNMETA_OK && o.error_word != 0) {
      st_failf("shared_failures[%d] iteration %d: a failed call wrote the error word", a->id, i);
      bad++;
    } else if (st == ATTNMETA_OK ? attnmeta_last_error(a->shared)[0] != '\0'
                                 : !strstr(attnmeta_last_error(a->shared), word)) {
      st_failf("shared_failures[%d] iteration %d: status %d but message \"%s\"", a->id, i,
               (int)st, attnmeta_last_error(a->shared));
      bad++;
    }
    st_outputs_free(&o);
  }
  return bad;
}

/* ---- open_close ---- */
static int open_close(const thread_arg *a) {
  int i, bad = 0, count = -1;
  char want[64];
  /* first use of the GPU modules, from every thread at once */
  if (attnmeta_backend_device_count(ATTNMETA_BACKEND_CUDA, &count) != ATTNMETA_OK || count < 0) bad++;
  if (attnmeta_backend_device_count(ATTNMETA_BACKEND_HIP, &count) != ATTNMETA_OK || count < 0) bad++;
  snprintf(want, sizeof want, "%d", 1000 + a->id);
  for (i = 0; i < a->iters; ++i) {
    attnmeta_context *ctx = NULL;
    attnmeta_status st = attnmeta_open(&ctx, ATTNMETA_BACKEND_CPU, 0);
    if (st != ATTNMETA_OK || !ctx || strcmp(attnmeta_context_device_name(ctx), "host CPU") != 0) {
      bad++;
    } else {
      attnmeta_close(ctx);
    }
    ctx = NULL;
    st = attnmeta_open(&ctx, ATTNMETA_BACKEND_CPU, 1000 + a->id);
    if (st != ATTNMETA_ERR_NO_DEVICE || ctx != NULL || !strstr(attnmeta_open_error(), want)) {
      if (bad < 3)
        st_failf("open_close[%d]: open of device %s: status %d, message \"%s\"", a->id, want,
                 (int)st, attnmeta_open_error());
      bad++;
    }
  }
  return bad;
}

static void run_threads(const char *name, int (*run)(const thread_arg *a),
                        attnmeta_context *shared, int32_t *shared_error_word, int iters) {
  pthread_t threads[NTHREADS];
  thread_arg args[NTHREADS];
  int i;
  pthread_barrier_init(&start_line, NULL, NTHREADS);
  for (i = 0; i < NTHREADS; ++i) {
    args[i].id = i;
    args[i].iters = iters;
    args[i].shared = shared;
    args[i].shared_error_word = shared_error_word;
    args[i].name = name;
    args[i].run = run;
    if (pthread_create(&threads[i], NULL, thread_main, &args[i]) != 0) {
      fprintf(stderr, "%s: cannot start a thread\n", name);
      exit(1);
    }
  }
  for (i = 0; i < NTHREADS; ++i) pthread_join(threads[i], NULL);
  pthread_barrier_destroy(&start_line);
  printf("%s: %d threads x %d iterations done\n", name, NTHREADS, iters);
}

int main(void) {
  const int iters = st_iters(60);
  uint64_t rng = 42;
  attnmeta_context *shared = NULL;
  attnmeta_launch_config c = attnmeta_launch_config_default();
  int32_t shared_error_word = 0, union_flags = 0;
  int i;

  run_threads("own_contexts", own_contexts, NULL, NULL, iters);

  for (i = 0; i < NBATCHES; ++i) {
    st_batch_make(&batches[i], &rng, i % 2);
    union_flags |= batches[i].ref_flags;
  }
  if (attnmeta_open(&shared, ATTNMETA_BACKEND_CPU, 0) != ATTNMETA_OK) {
    fprintf(stderr, "cannot open the CPU backend: %s\n", attnmeta_open_error());
    return 1;
  }
  c.grid = 3; /* several blocks per launch, set before the threads start */
  ST_EXPECT(attnmeta_set_launch_config(shared, &c) == ATTNMETA_OK, "set_launch_config");
  run_threads("shared_context", shared_context, shared, &shared_error_word,
              iters < NBATCHES ? NBATCHES : iters);
  ST_EXPECT(shared_error_word == union_flags,
            "shared error word 0x%x, union of the batches' flags 0x%x",
            (unsigned)shared_error_word, (unsigned)union_flags);
  run_threads("shared_failures", shared_failures, shared, NULL, iters);
  attnmeta_close(shared);
  for (i = 0; i < NBATCHES; ++i) st_batch_free(&batches[i]);

  run_threads("open_close", open_close, NULL, NULL, iters);
  return st_report();
}

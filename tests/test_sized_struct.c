// SPDX-License-Identifier: Apache-2.0
/*
 * The import of public structs that grow at their end (src/common/
 * sized_struct.c), on a made-up struct with two releases, so the older-
 * caller path is tested before attnmeta_step itself grows. Callers' structs
 * sit in exact-size allocations against an inaccessible page.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "am_sized_struct.h"
#include "guarded.h"

typedef struct thing_v1 {
  size_t struct_size;
  int32_t a, b;
  const void *p;
} thing_v1;

typedef struct thing_v2 {
  size_t struct_size;
  int32_t a, b;
  const void *p;
  int64_t c; /* appended in "v2" */
  int32_t d;
} thing_v2;

static const thing_v2 thing_defaults = {sizeof(thing_v2), 1, 2, NULL, -7, 9};
static const am_sized_type thing_type = {"thing", "thing_init", sizeof(thing_v2),
                                         _Alignof(thing_v2), sizeof(thing_v1), &thing_defaults};

/* sized_struct.c reports through am_fail; this test links it alone. */
static attnmeta_status failed_status;
static char failed_message[256];
attnmeta_status am_fail(attnmeta_context *ctx, attnmeta_status status, const char *fmt, ...) {
  va_list ap;
  (void)ctx;
  va_start(ap, fmt);
  vsnprintf(failed_message, sizeof failed_message, fmt, ap);
  va_end(ap);
  failed_status = status;
  return status;
}

Test(sized_struct, older_caller_gets_defaults_past_its_size) {
  thing_v1 *old = amt_guarded_alloc(sizeof *old);
  const int x = 3;
  thing_v2 full;
  cr_assert(old);
  old->struct_size = sizeof *old;
  old->a = 10;
  old->b = 20;
  old->p = &x;
  cr_assert_eq(am_sized_import(NULL, &thing_type, old, &full), ATTNMETA_OK);
  cr_expect(full.a == 10 && full.b == 20 && full.p == &x);
  cr_expect(full.c == -7 && full.d == 9, "c %lld d %d", (long long)full.c, full.d);
  amt_guarded_free(old, sizeof *old);
}

Test(sized_struct, current_caller_is_read_whole) {
  thing_v2 *cur = amt_guarded_alloc(sizeof *cur), full;
  cr_assert(cur);
  *cur = (thing_v2){sizeof(thing_v2), 4, 5, NULL, 6, 7};
  cr_assert_eq(am_sized_import(NULL, &thing_type, cur, &full), ATTNMETA_OK);
  cr_expect(full.a == 4 && full.b == 5 && full.c == 6 && full.d == 7);
  /* a size between the releases, even on a member boundary, is no release's */
  cur->struct_size = offsetof(thing_v2, d);
  memset(&full, 0x33, sizeof full);
  cr_assert_eq(am_sized_import(NULL, &thing_type, cur, &full), ATTNMETA_ERR_INVALID_ARGUMENT);
  cr_expect_eq(full.a, 0x33333333, "copy written");
  amt_guarded_free(cur, sizeof *cur);
}

Test(sized_struct, refused_sizes_leave_the_copy_alone) {
  static const size_t sizes[] = {0, 8, sizeof(thing_v1) - 8, sizeof(thing_v1) + 4,
                                 sizeof(thing_v2) + 8, SIZE_MAX};
  static const attnmeta_status want[] = {
      ATTNMETA_ERR_INVALID_ARGUMENT, ATTNMETA_ERR_INVALID_ARGUMENT, ATTNMETA_ERR_INVALID_ARGUMENT,
      ATTNMETA_ERR_INVALID_ARGUMENT, ATTNMETA_ERR_NOT_SUPPORTED,     ATTNMETA_ERR_NOT_SUPPORTED};
  size_t *bare = amt_guarded_alloc(sizeof(size_t));
  size_t i;
  cr_assert(bare);
  for (i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
    thing_v2 full;
    memset(&full, 0x33, sizeof full);
    *bare = sizes[i];
    failed_message[0] = '\0';
    cr_expect_eq(am_sized_import(NULL, &thing_type, bare, &full), want[i], "size %zu", sizes[i]);
    cr_expect(strstr(failed_message, "thing.struct_size") != NULL, "message: %s", failed_message);
    cr_expect_eq(full.a, 0x33333333, "size %zu: copy written", sizes[i]);
  }
  amt_guarded_free(bare, sizeof(size_t));
}

Test(sized_struct, init_writes_only_the_callers_size) {
  thing_v1 *old = amt_guarded_alloc(sizeof *old);
  thing_v2 cur;
  cr_assert(old);
  memset(old, 0x55, sizeof *old);
  cr_expect_eq(am_sized_init(&thing_type, old, sizeof *old), ATTNMETA_OK);
  cr_expect(old->struct_size == sizeof *old && old->a == 1 && old->b == 2 && old->p == NULL);
  memset(&cur, 0x55, sizeof cur);
  cr_expect_eq(am_sized_init(&thing_type, &cur, sizeof cur), ATTNMETA_OK);
  cr_expect(cur.struct_size == sizeof cur && cur.c == -7 && cur.d == 9);
  amt_guarded_free(old, sizeof *old);
}

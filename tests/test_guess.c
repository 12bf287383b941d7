// SPDX-License-Identifier: Apache-2.0
/*
 * The guesses of a token's request the kernel loads first. Any guess gives
 * the same bytes (the conformance vectors and the fuzzer check that); what
 * is checked here is the speed claim behind the host's choice: for T a
 * multiple of R the multiply-shift is exactly t / (T / R) for every
 * t < 2^31, so plain decode and equal query lengths never miss.
 */
#include <criterion/criterion.h>
#include <stdint.h>

#include "am_step_choices.h"
#include "am_token_math.h"
#include "cases.h"

/* Raw quotient of the guess, before the clamp to the last request. */
static uint64_t raw_guess(uint32_t t, uint32_t mul, int32_t shift) {
  return am_guess_req(t, mul, shift, UINT32_MAX);
}

static void check_divisor(int32_t reqs, int32_t tokens) {
  const uint32_t d = (uint32_t)(tokens / reqs);
  const uint32_t edges[] = {0, 1, 2, 0x7FFFFFFFu, 0x7FFFFFFEu, 0x40000000u};
  uint32_t mul;
  int32_t shift;
  uint64_t seed = d;
  int k;
  am_pick_guess(reqs, tokens, &mul, &shift);
  for (k = 0; k < (int)(sizeof edges / sizeof edges[0]); ++k)
    cr_assert_eq(raw_guess(edges[k], mul, shift), edges[k] / d, "d=%u t=%u", d, edges[k]);
  for (k = 1; k < 64; ++k) { /* around multiples of d, where rounding would show */
    const uint64_t m = (uint64_t)k * d;
    uint64_t t;
    for (t = m > 2 ? m - 2 : 0; t <= m + 2 && t < 0x80000000u; ++t)
      cr_assert_eq(raw_guess((uint32_t)t, mul, shift), t / d, "d=%u t=%llu", d,
                   (unsigned long long)t);
  }
  for (k = 0; k < 20000; ++k) {
    const uint32_t t = (uint32_t)(amt_rand(&seed) >> 33); /* below 2^31 */
    cr_assert_eq(raw_guess(t, mul, shift), t / d, "d=%u t=%u", d, t);
  }
}

Test(guess, multiply_shift_is_exact_division_for_equal_splits) {
  static const int32_t divisors[] = {1,     2,        3,       4,        5,          6,
                                     7,     8,        9,       16,       17,         100,
                                     255,   256,      257,     1000,     65535,      65536,
                                     65537, 1000003,  1 << 24, (1 << 24) + 1, 1 << 30, INT32_MAX};
  int i;
  for (i = 0; i < (int)(sizeof divisors / sizeof divisors[0]); ++i) {
    check_divisor(1, divisors[i]);                                /* one request */
    if (divisors[i] <= INT32_MAX / 3) check_divisor(3, 3 * divisors[i]); /* three */
  }
}

Test(guess, one_token_per_request_when_not_a_multiple) {
  uint32_t mul;
  int32_t shift;
  uint32_t t;
  am_pick_guess(16, 113, &mul, &shift); /* 16 x 6 + 17 padding tokens */
  for (t = 0; t < 1000; ++t) cr_assert_eq(raw_guess(t, mul, shift), t);
  am_pick_guess(0, 5, &mul, &shift); /* no requests */
  cr_assert_eq(raw_guess(7, mul, shift), 7);
}

Test(guess, clamped_to_the_last_request_for_any_parameters) {
  static const uint32_t muls[] = {0, 1, 0x80000000u, 0xFFFFFFFFu};
  static const int32_t shifts[] = {-64, -1, 0, 31, 63, 64, 1000};
  uint32_t i, j, t;
  for (i = 0; i < 4; ++i)
    for (j = 0; j < 7; ++j)
      for (t = 0; t < 2000; t += 37) cr_assert_leq(am_guess_req(t, muls[i], shifts[j], 4), 4);
}

Test(guess, second_guess_from_the_total_stays_in_range) {
  static const int32_t totals[] = {1, 2, 7, 96, 1000, INT32_MAX};
  uint32_t r, i, t;
  for (r = 1; r <= 300; r += 37)
    for (i = 0; i < 6; ++i)
      for (t = 0; t < 5000 && (int32_t)t < totals[i]; t += 3)
        cr_assert_lt(am_total_guess(t, r, totals[i]), r, "R=%u total=%d t=%u", r, totals[i], t);
  /* equal lengths behind padding: exact */
  for (t = 0; t < 96; ++t) cr_assert_eq(am_total_guess(t, 16, 96), t / 6);
}

/* Test code whose unsigned arithmetic wraps on purpose (the PRNGs): exempt
 * from clang's unsigned-integer-overflow check, which ci/sanitize.sh's clang
 * stage enables everywhere else. */
#ifndef ATTNMETA_TESTS_AMT_WRAPS_H
#define ATTNMETA_TESTS_AMT_WRAPS_H

#if defined(__clang__)
#define AMT_WRAPS __attribute__((no_sanitize("unsigned-integer-overflow")))
#else
#define AMT_WRAPS
#endif

#endif /* ATTNMETA_TESTS_AMT_WRAPS_H */

/* What a cold line of code costs on this machine: chains of jumps, one jump a 64-byte line,
 * written at run time into executable memory and called once after the caches were flushed by
 * streaming a large buffer (as the bench's cold mode does), the call timed with rdtscp.
 *
 *   gcc -O2 -o /tmp/code_fetch tools/acl_side_by_side/code_fetch.c && /tmp/code_fetch [ROUNDS] [MiB]
 *
 * Chains: an empty function (the fixed cost of a cold call: its line, its page, the stack); N
 * lines in address order; the same lines in a shuffled order; N lines in order spread over more
 * pages (every fourth line). Prints the median ticks and nanoseconds of each, and the cost per
 * line above the empty call. docs/PERFORMANCE.md ("Lines of code per pose, the three sides counted") has the figures.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <x86intrin.h>

enum { LINE = 64, MAX_LINES = 4096 };

static uint64_t ticks(void) {
  unsigned aux;
  _mm_lfence();
  uint64_t t = __rdtscp(&aux);
  _mm_lfence();
  return t;
}

static double ns_per_tick(void) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  uint64_t t0 = ticks();
  do clock_gettime(CLOCK_MONOTONIC, &b);
  while ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec) < 2e8);
  uint64_t t1 = ticks();
  return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double)(t1 - t0);
}

/* Writes a chain through the lines `at[0], at[1], ...` (line indices into `code`): a jump from
 * each to the next, a return in the last. */
static void chain(uint8_t *code, const int *at, int n) {
  for (int i = 0; i < n; i++) {
    uint8_t *p = code + (size_t)at[i] * LINE;
    if (i + 1 == n) {
      p[0] = 0xc3; /* ret */
    } else {
      int32_t rel = (int32_t)(((int64_t)at[i + 1] - at[i]) * LINE - 5);
      p[0] = 0xe9; /* jmp rel32 */
      memcpy(p + 1, &rel, 4);
    }
  }
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 40;
  size_t evict = (size_t)(argc > 2 ? atoi(argv[2]) : 600) << 20;
  if (rounds < 1 || rounds > 10000 || evict == 0) {
    fprintf(stderr, "usage: code_fetch [ROUNDS 1-10000] [MiB to stream]\n");
    return 2;
  }
  volatile uint64_t *buf = malloc(evict);
  if (!buf) return 1;
  memset((void *)buf, 1, evict);

  enum { KINDS = 7 };
  const char *names[KINDS] = {"empty",           "50 in order",     "100 in order",
                              "200 in order",    "400 in order",    "200 shuffled",
                              "200 in order, every 4th line"};
  const int lines[KINDS] = {1, 50, 100, 200, 400, 200, 200};
  uint8_t *code[KINDS];
  int *at = malloc(sizeof(int) * MAX_LINES);
  srand(1);
  for (int k = 0; k < KINDS; k++) {
    size_t bytes = (size_t)MAX_LINES * LINE;
    code[k] = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code[k] == MAP_FAILED) return 1;
    memset(code[k], 0xcc, bytes); /* int3 between the lines */
    for (int i = 0; i < lines[k]; i++) at[i] = k == 6 ? 4 * i : i;
    if (k == 5) /* the first line stays the entry */
      for (int i = lines[k] - 1; i > 1; i--) {
        int j = 1 + rand() % i, t = at[i];
        at[i] = at[j];
        at[j] = t;
      }
    chain(code[k], at, lines[k]);
    if (mprotect(code[k], bytes, PROT_READ | PROT_EXEC)) return 1;
  }

  uint64_t (*t)[KINDS] = malloc(sizeof(uint64_t) * KINDS * rounds);
  for (int r = 0; r < rounds; r++)
    for (int k = 0; k < KINDS; k++) {
      uint64_t sum = 0;
      for (size_t i = 0; i < evict / 8; i += 8) sum += buf[i];
      if (sum == 42) puts("");
      void (*f)(void) = (void (*)(void))code[k];
      uint64_t a = ticks();
      f();
      t[r][k] = ticks() - a;
    }
  double ns = ns_per_tick();
  uint64_t med[KINDS];
  uint64_t *col = malloc(sizeof(uint64_t) * rounds);
  for (int k = 0; k < KINDS; k++) {
    for (int r = 0; r < rounds; r++) col[r] = t[r][k];
    qsort(col, rounds, sizeof(uint64_t), cmp_u64);
    med[k] = col[rounds / 2];
    double per = k ? (double)(med[k] - med[0]) * ns / lines[k] : 0;
    printf("%-30s cold median %6lu ticks %7.0f ns", names[k], (unsigned long)med[k], med[k] * ns);
    if (k) printf("  %5.1f ns a line above the empty call", per);
    printf("\n");
  }
  return 0;
}

// A workload with real state: it fills N MiB with pseudo-random data, keeps their checksum in a
// separate variable, then ticks until a flag file appears. It then recomputes the checksum of
// the memory and prints PASS (exit 0) or FAIL (exit 1): after a dump and restore the memory
// must be exactly what it was. Usage: memstate MIB FLAG_FILE [CHILDREN [compressible]]
// With CHILDREN > 0 it forks that many children that do the same with MIB/CHILDREN each
// (a process tree of 1+CHILDREN), and the parent passes only if every child passed. With
// "compressible", six bytes of every eight are zero: data that compression shrinks, which is
// stored compressed rather than raw.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static uint64_t keep_bits = ~0ull;  // which bits of the pseudo-random words are kept

static uint64_t Fill(uint64_t* mem, size_t words, uint64_t seed) {
  uint64_t x = seed, sum = 0;
  for (size_t i = 0; i < words; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;  // xorshift64
    mem[i] = x & keep_bits;
    sum = sum * 31 + mem[i];
  }
  return sum;
}

static uint64_t Sum(const uint64_t* mem, size_t words) {
  uint64_t sum = 0;
  for (size_t i = 0; i < words; i++) sum = sum * 31 + mem[i];
  return sum;
}

static int Run(size_t mib, const char* flag, uint64_t seed, const char* who) {
  size_t words = mib * 1024 * 1024 / sizeof(uint64_t);
  uint64_t* mem = malloc(words * sizeof(uint64_t));
  if (!mem) {
    printf("%s: FAIL cannot allocate %zu MiB\n", who, mib);
    return 1;
  }
  uint64_t expect = Fill(mem, words, seed);
  printf("%s: ready %zu MiB\n", who, mib);
  fflush(stdout);
  long ticks = 0;
  while (access(flag, F_OK) != 0) {
    usleep(100000);
    ticks++;
  }
  uint64_t got = Sum(mem, words);
  printf("%s: %s checksum %016llx ticks %ld\n", who, got == expect ? "PASS" : "FAIL",
         (unsigned long long)got, ticks);
  fflush(stdout);
  return got == expect ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: memstate MIB FLAG_FILE [CHILDREN [compressible]]\n");
    return 2;
  }
  size_t mib = strtoul(argv[1], NULL, 10);
  int children = argc > 3 ? atoi(argv[3]) : 0;
  if (argc > 4 && strcmp(argv[4], "compressible") == 0) keep_bits = 0xffff;
  if (children == 0) return Run(mib, argv[2], 0x9E3779B97F4A7C15ull, "main");
  for (int c = 0; c < children; c++) {
    if (fork() == 0) {
      char who[32];
      snprintf(who, sizeof who, "child%d", c);
      _exit(Run(mib / children, argv[2], 0x9E3779B97F4A7C15ull + c, who));
    }
  }
  int failed = 0, status;
  for (int c = 0; c < children; c++) {
    wait(&status);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed++;
  }
  printf("main: %s (%d of %d children failed)\n", failed ? "FAIL" : "PASS", failed, children);
  return failed ? 1 : 0;
}

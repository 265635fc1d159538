// Benchmark workload: holds MIB of resident memory, then sleeps until killed.
// Usage: memfill MIB random|typical|doubles [CHILDREN]
//   random   incompressible (xorshift64)
//   doubles  arrays of doubles: a smooth field plus noise, as a simulation holds them; the
//            sign and exponent bytes repeat, the mantissas do not (lz4 and zstd save < 10%)
//   typical  about 3:1 compressible with zstd -1: text-like records with varying numbers,
//            the shape of a simulation's state dumps and logs
// With CHILDREN > 0 the memory is split across 1 + CHILDREN processes (a process tree).
// Prints "ready" once every process has touched all its memory. SIGUSR1 makes the first process
// rewrite a contiguous tenth of its memory (from 45% to 55%) with fresh data of the same kind,
// as a step of a simulation changes part of its state, and print "changed N" (N counts them).
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static uint64_t Xorshift64(uint64_t* x) {
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

static void FillRandom(unsigned char* mem, size_t bytes, uint64_t seed) {
  uint64_t x = seed;
  for (size_t i = 0; i + 8 <= bytes; i += 8) {
    uint64_t r = Xorshift64(&x);
    memcpy(mem + i, &r, 8);
  }
}

static void FillTypical(unsigned char* mem, size_t bytes, uint64_t seed) {
  static const char* words[] = {"step", "energy",   "particle", "velocity", "cell",
                                "flux", "pressure", "boundary", "residual", "iteration"};
  uint64_t x = seed;
  size_t off = 0;
  while (off < bytes) {
    Xorshift64(&x);
    char line[96];
    int n =
        snprintf(line, sizeof line, "%s=%llu %s=%llu.%03llu\n", words[x % 10],
                 (unsigned long long)(x >> 40), words[(x >> 8) % 10],
                 (unsigned long long)((x >> 20) & 0xffff), (unsigned long long)((x >> 4) % 1000));
    size_t take = (size_t)n < bytes - off ? (size_t)n : bytes - off;
    memcpy(mem + off, line, take);
    off += take;
  }
}

static void FillDoubles(unsigned char* mem, size_t bytes, uint64_t seed) {
  uint64_t x = seed;
  for (size_t i = 0; i + 8 <= bytes; i += 8) {
    double noise = (double)(Xorshift64(&x) >> 11) / 9007199254740992.0;  // [0, 1)
    double v = 1000.0 * sin((double)(i / 8) * 1e-4) + 1e-3 * noise;
    memcpy(mem + i, &v, 8);
  }
}

// Where the memory stays reachable: without it the compiler may drop the stores of memory that
// is never read again (it did, for the random fill), and nothing would be resident.
unsigned char* volatile g_held;
static volatile sig_atomic_t g_change_asked;

static void AskChange(int sig) {
  (void)sig;
  g_change_asked = 1;
}

enum Kind { kRandom, kTypical, kDoubles };

static void Fill(unsigned char* mem, size_t bytes, enum Kind kind, uint64_t seed) {
  if (kind == kTypical) FillTypical(mem, bytes, seed);
  else if (kind == kDoubles) FillDoubles(mem, bytes, seed);
  else FillRandom(mem, bytes, seed);
}

static void Hold(size_t mib, enum Kind kind, uint64_t seed) {
  size_t bytes = mib << 20;
  unsigned char* mem = malloc(bytes);
  if (!mem) {
    fprintf(stderr, "memfill: cannot allocate %zu MiB\n", mib);
    exit(1);
  }
  Fill(mem, bytes, kind, seed);
  g_held = mem;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: memfill MIB random|typical|doubles [CHILDREN]\n");
    return 2;
  }
  size_t mib = strtoul(argv[1], NULL, 10);
  enum Kind kind = strcmp(argv[2], "typical") == 0   ? kTypical
                   : strcmp(argv[2], "doubles") == 0 ? kDoubles
                                                     : kRandom;
  int children = argc > 3 ? atoi(argv[3]) : 0;
  size_t share = mib / (size_t)(children + 1);
  int ready[2];
  if (pipe(ready) != 0) return 1;
  for (int c = 0; c < children; c++) {
    if (fork() == 0) {
      Hold(share, kind, 0x9E3779B97F4A7C15ull + (uint64_t)c + 1);
      if (write(ready[1], "x", 1) != 1) _exit(1);
      for (;;) pause();
    }
  }
  // SIGUSR1 stays blocked but in sigsuspend: a request never falls between a check and a wait.
  sigset_t usr1, waiting;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  sigprocmask(SIG_BLOCK, &usr1, &waiting);
  signal(SIGUSR1, AskChange);
  Hold(share, kind, 0x9E3779B97F4A7C15ull);
  for (int c = 0; c < children; c++) {
    char b;
    if (read(ready[0], &b, 1) != 1) return 1;
  }
  close(ready[0]);
  close(ready[1]);
  printf("ready\n");
  fflush(stdout);
  size_t bytes = share << 20;
  for (unsigned changes = 1;; changes++) {
    while (!g_change_asked) sigsuspend(&waiting);
    g_change_asked = 0;
    // Page-aligned, so that exactly a tenth of the pages differ.
    size_t from = bytes * 45 / 100 / 4096 * 4096, to = bytes * 55 / 100 / 4096 * 4096;
    Fill(g_held + from, to - from, kind, 0xD1B54A32D192ED03ull * changes);
    printf("changed %u\n", changes);
    fflush(stdout);
  }
}

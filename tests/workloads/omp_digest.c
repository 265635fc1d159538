// A multi-threaded job: STEPS steps, each updating an array in parallel (OpenMP, the threads
// OMP_NUM_THREADS says) with integer arithmetic, so that the result does not depend on how the
// work was split. Prints "step N" every 0.1 s and, at the end, "final digest D": a run dumped
// and restored part-way must print the digest of an uninterrupted run. Usage: omp_digest STEPS
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N (1 << 20)

static uint64_t a[N];

int main(int argc, char** argv) {
  const int steps = argc > 1 ? atoi(argv[1]) : 100;
  for (int i = 0; i < N; ++i) a[i] = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
  printf("threads %d\n", omp_get_max_threads());
  for (int step = 0; step < steps; ++step) {
#pragma omp parallel for schedule(static)
    for (int i = 0; i < N; ++i) a[i] = (a[i] ^ (a[i] >> 29)) * 0x100000001b3ull + (uint64_t)step;
    printf("step %d\n", step);
    fflush(stdout);
    struct timespec pause = {0, 100 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  uint64_t digest = 0;
#pragma omp parallel for reduction(+ : digest)
  for (int i = 0; i < N; ++i) digest += a[i] * (uint64_t)(i | 1);
  printf("final digest %016llx\n", (unsigned long long)digest);
  return 0;
}

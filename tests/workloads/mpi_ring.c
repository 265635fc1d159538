// A 2+-rank MPI program whose ranks exchange data every step: each passes its state to the
// next rank around a ring (MPI_Sendrecv) and mixes in what it got. Rank 0 prints "step N" every
// 0.1 s and, after STEPS steps, "final digest D": a run dumped and restored part-way must print
// the digest of an uninterrupted run. Usage: mpi_ring STEPS
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = argc > 1 ? atoi(argv[1]) : 100;
  uint64_t state = 0x9e3779b97f4a7c15ull * (uint64_t)(rank + 1);
  for (int step = 0; step < steps; ++step) {
    uint64_t got = 0;
    MPI_Sendrecv(&state, 1, MPI_UINT64_T, (rank + 1) % size, 0, &got, 1, MPI_UINT64_T,
                 (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    state = (state ^ (got >> 1)) * 0x100000001b3ull + (uint64_t)(step * size + rank);
    if (rank == 0) {
      printf("step %d\n", step);
      fflush(stdout);
    }
    struct timespec pause = {0, 100 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  uint64_t digest = 0;
  MPI_Reduce(&state, &digest, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("final digest %016llx\n", (unsigned long long)digest);
  MPI_Finalize();
  return 0;
}

// An MPI program for the srun tests: every rank adds its rank number in an MPI_Allreduce, so
// it only prints once the ranks found each other through SLURM's PMI2 (srun --mpi=pmi2).
#include <mpi.h>
#include <stdio.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, sum = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("rank %d of %d sum %d\n", rank, size, sum);
  MPI_Finalize();
  return 0;
}

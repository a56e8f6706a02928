#!/bin/sh
# mpi_library_version: under mpirun -np 2 each rank's info log names the MPI library by the
# first line of MPI_Get_library_version up to its first comma ("engine MPI, Open MPI
# v4.1.4"; mpi_plugin.c p_init). The seed-2026 mutant `v[i] == ','` made `!=` cut the
# name at its first character, so no rank named its MPI.
#   library_version.sh MPIRUN ARGS... (the command line of a 2-rank run)
out=$("$@" 2>&1) || { printf '%s\n' "$out"; echo "FAILED: the run failed" >&2; exit 1; }
n=$(printf '%s\n' "$out" | grep -a 'dist: rank' | grep -Ec 'engine MPI, [A-Za-z][^,]* v?[0-9][^,]*$')
if [ "$n" -ne 2 ]; then
    printf '%s\n' "$out" | grep -a 'dist: rank'
    echo "FAILED: $n of 2 ranks name their MPI library (want \"engine MPI, <name> <version>\")" >&2
    exit 1
fi
echo "ok: both ranks name their MPI library"

/* Allocation-heavy block refinement, shaped like AMR mini-apps (miniAMR):
 * an array of block structs, each holding one array per variable;
 * refinement frees a block's arrays and allocates new ones through a
 * counting allocator wrapper, storing the result straight into the
 * struct's field (blocks[b].array[v] = ma_malloc(...)), then the new
 * arrays are filled, a stencil smooths them, and an equation of state
 * computes each block's pressure from its density, momentum and energy,
 * the variables named by constants (blocks[b].array[VAR_PRESSURE]).  Used
 * by test/programs/check_programs.sh, which states the expected answers.
 *
 *   amr_alloc [CYCLES]     (default 60)
 *
 * Work per cycle: NBLOCKS x NVARS arrays of up to 48 KiB are freed and
 * allocated (each allocation touched by the fill: the page faults and
 * zeroing are the allocator's and the kernel's), then filled, then
 * smoothed twice, then the equation of state reads three variables and
 * writes a fourth per cell.  The allocations and fills take most of the
 * time; all of it is work on blocks[].array. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NBLOCKS = 64, NVARS = 8, MAX_CELLS = 6144 };
/* The variables of a block, as hydrodynamics codes name them. */
enum variable { VAR_DENSITY, VAR_MOMENTUM, VAR_ENERGY, VAR_PRESSURE };
#define GAMMA 1.4

struct block {
    int level;
    int cells;
    double *array[NVARS]; /* one array per variable */
};

static size_t bytes_allocated, allocations;

/* The app's allocator wrapper: counts, then allocates. */
static void *ma_malloc(size_t size)
{
    bytes_allocated += size;
    allocations++;
    void *p = malloc(size);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

static void refine(struct block *blocks, int cycle)
{
    for (int b = 0; b < NBLOCKS; b++) {
        blocks[b].level = (blocks[b].level + b + cycle) % 4;
        blocks[b].cells = MAX_CELLS >> blocks[b].level;
        for (int v = 0; v < NVARS; v++) {
            free(blocks[b].array[v]);
            blocks[b].array[v] = ma_malloc(sizeof(double) * (size_t)blocks[b].cells);
            memset(blocks[b].array[v], 0, sizeof(double) * (size_t)blocks[b].cells);
        }
    }
}

static void fill(struct block *blocks, int cycle)
{
#pragma omp parallel for schedule(static)
    for (int b = 0; b < NBLOCKS; b++)
        for (int v = 0; v < NVARS; v++)
            for (int c = 0; c < blocks[b].cells; c++)
                blocks[b].array[v][c] = (double)((b * 7 + v * 3 + c + cycle) % 11);
}

static double smooth(struct block *blocks)
{
    double total = 0;
#pragma omp parallel for schedule(static) reduction(+ : total)
    for (int b = 0; b < NBLOCKS; b++)
        for (int v = 0; v < NVARS; v++) {
            double *u = blocks[b].array[v];
            for (int c = 1; c < blocks[b].cells - 1; c++) {
                u[c] = (u[c - 1] + 2 * u[c] + u[c + 1]) * 0.25;
                total += u[c];
            }
        }
    return total;
}

/* The ideal-gas equation of state: pressure from density, momentum and
 * total energy, cell by cell (1 + density: the fills make densities 0 to 10). */
static void equation_of_state(struct block *blocks)
{
#pragma omp parallel for schedule(static)
    for (int b = 0; b < NBLOCKS; b++) {
        const double *rho = blocks[b].array[VAR_DENSITY];
        const double *mom = blocks[b].array[VAR_MOMENTUM];
        const double *energy = blocks[b].array[VAR_ENERGY];
        double *pressure = blocks[b].array[VAR_PRESSURE];
        for (int c = 0; c < blocks[b].cells; c++)
            pressure[c] = (GAMMA - 1) * (energy[c] - 0.5 * mom[c] * mom[c] / (rho[c] + 1.0));
    }
}

int main(int argc, char **argv)
{
    int cycles = argc > 1 ? atoi(argv[1]) : 60;
    struct block *blocks = calloc(NBLOCKS, sizeof *blocks);
    double checksum = 0;
    for (int cycle = 0; cycle < cycles; cycle++) {
        refine(blocks, cycle);
        fill(blocks, cycle);
        checksum += smooth(blocks);
        checksum += smooth(blocks);
        equation_of_state(blocks);
        checksum += blocks[cycle % NBLOCKS].array[VAR_PRESSURE][0];
    }
    printf("cycles %d allocations %zu bytes %zu checksum %.3f\n", cycles, allocations,
           bytes_allocated, checksum);
    for (int b = 0; b < NBLOCKS; b++)
        for (int v = 0; v < NVARS; v++)
            free(blocks[b].array[v]);
    free(blocks);
    return 0;
}

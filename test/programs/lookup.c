/* A cross-section lookup kernel shaped like XSBench's event-based mode: a
 * struct of large tables, a binary search on each nuclide's energy grid,
 * interpolation into a small scratch vector, accumulation into a
 * macroscopic vector, and a verification checksum reduced over an OpenMP
 * parallel for.  Used by test/programs/check_programs.sh, which states the
 * expected answers.
 *
 *   lookup [LOOKUPS]      (default 400000)
 *
 * Work: each lookup visits the nuclides of one material (4 to 32, 12 on
 * average), and for each a binary search over GRIDPOINTS energies (11
 * steps, each a cache-missing read of .energy) then an interpolation of 5
 * cross sections from two adjacent grid points (on the same lines), so the
 * search reads .energy 11 times where the interpolation reads 10 values
 * already in cache.  Set-up (filling and sorting the tables) is under 2%
 * of the lookups' work at the default size. */
#include <stdio.h>
#include <stdlib.h>

enum { ISOTOPES = 96, GRIDPOINTS = 2048, MATERIALS = 12, XS_KINDS = 5 };

struct grid_point {
    double energy;
    double total_xs;
    double elastic_xs;
    double absorption_xs;
    double fission_xs;
    double nu_fission_xs;
};

struct simulation_data {
    int n_isotopes;
    int n_gridpoints;
    struct grid_point *nuclide_grid; /* n_isotopes rows of n_gridpoints, by energy */
    int *num_nucs;                   /* nuclides per material */
    int *mats;                       /* material x max_num_nucs: nuclide ids */
    double *concs;                   /* material x max_num_nucs: concentrations */
    int max_num_nucs;
};

static unsigned long long lcg(unsigned long long *seed)
{
    *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
    return *seed >> 11;
}

static double uniform(unsigned long long *seed)
{
    return (double)lcg(seed) / (double)(1ull << 53);
}

static int compare_points(const void *a, const void *b)
{
    double x = ((const struct grid_point *)a)->energy, y = ((const struct grid_point *)b)->energy;
    return (x > y) - (x < y);
}

static void build_tables(struct simulation_data *sd)
{
    unsigned long long seed = 42;
    sd->n_isotopes = ISOTOPES;
    sd->n_gridpoints = GRIDPOINTS;
    sd->nuclide_grid = malloc(sizeof *sd->nuclide_grid * ISOTOPES * GRIDPOINTS);
    for (long i = 0; i < (long)ISOTOPES * GRIDPOINTS; i++) {
        struct grid_point *p = &sd->nuclide_grid[i];
        p->energy = uniform(&seed);
        p->total_xs = uniform(&seed);
        p->elastic_xs = uniform(&seed);
        p->absorption_xs = uniform(&seed);
        p->fission_xs = uniform(&seed);
        p->nu_fission_xs = uniform(&seed);
    }
    for (int n = 0; n < ISOTOPES; n++)
        qsort(&sd->nuclide_grid[(long)n * GRIDPOINTS], GRIDPOINTS, sizeof *sd->nuclide_grid,
              compare_points);
    sd->max_num_nucs = 32;
    sd->num_nucs = malloc(sizeof *sd->num_nucs * MATERIALS);
    sd->mats = malloc(sizeof *sd->mats * MATERIALS * sd->max_num_nucs);
    sd->concs = malloc(sizeof *sd->concs * MATERIALS * sd->max_num_nucs);
    for (int m = 0; m < MATERIALS; m++) {
        sd->num_nucs[m] = 4 + (int)(lcg(&seed) % 29);
        for (int j = 0; j < sd->num_nucs[m]; j++) {
            sd->mats[m * sd->max_num_nucs + j] = (int)(lcg(&seed) % ISOTOPES);
            sd->concs[m * sd->max_num_nucs + j] = uniform(&seed);
        }
    }
}

/* The last grid point at or below energy e, by bisection. */
static long grid_search(long n, double e, const struct grid_point *grid)
{
    long lower = 0, upper = n - 1;
    while (upper - lower > 1) {
        long mid = lower + (upper - lower) / 2;
        if (grid[mid].energy > e)
            upper = mid;
        else
            lower = mid;
    }
    return lower;
}

/* One nuclide's microscopic cross sections at energy e, interpolated. */
static void micro_xs(double e, int nuc, const struct simulation_data *sd, double *xs_vector)
{
    const struct grid_point *row = &sd->nuclide_grid[(long)nuc * sd->n_gridpoints];
    long idx = grid_search(sd->n_gridpoints, e, row);
    if (idx >= sd->n_gridpoints - 1)
        idx = sd->n_gridpoints - 2;
    const struct grid_point *low = &row[idx], *high = &row[idx + 1];
    double f = (high->energy - e) / (high->energy - low->energy);
    xs_vector[0] = high->total_xs - f * (high->total_xs - low->total_xs);
    xs_vector[1] = high->elastic_xs - f * (high->elastic_xs - low->elastic_xs);
    xs_vector[2] = high->absorption_xs - f * (high->absorption_xs - low->absorption_xs);
    xs_vector[3] = high->fission_xs - f * (high->fission_xs - low->fission_xs);
    xs_vector[4] = high->nu_fission_xs - f * (high->nu_fission_xs - low->nu_fission_xs);
}

/* A material's macroscopic cross sections: its nuclides' sum, weighted. */
static void macro_xs(double e, int mat, const struct simulation_data *sd, double *macro_xs_vector)
{
    for (int k = 0; k < XS_KINDS; k++)
        macro_xs_vector[k] = 0;
    for (int j = 0; j < sd->num_nucs[mat]; j++) {
        double xs[XS_KINDS];
        int nuc = sd->mats[mat * sd->max_num_nucs + j];
        double conc = sd->concs[mat * sd->max_num_nucs + j];
        micro_xs(e, nuc, sd, xs);
        for (int k = 0; k < XS_KINDS; k++)
            macro_xs_vector[k] += xs[k] * conc;
    }
}

int main(int argc, char **argv)
{
    long lookups = argc > 1 ? atol(argv[1]) : 400000;
    struct simulation_data sd;
    build_tables(&sd);
    unsigned long verification = 0;
#pragma omp parallel for schedule(static) reduction(+ : verification)
    for (long i = 0; i < lookups; i++) {
        unsigned long long seed = 0x9e3779b97f4a7c15ull * (unsigned long long)(i + 1);
        double e = uniform(&seed);
        int mat = (int)(lcg(&seed) % MATERIALS);
        double macro_xs_vector[XS_KINDS];
        macro_xs(e, mat, &sd, macro_xs_vector);
        /* as XSBench: the index of the largest cross section */
        int max_idx = 0;
        for (int k = 1; k < XS_KINDS; k++)
            if (macro_xs_vector[k] > macro_xs_vector[max_idx])
                max_idx = k;
        verification += (unsigned long)max_idx + 1;
    }
    printf("lookups %ld verification %lu\n", lookups, verification);
    free(sd.nuclide_grid);
    free(sd.num_nucs);
    free(sd.mats);
    free(sd.concs);
    return 0;
}

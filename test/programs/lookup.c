/* A cross-section lookup mini-app shaped like XSBench's event-based mode:
 * a struct of large tables (one energy grid per nuclide), composition
 * tables (nuclides per material, their number densities), a binary search
 * on each nuclide's energy grid, interpolation into a small scratch vector,
 * accumulation into a macroscopic vector, and a verification hash reduced
 * over an OpenMP parallel for.  Used by test/programs/check_programs.sh,
 * which states the expected answers.
 *
 *   lookup [-l LOOKUPS] [-g GRIDPOINTS] [-n NUCLIDES] [-s SEED] [-h]
 *
 * Work: each lookup picks a material by the fraction of the core it
 * fills and visits its nuclides (2 to 40, 15.7 on average), and for each
 * a binary search over GRIDPOINTS energies (11 steps by default, each a
 * cache-missing read of .energy in a 9 MiB table), then an interpolation
 * of 5 cross sections from two adjacent grid points (on the same lines),
 * so the search reads .energy 11 times where the interpolation reads 10
 * values already in cache.  Set-up (filling and sorting the grids) is 1
 * to 2% of the work at the default size; the composition tables (12
 * materials, 111 nuclides in all) are a few hundred draws of it, and the
 * lookups only read them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { XS_KINDS = 5, MATERIALS = 12, MAX_NUCS_PER_MATERIAL = 40 };

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
    double *concs;                   /* material x max_num_nucs: atoms per barn-cm */
    double *densities;               /* per material, g/cm^3 */
    int max_num_nucs;
};

struct inputs {
    long lookups;
    int n_isotopes;
    int n_gridpoints;
    unsigned long long seed;
};

/* The core's regions: how many nuclides each is made of, its density and
 * the fraction of the lookups that land in it (a reactor-like mix where
 * the fuel has most nuclides and the water most volume). */
static const struct {
    const char *name;
    int nuclides;
    double density;
    double fraction;
} material_spec[MATERIALS] = {
    {"fuel", 40, 10.4, 0.30},        {"cladding", 6, 6.5, 0.10},
    {"coolant", 3, 0.75, 0.30},      {"gap", 2, 0.001, 0.02},
    {"guide tube", 6, 6.5, 0.04},    {"reflector", 9, 1.0, 0.06},
    {"control rod", 5, 10.2, 0.02},  {"lower plate", 7, 7.9, 0.03},
    {"upper plate", 7, 7.9, 0.03},   {"baffle", 8, 7.9, 0.04},
    {"barrel", 8, 7.9, 0.03},        {"shield", 10, 7.8, 0.03},
};

static void usage(const char *prog, FILE *to)
{
    fprintf(to,
            "usage: %s [-l LOOKUPS] [-g GRIDPOINTS] [-n NUCLIDES] [-s SEED] [-h]\n"
            "  -l LOOKUPS     cross-section lookups (default 800000)\n"
            "  -g GRIDPOINTS  energy points per nuclide, at least 2 (default 2048)\n"
            "  -n NUCLIDES    nuclides, at least %d (default 96)\n"
            "  -s SEED        seed of the table generator (default 42)\n"
            "  -h             this message\n",
            prog, MAX_NUCS_PER_MATERIAL);
}

/* A whole decimal number in [min, max], or exit with the usage. */
static long number_arg(const char *prog, const char *opt, const char *s, long min, long max)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < min || v > max) {
        fprintf(stderr, "%s: %s wants a number from %ld to %ld, not '%s'\n", prog, opt, min, max,
                s);
        usage(prog, stderr);
        exit(1);
    }
    return v;
}

static struct inputs parse_inputs(int argc, char **argv)
{
    struct inputs in = {800000, 96, 2048, 42};
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i];
        if (strcmp(opt, "-h") == 0) {
            usage(argv[0], stdout);
            exit(0);
        }
        if (strlen(opt) != 2 || opt[0] != '-' || !strchr("lgns", opt[1]) || i + 1 >= argc) {
            fprintf(stderr, "%s: unknown option or missing value: %s\n", argv[0], opt);
            usage(argv[0], stderr);
            exit(1);
        }
        const char *val = argv[++i];
        switch (opt[1]) {
        case 'l': in.lookups = number_arg(argv[0], opt, val, 1, 1000000000L); break;
        case 'g': in.n_gridpoints = (int)number_arg(argv[0], opt, val, 2, 1 << 20); break;
        case 'n':
            in.n_isotopes = (int)number_arg(argv[0], opt, val, MAX_NUCS_PER_MATERIAL, 4096);
            break;
        default: in.seed = (unsigned long long)number_arg(argv[0], opt, val, 0, 1L << 30); break;
        }
    }
    return in;
}

/* The tables' generator: a 64-bit LCG, the top 53 bits as the fraction. */
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

/* Each nuclide's grid: random energies and cross sections, then sorted
 * by energy so the lookups can bisect it. */
static void generate_grids(const struct inputs *in, struct simulation_data *sd)
{
    unsigned long long seed = in->seed;
    long points = (long)in->n_isotopes * in->n_gridpoints;
    sd->n_isotopes = in->n_isotopes;
    sd->n_gridpoints = in->n_gridpoints;
    sd->nuclide_grid = malloc(sizeof *sd->nuclide_grid * (size_t)points);
    if (!sd->nuclide_grid) {
        fprintf(stderr, "out of memory for %ld grid points\n", points);
        exit(1);
    }
    for (long i = 0; i < points; i++) {
        struct grid_point *p = &sd->nuclide_grid[i];
        p->energy = uniform(&seed);
        p->total_xs = uniform(&seed);
        p->elastic_xs = uniform(&seed);
        p->absorption_xs = uniform(&seed);
        p->fission_xs = uniform(&seed);
        p->nu_fission_xs = uniform(&seed);
    }
    for (int n = 0; n < sd->n_isotopes; n++)
        qsort(&sd->nuclide_grid[(long)n * sd->n_gridpoints], (size_t)sd->n_gridpoints,
              sizeof *sd->nuclide_grid, compare_points);
}

/* Which nuclides each material holds (distinct, by a partial shuffle) and
 * how many atoms of each per barn-cm: atom fractions normalised to 1,
 * scaled by the density.  A generator of its own, so the composition does
 * not depend on the grids' size. */
static void generate_materials(const struct inputs *in, struct simulation_data *sd)
{
    unsigned long long seed = in->seed ^ 0x5851f42d4c957f2dull;
    int *ids = malloc(sizeof *ids * (size_t)sd->n_isotopes);
    sd->max_num_nucs = MAX_NUCS_PER_MATERIAL;
    sd->num_nucs = malloc(sizeof *sd->num_nucs * MATERIALS);
    sd->densities = malloc(sizeof *sd->densities * MATERIALS);
    sd->mats = malloc(sizeof *sd->mats * MATERIALS * MAX_NUCS_PER_MATERIAL);
    sd->concs = malloc(sizeof *sd->concs * MATERIALS * MAX_NUCS_PER_MATERIAL);
    for (int m = 0; m < MATERIALS; m++) {
        int count = material_spec[m].nuclides;
        double sum = 0;
        for (int k = 0; k < sd->n_isotopes; k++)
            ids[k] = k;
        sd->num_nucs[m] = count;
        sd->densities[m] = material_spec[m].density;
        for (int j = 0; j < count; j++) {
            int pick = j + (int)(lcg(&seed) % (unsigned long long)(sd->n_isotopes - j));
            int t = ids[j];
            ids[j] = ids[pick];
            ids[pick] = t;
            sd->mats[m * MAX_NUCS_PER_MATERIAL + j] = ids[j];
            sd->concs[m * MAX_NUCS_PER_MATERIAL + j] = 0.05 + uniform(&seed);
            sum += sd->concs[m * MAX_NUCS_PER_MATERIAL + j];
        }
        for (int j = 0; j < count; j++)
            sd->concs[m * MAX_NUCS_PER_MATERIAL + j] *= sd->densities[m] / sum;
    }
    free(ids);
}

/* The material a lookup lands in, by the regions' volume fractions. */
static int pick_material(double r)
{
    double cumulative = 0;
    for (int m = 0; m < MATERIALS - 1; m++) {
        cumulative += material_spec[m].fraction;
        if (r < cumulative)
            return m;
    }
    return MATERIALS - 1;
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

/* A lookup's contribution to the verification: a mix of its material and
 * the kind of its largest cross section, summed (so any order of the
 * lookups gives the same total). */
static unsigned long long lookup_hash(int mat, int max_idx)
{
    unsigned long long h = (unsigned long long)(mat * XS_KINDS + max_idx + 1);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

static void print_summary(const struct inputs *in, const struct simulation_data *sd,
                          unsigned long long verification)
{
    double visits = 0;
    size_t bytes = sizeof *sd->nuclide_grid * (size_t)sd->n_isotopes * (size_t)sd->n_gridpoints;
    printf("nuclides %d, grid points per nuclide %d, grids %.1f MiB, seed %llu\n",
           sd->n_isotopes, sd->n_gridpoints, (double)bytes / (1 << 20), in->seed);
    printf("%-12s %8s %12s %9s\n", "material", "nuclides", "density", "fraction");
    for (int m = 0; m < MATERIALS; m++) {
        printf("%-12s %8d %12.3f %9.2f\n", material_spec[m].name, sd->num_nucs[m],
               sd->densities[m], material_spec[m].fraction);
        visits += material_spec[m].fraction * sd->num_nucs[m];
    }
    printf("nuclide lookups per lookup %.2f\n", visits);
    printf("lookups %ld verification %llu (%06llu)\n", in->lookups, verification,
           verification % 1000000);
}

int main(int argc, char **argv)
{
    struct inputs in = parse_inputs(argc, argv);
    struct simulation_data sd;
    generate_grids(&in, &sd);
    generate_materials(&in, &sd);
    unsigned long long verification = 0;
#pragma omp parallel for schedule(static) reduction(+ : verification)
    for (long i = 0; i < in.lookups; i++) {
        unsigned long long seed = 0x9e3779b97f4a7c15ull * (unsigned long long)(i + 1);
        double e = uniform(&seed);
        int mat = pick_material(uniform(&seed));
        double macro_xs_vector[XS_KINDS];
        macro_xs(e, mat, &sd, macro_xs_vector);
        /* as XSBench: the index of the largest cross section */
        int max_idx = 0;
        for (int k = 1; k < XS_KINDS; k++)
            if (macro_xs_vector[k] > macro_xs_vector[max_idx])
                max_idx = k;
        verification += lookup_hash(mat, max_idx);
    }
    print_summary(&in, &sd, verification);
    free(sd.nuclide_grid);
    free(sd.num_nucs);
    free(sd.mats);
    free(sd.concs);
    free(sd.densities);
    return 0;
}

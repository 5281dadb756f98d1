/* A multigroup Monte Carlo transport kernel in the style of Fortran-heritage
 * codes: neutrons of GROUPS energy groups are tracked through a 1-D slab of
 * three materials by delta (Woodcock) tracking, each thread scores its
 * histories into its own copy of a tally array kept threadprivate (as such
 * codes keep per-thread scratch in a common block), and folds it into the
 * shared results under a critical section after every pass.  Used by
 * test/programs/check_programs.sh, which states the expected answers.
 *
 *   threadprivate [-n HISTORIES] [-p PASSES] [-s SEED] [-v]
 *       (defaults: 25000 histories per pass, 60 passes, seed 1; -v prints
 *       each pass's escapes)
 *
 * Phases: options; setup_tables (cross sections, their majorant, the
 * scattering CDFs, the material map and the source spectrum, shared and
 * only read after); the passes, in one parallel region: clear_tally, the
 * pass's histories shared out by an omp for and each followed by
 * track_history into the threadprivate tally, fold_tally into the shared
 * results, and one thread recording the pass's escapes; then verification
 * (every history ends in exactly one absorption or escape) and the report.
 * Every score is an integer count, so the output does not depend on which
 * thread ran a history or folded first: each history has its own random
 * stream, and integer sums do not depend on their order.
 *
 * Work: a history makes about 34 flights (a log and two random numbers
 * each), of which 11 end in a real collision (a count, and up to three
 * more random numbers), about 0.9 us at -O2; the fold adds 1,584 counts
 * per thread and pass, about one history's time against the 12,500
 * histories each thread follows per pass; setting up the tables is a few
 * hundred operations, once. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GROUPS = 8, CELLS = 64, MATERIALS = 3, MAX_PASSES = 1000 };
enum { COLLIDED, ABSORBED, ESCAPED, SCORES };
enum { MODERATOR, FUEL, ABSORBER };

#define SLAB_WIDTH 16.0 /* cm: cells 1..CELLS of 0.25 cm */
#define FUEL_LO 4.0     /* the fuel, where neutrons are born: cells 17..48 */
#define FUEL_HI 12.0

/* Shared tables: written once by setup_tables, only read by the histories. */
static double sigma_t[MATERIALS][GROUPS];             /* total cross section, 1/cm */
static double absorb_prob[MATERIALS][GROUPS];         /* sigma_a / sigma_t */
static double scatter_cdf[MATERIALS][GROUPS][GROUPS]; /* P(g -> at most g'), downscatter */
static double sigma_major[GROUPS];                    /* the largest sigma_t of the group */
static int cell_material[CELLS + 2];
static double source_cdf[GROUPS]; /* the birth spectrum */

/* Per-thread scratch: the scores of this thread's histories in the current
 * pass, by score, cell and group; cells 0 and CELLS+1 are the left and
 * right faces, where escapes are scored. */
static long tally[SCORES][CELLS + 2][GROUPS];
#pragma omp threadprivate(tally)

/* Shared results: the scores of all passes, and each pass's escapes. */
static long results[SCORES][CELLS + 2][GROUPS];
static long pass_escapes[MAX_PASSES];

struct options {
    long histories; /* per pass */
    int passes;
    unsigned long long seed;
    int verbose;
};

static void usage(const char *prog)
{
    fprintf(stderr, "usage: %s [-n HISTORIES] [-p PASSES (1..%d)] [-s SEED] [-v]\n", prog,
            MAX_PASSES);
    exit(2);
}

/* A positive number, or the usage message. */
static long positive(const char *text, long max, const char *prog)
{
    char *end;
    long value = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || value < 1 || value > max)
        usage(prog);
    return value;
}

static struct options parse_options(int argc, char **argv)
{
    struct options opt = {25000, 60, 1, 0};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-v") == 0)
            opt.verbose = 1;
        else if (i + 1 >= argc)
            usage(argv[0]);
        else if (strcmp(argv[i], "-n") == 0)
            opt.histories = positive(argv[++i], 100000000, argv[0]);
        else if (strcmp(argv[i], "-p") == 0)
            opt.passes = (int)positive(argv[++i], MAX_PASSES, argv[0]);
        else if (strcmp(argv[i], "-s") == 0)
            opt.seed = (unsigned long long)positive(argv[++i], 1000000000, argv[0]);
        else
            usage(argv[0]);
    }
    return opt;
}

/* Group g's energy falls with g; absorption grows as 1/v (doubling with
 * each group), scattering is flat, and the moderator slows neutrons down
 * fastest.  A cumulative distribution ends at exactly 1. */
static void setup_tables(void)
{
    static const double scatter[MATERIALS] = {1.5, 0.4, 0.6};
    static const double absorb[MATERIALS] = {0.0005, 0.004, 0.03};
    static const double slowing[MATERIALS] = {0.8, 0.2, 0.3};
    static const double spectrum[GROUPS] = {0.35, 0.4, 0.2, 0.05, 0, 0, 0, 0};
    for (int m = 0; m < MATERIALS; m++)
        for (int g = 0; g < GROUPS; g++) {
            double sigma_a = absorb[m] * ldexp(1.0, g), weight = 1, sum = 0;
            sigma_t[m][g] = scatter[m] + sigma_a;
            absorb_prob[m][g] = sigma_a / sigma_t[m][g];
            for (int k = g; k < GROUPS; k++, weight *= slowing[m])
                sum += weight;
            double below = 0;
            weight = 1;
            for (int k = 0; k < GROUPS; k++) {
                if (k >= g) {
                    below += weight / sum;
                    weight *= slowing[m];
                }
                scatter_cdf[m][g][k] = k == GROUPS - 1 ? 1.0 : below;
            }
        }
    for (int g = 0; g < GROUPS; g++) {
        sigma_major[g] = 0;
        for (int m = 0; m < MATERIALS; m++)
            if (sigma_t[m][g] > sigma_major[g])
                sigma_major[g] = sigma_t[m][g];
    }
    for (int c = 0; c < CELLS + 2; c++)
        cell_material[c] = c <= 16 ? MODERATOR : c <= 48 ? FUEL : ABSORBER;
    double below = 0;
    for (int g = 0; g < GROUPS; g++)
        source_cdf[g] = g == GROUPS - 1 ? 1.0 : (below += spectrum[g]);
}

/* A history's own random stream (SplitMix64 of the seed, pass and history),
 * so that its track does not depend on the thread that follows it. */
static unsigned long long history_seed(unsigned long long seed, int pass, long history)
{
    unsigned long long z = seed * 0x9e3779b97f4a7c15ull +
                           (unsigned long long)pass * 0x632be59bd9b4e019ull +
                           (unsigned long long)history;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A uniform number in (0, 1), never 0: the flights take its log. */
static double uniform(unsigned long long *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)((*state >> 11) | 1) / 9007199254740992.0;
}

/* The group a cumulative distribution picks for xi, from group first on:
 * the number of bins below xi (the CDF never decreases). */
static int sample_group(const double *cdf, int first, double xi)
{
    int g = first;
    for (int k = first; k < GROUPS - 1; k++)
        g += xi >= cdf[k];
    return g;
}

/* Follows one neutron from birth in the fuel to its absorption or escape,
 * scoring into this thread's tally.  Delta tracking: flights are sampled
 * with the group's majorant, and a collision at x is real with
 * probability sigma_t(x) / majorant, else virtual (the flight goes on). */
static void track_history(unsigned long long *rng)
{
    double x = FUEL_LO + (FUEL_HI - FUEL_LO) * uniform(rng);
    int g = sample_group(source_cdf, 0, uniform(rng));
    double mu = 2 * uniform(rng) - 1;
    for (;;) {
        x += mu * -log(uniform(rng)) / sigma_major[g];
        if (x < 0 || x >= SLAB_WIDTH) {
            tally[ESCAPED][x < 0 ? 0 : CELLS + 1][g]++;
            return;
        }
        int c = 1 + (int)(x * (CELLS / SLAB_WIDTH));
        int m = cell_material[c];
        if (uniform(rng) * sigma_major[g] >= sigma_t[m][g])
            continue;
        tally[COLLIDED][c][g]++;
        if (uniform(rng) < absorb_prob[m][g]) {
            tally[ABSORBED][c][g]++;
            return;
        }
        g = sample_group(scatter_cdf[m][g], g, uniform(rng));
        mu = 2 * uniform(rng) - 1;
    }
}

static void clear_tally(void)
{
    memset(tally, 0, sizeof tally);
}

/* Adds this thread's tally into the shared results. */
static void fold_tally(void)
{
#pragma omp critical(fold)
    for (int s = 0; s < SCORES; s++)
        for (int c = 0; c < CELLS + 2; c++)
            for (int g = 0; g < GROUPS; g++)
                results[s][c][g] += tally[s][c][g];
}

int main(int argc, char **argv)
{
    struct options opt = parse_options(argc, argv);
    setup_tables();
    long escaped_before = 0;
#pragma omp parallel
    {
        for (int pass = 0; pass < opt.passes; pass++) {
            clear_tally();
#pragma omp for schedule(dynamic, 256) nowait
            for (long h = 0; h < opt.histories; h++) {
                unsigned long long rng = history_seed(opt.seed, pass, h);
                track_history(&rng);
            }
            fold_tally();
#pragma omp barrier
#pragma omp single
            {
                long escaped = 0;
                for (int g = 0; g < GROUPS; g++)
                    escaped += results[ESCAPED][0][g] + results[ESCAPED][CELLS + 1][g];
                pass_escapes[pass] = escaped - escaped_before;
                escaped_before = escaped;
                if (opt.verbose)
                    printf("pass %3d: %ld escapes\n", pass, pass_escapes[pass]);
            }
        }
    }

    /* Verification: every history ends in one absorption or one escape. */
    long histories = opt.histories * opt.passes, ended = 0, total = 0;
    unsigned long long checksum = 0;
    for (int s = 0; s < SCORES; s++)
        for (int c = 0; c < CELLS + 2; c++)
            for (int g = 0; g < GROUPS; g++) {
                long count = results[s][c][g];
                if (s == COLLIDED)
                    total += count;
                else
                    ended += count;
                checksum = checksum * 1099511628211ull + (unsigned long long)count;
            }
    int verified = ended == histories;

    /* The report: counts, and ratios of counts computed in one order. */
    long left = 0, right = 0, absorbed = 0, by_group[GROUPS] = {0};
    double flux[MATERIALS] = {0};
    for (int g = 0; g < GROUPS; g++) {
        left += results[ESCAPED][0][g];
        right += results[ESCAPED][CELLS + 1][g];
        for (int c = 1; c <= CELLS; c++) {
            int m = cell_material[c];
            absorbed += results[ABSORBED][c][g];
            by_group[g] += results[COLLIDED][c][g];
            /* the collision estimator: collisions / (sigma_t * cell width) */
            flux[m] += results[COLLIDED][c][g] / (sigma_t[m][g] * (SLAB_WIDTH / CELLS));
        }
    }
    double mean = 0, var = 0;
    for (int p = 0; p < opt.passes; p++)
        mean += (double)pass_escapes[p] / opt.histories / opt.passes;
    for (int p = 0; p < opt.passes; p++) {
        double d = (double)pass_escapes[p] / opt.histories - mean;
        var += d * d / (opt.passes > 1 ? opt.passes - 1 : 1);
    }
    printf("slab transport: %ld histories in %d passes, seed %llu\n", histories, opt.passes,
           opt.seed);
    printf("collisions %ld (%.4f per history), checksum %016llx\n", total,
           (double)total / histories, checksum);
    printf("absorbed %.5f  escaped left %.5f right %.5f\n", (double)absorbed / histories,
           (double)left / histories, (double)right / histories);
    printf("escapes per pass %.5f +- %.5f\n", mean, sqrt(var / opt.passes));
    printf("collisions by group:");
    for (int g = 0; g < GROUPS; g++)
        printf(" %.4f", (double)by_group[g] / total);
    printf("\nflux per history: moderator %.5e fuel %.5e absorber %.5e\n",
           flux[MODERATOR] / histories, flux[FUEL] / histories, flux[ABSORBER] / histories);
    printf("verification: %s\n", verified ? "passed" : "FAILED");
    return verified ? 0 : 1;
}

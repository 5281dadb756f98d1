/* A block-structured AMR kernel shaped like the mini-apps (miniAMR): a
 * periodic mesh of blocks over the unit square, each n x n cells (n = base
 * << level) with a ghost layer and one array per variable.  A moving disc
 * deposits mass, momentum and energy, which cool back to ambient.  Every
 * few steps a criterion on the density gradient refines or coarsens blocks,
 * whose new arrays come from a counting allocator wrapper, stored straight
 * into the struct (blocks[b].array[v] = ma_malloc(...)), the old data
 * prolonged or restricted into them (the mass is checked).  Each step then
 * exchanges ghost cells across levels, relaxes a diffusion (red-black
 * Gauss-Seidel) and computes the pressure from variables named by constants
 * (blocks[b].array[VAR_PRESSURE]...), which a checksum adds up.  Used by
 * test/programs/check_programs.sh, which derives its answers from this.
 *
 *   amr_alloc [-b BLOCKS] [-c CELLS] [-l LEVEL] [-r EVERY] [-s SWEEPS] [STEPS]
 *   (defaults: 16 x 16 blocks of 16 x 16 cells, levels 0 to 2, a regrid
 *   every 2 steps, 2 sweeps a step, 150 steps)
 *
 * Work per block and step: the sweeps (n^2 cells x 4 variables each, and
 * 4n ghosts x 5) outweigh the cooling, equation of state, criterion and
 * mass (n^2 each); every other step, about 30 of the 256 blocks get 5
 * zeroed arrays, each filled from the old one.  The metadata (level, size,
 * corner, neighbours) is read once per block, and in the disc's cells. */
#define _POSIX_C_SOURCE 200809L /* getopt */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A block's variables, as hydrodynamics codes name them, and the disc's dye. */
enum variable { VAR_DENSITY, VAR_MOMENTUM, VAR_ENERGY, VAR_PRESSURE, VAR_DYE, NVARS };
enum side { WEST, EAST, SOUTH, NORTH };
enum { MAX_BLOCKS = 4096 };
#define GAMMA 1.4
#define RADIUS 0.12

struct block {
    int level;            /* refinement level, 0 the coarsest */
    int n;                /* interior cells per side: base << level */
    int decision;         /* the criterion's: +1 refine, -1 coarsen, 0 keep */
    double x0, y0, size;  /* lower-left corner and side in the unit square */
    int nbr[4];           /* neighbour ids by side (the mesh is periodic) */
    double *array[NVARS]; /* (n + 2) x (n + 2) cells, row by row */
};

struct options { /* blocks and level-0 cells per side, ... */
    int blocks, base, max_level, regrid_every, sweeps, steps;
    double refine_at, coarsen_at, nu; /* density gradients; diffusion number at level 0 */
};

static size_t bytes_allocated, allocations;

/* The app's allocator wrapper: counts, allocates and zeroes (all of a
 * block's cells defined, the ghost corners no stencil reads included). */
static void *ma_malloc(size_t size)
{
    bytes_allocated += size;
    allocations++;
    void *p = malloc(size);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    memset(p, 0, size);
    return p;
}

static struct options parse_options(int argc, char **argv)
{
    struct options o = {16, 16, 2, 2, 2, 150, 3.0, 1.0, 0.2};
    int flag, bad = 0;
    while ((flag = getopt(argc, argv, "b:c:l:r:s:")) != -1)
        switch (flag) {
        case 'b': o.blocks = atoi(optarg); break;
        case 'c': o.base = atoi(optarg); break;
        case 'l': o.max_level = atoi(optarg); break;
        case 'r': o.regrid_every = atoi(optarg); break;
        case 's': o.sweeps = atoi(optarg); break;
        default: bad = 1;
        }
    if (optind < argc)
        o.steps = atoi(argv[optind]);
    if (bad || o.blocks < 1 || o.blocks * o.blocks > MAX_BLOCKS || o.base < 2 || o.max_level < 0 ||
        o.max_level > 4 || o.regrid_every < 1 || o.sweeps < 1 || o.steps < 0) {
        fprintf(stderr,
                "usage: %s [-b BLOCKS] [-c CELLS] [-l LEVEL] [-r EVERY] [-s SWEEPS] [STEPS]\n",
                argv[0]);
        exit(2);
    }
    return o;
}

/* Copies a variable's interior between resolutions one level apart: a
 * refined cell takes its parent's value, a coarsened one the mean of its
 * four children, so that the mass (value times area) is kept. */
static void remap(const double *from, int n_from, double *to, int n_to)
{
    int s_from = n_from + 2, s_to = n_to + 2;
    for (int j = 1; j <= n_to; j++)
        for (int i = 1; i <= n_to; i++) {
            if (n_to > n_from) {
                to[j * s_to + i] = from[(j + 1) / 2 * s_from + (i + 1) / 2];
            } else {
                const double *c = &from[(2 * j - 1) * s_from + 2 * i - 1];
                to[j * s_to + i] = 0.25 * (c[0] + c[1] + c[s_from] + c[s_from + 1]);
            }
        }
}

/* Gives block b the resolution of LEVEL: new arrays through the wrapper,
 * stored straight into the block, the old data carried over and the old
 * arrays freed (a new block has none). */
static void resize_block(struct block *blocks, int b, int level, int base)
{
    int n_old = blocks[b].n, n = base << level;
    for (int v = 0; v < NVARS; v++) {
        double *old = blocks[b].array[v];
        blocks[b].array[v] = ma_malloc(sizeof(double) * (size_t)(n + 2) * (size_t)(n + 2));
        if (old)
            remap(old, n_old, blocks[b].array[v], n);
        free(old);
    }
    blocks[b].level = level;
    blocks[b].n = n;
}

/* The blocks' metadata, and their first arrays in the initial state: at
 * rest, uniform density and energy. */
static void init_mesh(struct block *blocks, const struct options *o)
{
    int nb = o->blocks;
    for (int b = 0; b < nb * nb; b++) {
        int bx = b % nb, by = b / nb;
        blocks[b].size = 1.0 / nb;
        blocks[b].x0 = bx * blocks[b].size;
        blocks[b].y0 = by * blocks[b].size;
        blocks[b].nbr[WEST] = by * nb + (bx + nb - 1) % nb;
        blocks[b].nbr[EAST] = by * nb + (bx + 1) % nb;
        blocks[b].nbr[SOUTH] = (by + nb - 1) % nb * nb + bx;
        blocks[b].nbr[NORTH] = (by + 1) % nb * nb + bx;
        resize_block(blocks, b, 0, o->base);
        for (int c = 0; c < (o->base + 2) * (o->base + 2); c++) {
            blocks[b].array[VAR_DENSITY][c] = 1.0;
            blocks[b].array[VAR_ENERGY][c] = 2.5;
        }
    }
}

/* The sources: every cell cools back towards the ambient state, and the
 * disc deposits mass, momentum, energy and dye in the cells it covers
 * (those of each block in its bounding box).  It moves on triangle waves. */
static void deposit(struct block *blocks, int nblocks, int step)
{
    double cx = 0.1 + 0.8 * fabs(2 * (step / 50.0 - floor(step / 50.0 + 0.5)));
    double cy = 0.1 + 0.8 * fabs(2 * (step / 31.0 - floor(step / 31.0 + 0.5)));
#pragma omp parallel for schedule(dynamic)
    for (int b = 0; b < nblocks; b++) {
        int n = blocks[b].n, s = n + 2;
        double h = blocks[b].size / n, x0 = blocks[b].x0, y0 = blocks[b].y0;
        double *rho = blocks[b].array[VAR_DENSITY], *mom = blocks[b].array[VAR_MOMENTUM];
        double *energy = blocks[b].array[VAR_ENERGY], *dye = blocks[b].array[VAR_DYE];
        for (int c = s; c < s * (n + 1); c++) {
            rho[c] = 1.0 + 0.9 * (rho[c] - 1.0);
            mom[c] *= 0.9;
            energy[c] = 2.5 + 0.9 * (energy[c] - 2.5);
        }
        int i0 = (cx - RADIUS - x0) / h, i1 = (cx + RADIUS - x0) / h + 1;
        int j0 = (cy - RADIUS - y0) / h, j1 = (cy + RADIUS - y0) / h + 1;
        for (int j = j0 < 1 ? 1 : j0; j <= j1 && j <= n; j++)
            for (int i = i0 < 1 ? 1 : i0; i <= i1 && i <= n; i++) {
                double dx = x0 + (i - 0.5) * h - cx, dy = y0 + (j - 0.5) * h - cy;
                if (dx * dx + dy * dy < RADIUS * RADIUS) {
                    rho[j * s + i] += 0.05;
                    mom[j * s + i] += 0.01;
                    energy[j * s + i] += 0.1;
                    dye[j * s + i] += 1;
                }
            }
    }
}

/* Fills each block's ghost layer from its neighbours' edge cells, side by
 * side: ghost k (0..n-1) along the edge takes the neighbour's edge cell at
 * the same place, k m / n of its m (a coarser neighbour's cell fills
 * several ghosts, a finer neighbour gives the first cell a ghost covers). */
static void exchange_ghosts(struct block *blocks, int nblocks)
{
#pragma omp parallel for schedule(dynamic)
    for (int b = 0; b < nblocks; b++) {
        int n = blocks[b].n, s = n + 2;
        for (int side = WEST; side <= NORTH; side++) {
            int nb = blocks[b].nbr[side], m = blocks[nb].n, t = m + 2;
            int ghost = (int[]){s, s + n + 1, 1, (n + 1) * s + 1}[side];
            int edge = (int[]){t + m, t + 1, m * t + 1, t + 1}[side];
            int ghost_step = side <= EAST ? s : 1, edge_step = side <= EAST ? t : 1;
            for (int v = 0; v < NVARS; v++) {
                double *u = blocks[b].array[v];
                const double *w = blocks[nb].array[v];
                for (int k = 0; k < n; k++)
                    u[ghost + k * ghost_step] = w[edge + k * m / n * edge_step];
            }
        }
    }
}

/* One red-black Gauss-Seidel sweep of an implicit diffusion step, on every
 * variable but the pressure (which the equation of state derives). */
static void relax(struct block *blocks, int nblocks, double nu0)
{
#pragma omp parallel for schedule(dynamic)
    for (int b = 0; b < nblocks; b++) {
        int n = blocks[b].n, s = n + 2;
        double nu = nu0 * (1 << 2 * blocks[b].level), scale = 1 / (1 + 4 * nu);
        for (int v = 0; v < NVARS; v++) {
            if (v == VAR_PRESSURE)
                continue;
            double *u = blocks[b].array[v];
            for (int colour = 0; colour < 2; colour++)
                for (int j = 1; j <= n; j++)
                    for (int c = j * s + 1 + (j + colour) % 2; c <= j * s + n; c += 2)
                        u[c] = (u[c] + nu * (u[c - 1] + u[c + 1] + u[c - s] + u[c + s])) * scale;
        }
    }
}

/* The ideal-gas equation of state: pressure from density, momentum and
 * total energy, over the interior rows. */
static void equation_of_state(struct block *blocks, int nblocks)
{
#pragma omp parallel for schedule(dynamic)
    for (int b = 0; b < nblocks; b++) {
        const double *rho = blocks[b].array[VAR_DENSITY];
        const double *mom = blocks[b].array[VAR_MOMENTUM];
        const double *energy = blocks[b].array[VAR_ENERGY];
        double *pressure = blocks[b].array[VAR_PRESSURE];
        int n = blocks[b].n, s = n + 2;
        for (int c = s; c < s * (n + 1); c++)
            pressure[c] = (GAMMA - 1) * (energy[c] - 0.5 * mom[c] * mom[c] / rho[c]);
    }
}

/* The refinement criterion: a block refines where the largest density
 * jump between neighbouring cells, per unit length, is steep, and
 * coarsens where it is flat, one level at a time. */
static void mark_blocks(struct block *blocks, int nblocks, const struct options *o)
{
#pragma omp parallel for schedule(dynamic)
    for (int b = 0; b < nblocks; b++) {
        int n = blocks[b].n, s = n + 2, level = blocks[b].level;
        const double *rho = blocks[b].array[VAR_DENSITY];
        double jump = 0;
        for (int j = 1; j < n; j++)
            for (int c = j * s + 1; c < j * s + n; c++)
                jump = fmax(jump, fmax(fabs(rho[c + 1] - rho[c]), fabs(rho[c + s] - rho[c])));
        double gradient = jump * n / blocks[b].size;
        blocks[b].decision = gradient > o->refine_at && level < o->max_level ? 1
                             : gradient < o->coarsen_at && level > 0         ? -1
                                                                             : 0;
    }
}

/* The integral of a variable over the domain: per block in parallel, the
 * blocks' sums added in block order (the same whatever the schedule). */
static double integral(const struct block *blocks, int nblocks, int v)
{
    double partial[MAX_BLOCKS], total = 0;
#pragma omp parallel for schedule(dynamic)
    for (int b = 0; b < nblocks; b++) {
        int n = blocks[b].n, s = n + 2;
        const double *u = blocks[b].array[v];
        double sum = 0, h = blocks[b].size / n;
        for (int j = 1; j <= n; j++)
            for (int c = j * s + 1; c <= j * s + n; c++)
                sum += u[c];
        partial[b] = sum * h * h;
    }
    for (int b = 0; b < nblocks; b++)
        total += partial[b];
    return total;
}

int main(int argc, char **argv)
{
    struct options opt = parse_options(argc, argv);
    int nblocks = opt.blocks * opt.blocks, resized = 0;
    struct block *blocks = calloc((size_t)nblocks, sizeof *blocks);
    if (!blocks) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    init_mesh(blocks, &opt);
    double checksum = 0, drift = 0;
    for (int step = 0; step < opt.steps; step++) {
        if (step % opt.regrid_every == 0) {
            mark_blocks(blocks, nblocks, &opt);
            double before = integral(blocks, nblocks, VAR_DENSITY);
            for (int b = 0; b < nblocks; b++) /* serially: the wrapper's counters */
                if (blocks[b].decision != 0) {
                    resize_block(blocks, b, blocks[b].level + blocks[b].decision, opt.base);
                    resized++;
                }
            drift = fmax(drift, fabs(integral(blocks, nblocks, VAR_DENSITY) / before - 1));
        }
        deposit(blocks, nblocks, step);
        for (int sweep = 0; sweep < opt.sweeps; sweep++) {
            exchange_ghosts(blocks, nblocks);
            relax(blocks, nblocks, opt.nu);
        }
        equation_of_state(blocks, nblocks);
        checksum += integral(blocks, nblocks, VAR_PRESSURE);
    }
    int per_level[5] = {0}, cells = 0;
    for (int b = 0; b < nblocks; b++) {
        per_level[blocks[b].level]++;
        cells += blocks[b].n * blocks[b].n;
    }
    printf("steps %d, %d blocks, %d cells; blocks by level:", opt.steps, nblocks, cells);
    for (int l = 0; l <= opt.max_level; l++)
        printf(" %d", per_level[l]);
    printf("\nresized %d blocks: %zu allocations, %zu bytes\n", resized, allocations,
           bytes_allocated);
    printf("mass %.6f, %s by the regrids; checksum %.6e\n", integral(blocks, nblocks, VAR_DENSITY),
           drift < 1e-12 ? "kept" : "NOT KEPT", checksum);
    for (int b = 0; b < nblocks; b++)
        for (int v = 0; v < NVARS; v++)
            free(blocks[b].array[v]);
    free(blocks);
    return 0;
}

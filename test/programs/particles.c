/* A molecular-dynamics kernel shaped like the proxy apps (CoMD, miniMD):
 * an array of particle structs, Lennard-Jones forces with a cutoff over a
 * cell list, velocity-Verlet integration and a few diagnostics, the force
 * loop in an OpenMP parallel for.  Used by test/programs/check_programs.sh,
 * which states the expected answers and derives them from this structure.
 *
 *   particles [STEPS] [NX]      (defaults 40 steps, 10 cells a side)
 *
 * Work per step, for NX = 10 (4 particles per cell, 4000 particles):
 *   compute_forces: for each particle, the 27 neighbouring cells' 108
 *     candidates, ~30 inside the cutoff: about 430k pair distances;
 *   build_cells: 4000 particles binned: ~0.1% of that;
 *   integrate (two half kicks, one drift): 3 x 4000 x 3 updates: ~1%;
 *   kinetic_energy and the virial: 4000 each: < 0.5%. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vec3 {
    double x, y, z;
};

struct particle {
    struct vec3 pos;
    struct vec3 vel;
    struct vec3 force;
    double mass;
    double energy; /* this particle's share of the potential energy */
    int type;
    int cell;
};

struct cell_list {
    int ncells_side;
    int ncells;
    double cell_size;
    int *head;  /* first particle of each cell, -1 */
    int *next;  /* next particle in the same cell, -1 */
    int *count; /* particles per cell */
};

struct params {
    double box;
    double cutoff, cutoff2;
    double epsilon, sigma6;
    double dt;
    int steps;
};

struct diagnostics {
    double potential;
    double kinetic;
    double virial;
    double total;
    double drift; /* total energy relative to the first step */
};

static double wrap(double x, double box)
{
    if (x < 0)
        return x + box;
    if (x >= box)
        return x - box;
    return x;
}

static double minimum_image(double d, double box)
{
    if (d > 0.5 * box)
        return d - box;
    if (d < -0.5 * box)
        return d + box;
    return d;
}

static void init_particles(struct particle *p, int n, const struct params *prm, int per_side)
{
    double spacing = prm->box / per_side;
    unsigned seed = 12345;
    int k = 0;
    for (int i = 0; i < per_side && k < n; i++)
        for (int j = 0; j < per_side && k < n; j++)
            for (int l = 0; l < per_side && k < n; l++, k++) {
                memset(&p[k], 0, sizeof p[k]);
                p[k].pos.x = (i + 0.5) * spacing;
                p[k].pos.y = (j + 0.5) * spacing;
                p[k].pos.z = (l + 0.5) * spacing;
                seed = seed * 1103515245u + 12345u;
                p[k].vel.x = ((seed >> 16) % 1000) / 1000.0 - 0.5;
                seed = seed * 1103515245u + 12345u;
                p[k].vel.y = ((seed >> 16) % 1000) / 1000.0 - 0.5;
                seed = seed * 1103515245u + 12345u;
                p[k].vel.z = ((seed >> 16) % 1000) / 1000.0 - 0.5;
                p[k].mass = 1.0;
                p[k].type = k % 2;
            }
}

static void cells_alloc(struct cell_list *cl, const struct params *prm, int n)
{
    cl->ncells_side = (int)(prm->box / prm->cutoff);
    if (cl->ncells_side < 3)
        cl->ncells_side = 3;
    cl->ncells = cl->ncells_side * cl->ncells_side * cl->ncells_side;
    cl->cell_size = prm->box / cl->ncells_side;
    cl->head = malloc(sizeof *cl->head * cl->ncells);
    cl->count = malloc(sizeof *cl->count * cl->ncells);
    cl->next = malloc(sizeof *cl->next * n);
}

static void build_cells(struct cell_list *cl, struct particle *p, int n)
{
    for (int c = 0; c < cl->ncells; c++) {
        cl->head[c] = -1;
        cl->count[c] = 0;
    }
    for (int i = 0; i < n; i++) {
        int cx = (int)(p[i].pos.x / cl->cell_size) % cl->ncells_side;
        int cy = (int)(p[i].pos.y / cl->cell_size) % cl->ncells_side;
        int cz = (int)(p[i].pos.z / cl->cell_size) % cl->ncells_side;
        int c = (cx * cl->ncells_side + cy) * cl->ncells_side + cz;
        p[i].cell = c;
        cl->next[i] = cl->head[c];
        cl->head[c] = i;
        cl->count[c]++;
    }
}

/* The hot loop: every particle's force and energy from its neighbours. */
static double compute_forces(struct particle *p, int n, const struct cell_list *cl,
                             const struct params *prm)
{
    double virial = 0;
    int side = cl->ncells_side;
#pragma omp parallel for schedule(static) reduction(+ : virial)
    for (int i = 0; i < n; i++) {
        struct vec3 f = {0, 0, 0};
        double e = 0;
        int c = p[i].cell;
        int cx = c / (side * side), cy = (c / side) % side, cz = c % side;
        for (int dx = -1; dx <= 1; dx++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dz = -1; dz <= 1; dz++) {
                    int nx = (cx + dx + side) % side, ny = (cy + dy + side) % side;
                    int nz = (cz + dz + side) % side;
                    int nc = (nx * side + ny) * side + nz;
                    for (int j = cl->head[nc]; j >= 0; j = cl->next[j]) {
                        if (j == i)
                            continue;
                        double rx = minimum_image(p[i].pos.x - p[j].pos.x, prm->box);
                        double ry = minimum_image(p[i].pos.y - p[j].pos.y, prm->box);
                        double rz = minimum_image(p[i].pos.z - p[j].pos.z, prm->box);
                        double r2 = rx * rx + ry * ry + rz * rz;
                        if (r2 > prm->cutoff2)
                            continue;
                        double ir2 = 1.0 / r2;
                        double ir6 = ir2 * ir2 * ir2 * prm->sigma6;
                        double fr = 24.0 * prm->epsilon * ir6 * (2.0 * ir6 - 1.0) * ir2;
                        f.x += fr * rx;
                        f.y += fr * ry;
                        f.z += fr * rz;
                        e += 2.0 * prm->epsilon * ir6 * (ir6 - 1.0);
                        virial += fr * r2;
                    }
                }
        p[i].force = f;
        p[i].energy = e;
    }
    return virial;
}

static void kick(struct particle *p, int n, double half_dt)
{
    for (int i = 0; i < n; i++) {
        double s = half_dt / p[i].mass;
        p[i].vel.x += s * p[i].force.x;
        p[i].vel.y += s * p[i].force.y;
        p[i].vel.z += s * p[i].force.z;
    }
}

static void drift(struct particle *p, int n, double dt, double box)
{
    for (int i = 0; i < n; i++) {
        p[i].pos.x = wrap(p[i].pos.x + dt * p[i].vel.x, box);
        p[i].pos.y = wrap(p[i].pos.y + dt * p[i].vel.y, box);
        p[i].pos.z = wrap(p[i].pos.z + dt * p[i].vel.z, box);
    }
}

static double kinetic_energy(const struct particle *p, int n)
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += 0.5 * p[i].mass *
               (p[i].vel.x * p[i].vel.x + p[i].vel.y * p[i].vel.y + p[i].vel.z * p[i].vel.z);
    return sum;
}

static double potential_energy(const struct particle *p, int n)
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += p[i].energy;
    return 0.5 * sum;
}

static void record(struct diagnostics *d, double potential, double kinetic, double virial,
                   double first_total, int step)
{
    d->potential = potential;
    d->kinetic = kinetic;
    d->virial = virial;
    d->total = potential + kinetic;
    d->drift = step == 0 ? 0 : (d->total - first_total) / fabs(first_total);
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 40;
    int side = argc > 2 ? atoi(argv[2]) : 10;
    struct params prm = {.cutoff = 2.5, .epsilon = 1.0, .dt = 0.0005};
    prm.cutoff2 = prm.cutoff * prm.cutoff;
    prm.sigma6 = 1.0;
    prm.steps = steps;
    int per_side = (int)ceil(cbrt(4.0 * side * side * side));
    int n = per_side * per_side * per_side;
    prm.box = side * prm.cutoff;

    struct particle *p = malloc(sizeof *p * n);
    struct cell_list cells;
    struct diagnostics diag = {0};
    init_particles(p, n, &prm, per_side);
    cells_alloc(&cells, &prm, n);
    build_cells(&cells, p, n);
    double virial = compute_forces(p, n, &cells, &prm);
    double first_total = potential_energy(p, n) + kinetic_energy(p, n);
    for (int step = 0; step < prm.steps; step++) {
        kick(p, n, 0.5 * prm.dt);
        drift(p, n, prm.dt, prm.box);
        build_cells(&cells, p, n);
        virial = compute_forces(p, n, &cells, &prm);
        kick(p, n, 0.5 * prm.dt);
        record(&diag, potential_energy(p, n), kinetic_energy(p, n), virial, first_total, step);
    }
    printf("particles %d steps %d potential %.6f kinetic %.6f virial %.3f drift %.2e\n", n,
           prm.steps, diag.potential, diag.kinetic, diag.virial, diag.drift);
    free(cells.head);
    free(cells.count);
    free(cells.next);
    free(p);
    return 0;
}

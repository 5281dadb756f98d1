/* A steady heat-conduction solve, -div(kappa grad u) = f on the unit
 * square with Dirichlet edges, by weighted Jacobi relaxation, layered as
 * a solver library is: options with defaults, a grid, the problem's
 * coefficients and sources (read only in the solve), boundary data, a
 * smoother at the bottom, the true residual, a convergence control, and a
 * report filled through pointers and printed at the end.
 *
 * The smoother's update norm travels up a call chain five levels deep:
 * level 5 (smooth) returns it and writes the grid through a pointer,
 * level 4 (scaled_sweep) returns it scaled, level 3 (sweep_into) stores
 * it into the field of the driver's statistics through a pointer, level 2
 * (sweep_once) returns that field, level 1 (relax) writes it through an
 * out-parameter, and main derives its smoothed convergence figure from it.
 * Used by test/programs/check_programs.sh, which states the expected
 * answers.
 *
 *   chain [SWEEPS] [N] [omega=W] [tol=T] [check=K]
 *         (defaults 400 sweeps of an 800 x 800 grid, omega 0.8, tol 1e-8,
 *          the true residual every 20 sweeps)
 *
 * Work: smooth() does nearly all of it; residual_norm() costs about a
 * sweep every 20 sweeps (5%); the set-up (problem_setup, apply_boundary,
 * initial_guess) is one pass over the grid, 1 / SWEEPS of the sweeps'
 * passes.  Jacobi converges slowly on a fine grid: at the defaults the
 * solve stops at the sweep limit, with the residual down about 100 times.
 *
 * Output is the same on any schedule of 2 threads: the loops are
 * statically scheduled, and a reduction of two partial sums is the same
 * sum in either order. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct options {
    int max_sweeps;
    int n;            /* grid points per side, the boundary included */
    double omega;     /* the Jacobi weight, in (0, 1] */
    double tolerance; /* converged when the residual falls below tolerance x the initial one */
    int check_every;  /* sweeps between two checks of the true residual */
};

struct grid {
    int n;
    double h;      /* the mesh width, 1 / (n - 1) */
    double *cells; /* n x n, the current iterate */
    double *next;  /* n x n, the sweep's result */
};

/* The problem: read only once set up. */
struct problem {
    double *kappa; /* n x n, the conductivity */
    double *rhs;   /* n x n, the heat source */
};

/* The temperatures held on the four edges. */
struct boundary {
    double top, bottom, left, right;
};

struct sweep_stats {
    double update_norm; /* the last sweep's */
    int sweeps;
};

enum status { RUNNING, CONVERGED, DIVERGED, SWEEP_LIMIT };

struct control {
    double initial_residual, last_residual;
    int checks;
};

struct report {
    int sweeps, checks;
    enum status status;
    double update_norm, history, residual, reduction, centre, top_flux;
};

static void usage(const char *program)
{
    fprintf(stderr, "usage: %s [SWEEPS] [N] [omega=W] [tol=T] [check=K]\n", program);
    exit(2);
}

static void parse_options(int argc, char **argv, struct options *opt)
{
    *opt = (struct options){.max_sweeps = 400, .n = 800, .omega = 0.8, .tolerance = 1e-8,
                            .check_every = 20};
    int positional = 0;
    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a];
        char *end = NULL;
        if (strncmp(arg, "omega=", 6) == 0)
            opt->omega = strtod(arg + 6, &end);
        else if (strncmp(arg, "tol=", 4) == 0)
            opt->tolerance = strtod(arg + 4, &end);
        else if (strncmp(arg, "check=", 6) == 0)
            opt->check_every = (int)strtol(arg + 6, &end, 10);
        else if (positional < 2) {
            int value = (int)strtol(arg, &end, 10);
            *(positional++ == 0 ? &opt->max_sweeps : &opt->n) = value;
        } else
            usage(argv[0]);
        if (end == arg || *end != '\0')
            usage(argv[0]);
    }
    if (opt->max_sweeps < 1 || opt->n < 3 || !(opt->omega > 0 && opt->omega <= 1) ||
        !(opt->tolerance > 0) || opt->check_every < 1)
        usage(argv[0]);
}

static void grid_alloc(struct grid *g, int n)
{
    g->n = n;
    g->h = 1.0 / (n - 1);
    g->cells = calloc((size_t)n * n, sizeof *g->cells);
    g->next = calloc((size_t)n * n, sizeof *g->next);
}

/* A conductivity that is 1 near the edges and 3 at the centre, and a
 * heat source in a square at the lower left; polynomials, no libm. */
static void problem_setup(struct problem *p, int n)
{
    p->kappa = malloc(sizeof *p->kappa * (size_t)n * n);
    p->rhs = malloc(sizeof *p->rhs * (size_t)n * n);
    double h = 1.0 / (n - 1);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double x = j * h, y = i * h;
            p->kappa[i * n + j] = 1.0 + 32.0 * x * (1 - x) * y * (1 - y);
            p->rhs[i * n + j] = x > 0.2 && x < 0.4 && y > 0.6 && y < 0.8 ? 50.0 : 0.0;
        }
}

/* The first guess: the temperature linear from the top edge (row 0) to
 * the bottom one. */
static void initial_guess(struct grid *g, const struct boundary *bc)
{
    int n = g->n;
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
            g->cells[i * n + j] = bc->top + (bc->bottom - bc->top) * i * g->h;
}

/* Dirichlet edges, in both copies of the grid (a sweep writes only the
 * interior). */
static void apply_boundary(struct grid *g, const struct boundary *bc)
{
    int n = g->n;
    double *copies[2] = {g->cells, g->next};
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < n; k++) {
            copies[c][k] = bc->top;
            copies[c][(n - 1) * n + k] = bc->bottom;
            if (k > 0 && k < n - 1) {
                copies[c][k * n] = bc->left;
                copies[c][k * n + n - 1] = bc->right;
            }
        }
}

/* Level 5: one weighted Jacobi sweep over the interior into g->next,
 * then the copies swapped; returns the update's Euclidean norm.  The
 * face conductivities are the sums of the two cells' (twice the mean). */
static double smooth(struct grid *g, const struct problem *p, double omega)
{
    int n = g->n;
    double two_h2 = 2 * g->h * g->h, change = 0;
    const double *u = g->cells, *k = p->kappa, *f = p->rhs; /* as real kernels do */
    double *next = g->next;
#pragma omp parallel for schedule(static) reduction(+ : change)
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++) {
            int c = i * n + j;
            double kw = k[c - 1] + k[c], ke = k[c] + k[c + 1];
            double kn = k[c - n] + k[c], ks = k[c] + k[c + n];
            double v = (kw * u[c - 1] + ke * u[c + 1] + kn * u[c - n] + ks * u[c + n] +
                        two_h2 * f[c]) / (kw + ke + kn + ks);
            double d = omega * (v - u[c]);
            next[c] = u[c] + d;
            change += d * d;
        }
    double *t = g->cells;
    g->cells = g->next;
    g->next = t;
    return sqrt(change);
}

/* Level 4: the discrete L2 norm, the Euclidean one scaled by the mesh width. */
static double scaled_sweep(struct grid *g, const struct problem *p, double omega)
{
    double norm = smooth(g, p, omega);
    return norm * g->h;
}

/* Level 3: the scaled norm stored into the statistics' field. */
static void sweep_into(struct grid *g, const struct problem *p, double omega,
                       struct sweep_stats *stats)
{
    stats->update_norm = scaled_sweep(g, p, omega);
    stats->sweeps++;
}

/* Level 2: one sweep, its norm returned by value of the field. */
static double sweep_once(struct grid *g, const struct problem *p, double omega,
                         struct sweep_stats *stats)
{
    sweep_into(g, p, omega, stats);
    return stats->update_norm;
}

/* Level 1: the update norm written through an out-parameter. */
static void relax(struct grid *g, const struct problem *p, const struct options *opt,
                  struct sweep_stats *stats, double *update)
{
    *update = sweep_once(g, p, opt->omega, stats);
}

/* The true residual's discrete L2 norm, f - A u over the interior. */
static double residual_norm(const struct grid *g, const struct problem *p)
{
    int n = g->n;
    double inv_two_h2 = 1 / (2 * g->h * g->h), sum = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum)
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++) {
            int c = i * n + j;
            double u = g->cells[c], kc = p->kappa[c];
            double flux = (kc + p->kappa[c - 1]) * (u - g->cells[c - 1]) +
                          (kc + p->kappa[c + 1]) * (u - g->cells[c + 1]) +
                          (kc + p->kappa[c - n]) * (u - g->cells[c - n]) +
                          (kc + p->kappa[c + n]) * (u - g->cells[c + n]);
            double r = p->rhs[c] - flux * inv_two_h2;
            sum += r * r;
        }
    return sqrt(sum) * g->h;
}

/* Convergence control: every check_every sweeps and at the limit, the
 * true residual against the initial one. */
static enum status control_step(struct control *ctl, const struct grid *g,
                                const struct problem *p, const struct options *opt, int sweeps)
{
    if (sweeps % opt->check_every != 0 && sweeps < opt->max_sweeps)
        return RUNNING;
    ctl->last_residual = residual_norm(g, p);
    ctl->checks++;
    if (ctl->last_residual <= opt->tolerance * ctl->initial_residual)
        return CONVERGED;
    if (!(ctl->last_residual < 1e3 * ctl->initial_residual))
        return DIVERGED;
    return sweeps >= opt->max_sweeps ? SWEEP_LIMIT : RUNNING;
}

/* The heat that leaves through the top edge, per unit length. */
static double top_flux(const struct grid *g, const struct problem *p)
{
    int n = g->n;
    double flux = 0;
    for (int j = 1; j < n - 1; j++)
        flux += 0.5 * (p->kappa[j] + p->kappa[n + j]) * (g->cells[n + j] - g->cells[j]) / g->h;
    return flux * g->h;
}

static void summarize(const struct grid *g, const struct problem *p,
                      const struct sweep_stats *stats, const struct control *ctl,
                      enum status status, double history, struct report *out)
{
    int n = g->n;
    out->sweeps = stats->sweeps;
    out->checks = ctl->checks;
    out->status = status;
    out->update_norm = stats->update_norm;
    out->history = history;
    out->residual = ctl->last_residual;
    out->reduction = ctl->last_residual / ctl->initial_residual;
    out->centre = g->cells[(n / 2) * n + n / 2];
    out->top_flux = top_flux(g, p);
}

static void print_report(const struct report *r, const struct options *opt)
{
    static const char *const names[] = {"running", "converged", "diverged", "sweep limit"};
    printf("heat %d x %d, omega %.2f, tolerance %.1e\n", opt->n, opt->n, opt->omega,
           opt->tolerance);
    printf("status %s after %d sweeps, %d residual checks\n", names[r->status], r->sweeps,
           r->checks);
    printf("update %.6e history %.6e\n", r->update_norm, r->history);
    printf("residual %.6e reduction %.6e\n", r->residual, r->reduction);
    printf("centre %.6f top flux %.6f\n", r->centre, r->top_flux);
}

int main(int argc, char **argv)
{
    struct options opt;
    parse_options(argc, argv, &opt);
    struct grid g;
    struct problem prob;
    struct boundary bc = {.top = 1.0, .bottom = 0.0, .left = 0.5, .right = 0.0};
    grid_alloc(&g, opt.n);
    problem_setup(&prob, opt.n);
    apply_boundary(&g, &bc);
    initial_guess(&g, &bc);

    struct sweep_stats stats = {0, 0};
    struct control ctl = {0, 0, 0};
    ctl.initial_residual = ctl.last_residual = residual_norm(&g, &prob);
    double residual = 0, history = 0;
    enum status status = RUNNING;
    while (status == RUNNING) {
        relax(&g, &prob, &opt, &stats, &residual);
        history = 0.9 * history + 0.1 * residual; /* a smoothed convergence figure */
        status = control_step(&ctl, &g, &prob, &opt, stats.sweeps);
    }

    struct report rep;
    summarize(&g, &prob, &stats, &ctl, status, history, &rep);
    print_report(&rep, &opt);
    free(g.cells);
    free(g.next);
    free(prob.kappa);
    free(prob.rhs);
    return status == DIVERGED;
}

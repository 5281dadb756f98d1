/* A conjugate-gradient solver shaped like the NAS CG benchmark: the inverse
 * power method estimates the smallest eigenvalue of a random sparse
 * symmetric positive definite matrix, generated as NAS's makea does (a sum
 * of outer products of random sparse vectors with geometrically shrinking
 * weights, plus a diagonal shift) into CSR arrays (rowstr, colidx, a).  It
 * and the solver's vectors are globals; conj_grad returns the residual norm
 * through a pointer; main runs an untimed warm-up iteration, resets x, runs
 * the timed iterations deriving zeta from x and z, verifies zeta against
 * the Rayleigh quotient of the final x and prints a summary (the timing on
 * stderr).  Used by test/programs/check_programs.sh, which states the
 * expected answers.   cg [-n ROWS] [-k NONZER] [-i ITERATIONS] [-s SHIFT] [-h]
 *
 * Work: each outer iteration runs 25 CG steps; each step is one sparse
 * product over about 21 entries per row ((NONZER + 1)^2 = 25 less merged
 * duplicates) and five vector loops over n: the product is about 70% of a
 * step.  make_matrix is two passes over a row's 25 outer-product entries,
 * a merge pass and the first touch of the matrix's 3.5 MB, a few products'
 * worth, against (150 + 1) * 26 products: well under 0.3% of the work. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { CG_STEPS = 25, MAX_NONZER = 15 };

struct options { int n, nonzer, iterations; double shift, rcond; };

/* The matrix (read only in the solve) and the solver's vectors. */
static int n_rows;
static int *rowstr, *colidx;
static double *a;
static double *x, *z, *p, *q, *r;

static unsigned long long seed = 314159265;

static double random_unit(void)
{
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(seed >> 11) / (double)(1ull << 53);
}

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void usage(const char *name, FILE *out)
{
    fprintf(out,
            "usage: %s [-n ROWS] [-k NONZER] [-i ITERATIONS] [-s SHIFT] [-h]\n"
            "  -n ROWS        matrix order (default 14000)\n"
            "  -k NONZER      random entries per generating vector, 1-%d (default 4)\n"
            "  -i ITERATIONS  timed outer iterations (default 150)\n"
            "  -s SHIFT       eigenvalue shift added to the estimate (default 10)\n",
            name, MAX_NONZER);
}

/* A whole-string integer in [lo, hi], or -1. */
static int parse_int(const char *text, int lo, int hi)
{
    char *end;
    long value = strtol(text, &end, 10);
    if (end == text || *end != '\0' || value < lo || value > hi)
        return -1;
    return (int)value;
}

/* 0 to run, 1 after -h, 2 on an error (with the message printed). */
static int parse_options(int argc, char **argv, struct options *o)
{
    *o = (struct options){.n = 14000, .nonzer = 4, .iterations = 150, .shift = 10.0, .rcond = 0.1};
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i];
        if (strcmp(opt, "-h") == 0) {
            usage(argv[0], stdout);
            return 1;
        }
        if (i + 1 >= argc || strlen(opt) != 2 || opt[0] != '-') {
            fprintf(stderr, "cg: unexpected argument %s\n", opt);
            usage(argv[0], stderr);
            return 2;
        }
        const char *value = argv[++i];
        int bad = 0;
        switch (opt[1]) {
        case 'n': bad = (o->n = parse_int(value, 100, 10000000)) < 0; break;
        case 'k': bad = (o->nonzer = parse_int(value, 1, MAX_NONZER)) < 0; break;
        case 'i': bad = (o->iterations = parse_int(value, 1, 100000)) < 0; break;
        case 's': o->shift = strtod(value, NULL); break;
        default: bad = 1;
        }
        if (bad) {
            fprintf(stderr, "cg: bad option or value: %s %s\n", opt, value);
            usage(argv[0], stderr);
            return 2;
        }
    }
    return 0;
}

/* A random sparse vector of order n: 0.5 at column row and nonzer other
 * distinct random columns with values in (0, 1); returns its entries. */
static int sparse_vector(int n, int nonzer, int row, int *cols, double *vals)
{
    int count = 1;
    cols[0] = row, vals[0] = 0.5;
    while (count <= nonzer) {
        int col = (int)(random_unit() * n), seen = 0;
        double val = random_unit();
        for (int j = 0; j < count; j++)
            seen |= cols[j] == col;
        if (!seen) {
            cols[count] = col;
            vals[count++] = val;
        }
    }
    return count;
}

/* makea: A = the sum over rows of size * v v^T, v a random sparse vector
 * and size going geometrically from 1 to rcond, plus rcond on the
 * diagonal, in CSR with duplicates summed.  Two passes over the same
 * random stream, as no triplet list is kept: the first counts each row's
 * entries, the second places them; then each row's equal columns merge
 * through a dense index of the last position each column took.  Returns
 * the nonzeros. */
static long make_matrix(const struct options *o)
{
    int n = o->n, cols[MAX_NONZER + 1];
    double vals[MAX_NONZER + 1];
    int *fill = calloc(n + 1, sizeof *fill), *where = malloc(sizeof *where * n);
    unsigned long long first_seed = seed;
    for (int pass = 0; pass < 2; pass++) {
        double size = 1.0, ratio = pow(o->rcond, 1.0 / n);
        for (int row = 0; row < n; row++) {
            int count = sparse_vector(n, o->nonzer, row, cols, vals);
            for (int j = 0; j < count; j++)
                for (int k = 0; k < count && pass == 1; k++) {
                    int at = fill[cols[j]]++;
                    colidx[at] = cols[k];
                    a[at] = size * vals[j] * vals[k];
                }
            for (int j = 0; j < count && pass == 0; j++)
                fill[cols[j] + 1] += count;
            size *= ratio;
        }
        if (pass == 0) {
            for (int i = 0; i < n; i++)
                fill[i + 1] += fill[i] + 1; /* and the diagonal's */
            colidx = malloc(sizeof *colidx * fill[n]);
            a = malloc(sizeof *a * fill[n]);
            seed = first_seed;
        }
    }
    rowstr = malloc(sizeof *rowstr * (n + 1));
    for (int i = 0; i < n; i++)
        where[i] = -1;
    int out = 0, begin = 0;
    for (int i = 0; i < n; i++) {
        int end = fill[i] + 1;
        colidx[end - 1] = i;
        a[end - 1] = o->rcond;
        rowstr[i] = out;
        for (int k = begin; k < end; k++) {
            int col = colidx[k];
            if (where[col] >= rowstr[i]) {
                a[where[col]] += a[k];
            } else {
                where[col] = out;
                colidx[out] = col;
                a[out++] = a[k];
            }
        }
        begin = end;
    }
    rowstr[n] = out;
    free(fill), free(where);
    return out;
}

static void vectors_alloc(int n)
{
    x = malloc(sizeof *x * n);
    z = malloc(sizeof *z * n);
    p = malloc(sizeof *p * n);
    q = malloc(sizeof *q * n);
    r = malloc(sizeof *r * n);
    for (int i = 0; i < n; i++)
        x[i] = 1.0;
}

static double dot(const double *u, const double *v, int n)
{
    double sum = 0;
    /* as HPGMG's if(nblocks > 1): short vectors are summed on the thread
     * that meets the region (serialized), the native stack holding it all */
#pragma omp parallel for reduction(+ : sum) if (n > 50000)
    for (int i = 0; i < n; i++)
        sum += u[i] * v[i];
    return sum;
}

/* q = A p: the hot loop. */
static void sparse_product(const int *row, const int *col, const double *values,
                           const double *in, double *out, int n)
{
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++) {
        double sum = 0;
        for (int k = row[i]; k < row[i + 1]; k++)
            sum += values[k] * in[col[k]];
        out[i] = sum;
    }
}

/* CG_STEPS steps of conjugate gradient on A z = x; the residual's norm
 * |x - A z| goes to *rnorm. */
static void conj_grad(double *rnorm)
{
    int n = n_rows;
#pragma omp parallel for
    for (int i = 0; i < n; i++) {
        q[i] = 0;
        z[i] = 0;
        r[i] = x[i];
        p[i] = r[i];
    }
    double rho = dot(r, r, n);
    for (int step = 0; step < CG_STEPS; step++) {
        sparse_product(rowstr, colidx, a, p, q, n);
        double d = dot(p, q, n);
        double alpha = rho / d;
        double rho0 = rho;
#pragma omp parallel for
        for (int i = 0; i < n; i++) {
            z[i] += alpha * p[i];
            r[i] -= alpha * q[i];
        }
        rho = dot(r, r, n);
        double beta = rho / rho0;
#pragma omp parallel for
        for (int i = 0; i < n; i++)
            p[i] = r[i] + beta * p[i];
    }
    sparse_product(rowstr, colidx, a, z, r, n);
    double sum = 0;
    for (int i = 0; i < n; i++) {
        double d = x[i] - r[i];
        sum += d * d;
    }
    *rnorm = sqrt(sum);
}

/* The verification's reference: v.Av / v.v, by a serial product of its own. */
static double rayleigh_quotient(const double *v, int n)
{
    double vav = 0, vv = 0;
    for (int i = 0; i < n; i++) {
        double av = 0;
        for (int k = rowstr[i]; k < rowstr[i + 1]; k++)
            av += a[k] * v[colidx[k]];
        vav += v[i] * av;
        vv += v[i] * v[i];
    }
    return vav / vv;
}

int main(int argc, char **argv)
{
    struct options o;
    int status = parse_options(argc, argv, &o);
    if (status)
        return status - 1;
    n_rows = o.n;
    long nonzeros = make_matrix(&o);
    vectors_alloc(n_rows);
    printf("CG: %d rows, %ld nonzeros, %d iterations, shift %.1f\n", n_rows, nonzeros,
           o.iterations, o.shift);

    /* The warm-up: one untimed iteration touches every page and code path;
     * then x starts over. */
    double zeta = 0, rnorm = 0;
    conj_grad(&rnorm);
    double norm_temp1 = dot(x, z, n_rows);
    double norm_temp2 = 1.0 / sqrt(dot(z, z, n_rows));
    zeta = o.shift + 1.0 / norm_temp1;
    for (int i = 0; i < n_rows; i++)
        x[i] = norm_temp2 * z[i];
    printf("warm-up    residual %.4e zeta %.8f\n", rnorm, zeta);
    for (int i = 0; i < n_rows; i++)
        x[i] = 1.0;

    double start = wall_seconds();
    for (int it = 1; it <= o.iterations; it++) {
        conj_grad(&rnorm);
        norm_temp1 = dot(x, z, n_rows);
        norm_temp2 = 1.0 / sqrt(dot(z, z, n_rows));
        zeta = o.shift + 1.0 / norm_temp1;
        for (int i = 0; i < n_rows; i++)
            x[i] = norm_temp2 * z[i];
        if (it == 1 || it % 25 == 0 || it == o.iterations)
            printf("iteration %4d residual %.4e zeta %.8f\n", it, rnorm, zeta);
    }
    double seconds = wall_seconds() - start;

    /* Verification: at convergence x is the eigenvector, and zeta - shift
     * its eigenvalue, x.Ax / x.x. */
    double reference = o.shift + rayleigh_quotient(x, n_rows);
    double error = fabs(zeta - reference) / fabs(reference);
    int verified = error <= 1e-6;
    printf("zeta %.8f reference %.8f: verification %s\n", zeta, reference,
           verified ? "SUCCESSFUL" : "FAILED");

    printf("summary: rows %d, nonzeros %ld, iterations %d, final residual %.2e\n",
           n_rows, nonzeros, o.iterations, rnorm);
    double flops = (CG_STEPS + 1) * 2.0 * nonzeros + CG_STEPS * 10.0 * n_rows;
    fprintf(stderr, "time %.3f s, %.1f Mflop/s\n", seconds, o.iterations * flops / seconds * 1e-6);
    free(rowstr), free(colidx), free(a);
    free(x), free(z), free(p), free(q), free(r);
    return verified ? 0 : 1;
}

/* A conjugate-gradient solver shaped like the NAS CG benchmark: a sparse
 * symmetric matrix in CSR form and the solver's vectors are globals, the
 * solver (conj_grad) returns its residual norm through a pointer, and the
 * outer inverse-power iteration in main derives the eigenvalue estimate
 * zeta from x and z after each solve.  The matrix-vector products and dot
 * products run in OpenMP parallel loops.  Used by
 * test/programs/check_programs.sh, which states the expected answers.
 *
 *   cg [N] [ITERATIONS]      (defaults 20000 rows, 12 outer iterations)
 *
 * Work: each outer iteration runs 25 CG steps; each step is one sparse
 * product over NONZEROS_PER_ROW (24) entries per row and five vector
 * loops over N, so the product is about 24 / (24 + 5 * 2) = 70% of a step
 * and the vector updates the rest.  Building the matrix is one pass over
 * the nonzeros: 1 / (12 * 25) of the solve, 0.3%. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { NONZEROS_PER_ROW = 24, CG_STEPS = 25 };

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

/* A symmetric, diagonally dominant band-like matrix with random entries. */
static void make_matrix(int n)
{
    rowstr = malloc(sizeof *rowstr * (n + 1));
    colidx = malloc(sizeof *colidx * (size_t)n * NONZEROS_PER_ROW);
    a = malloc(sizeof *a * (size_t)n * NONZEROS_PER_ROW);
    int k = 0;
    for (int i = 0; i < n; i++) {
        rowstr[i] = k;
        for (int j = 0; j < NONZEROS_PER_ROW; j++, k++) {
            int offset = j - NONZEROS_PER_ROW / 2;
            int col = (i + offset * 37 + n) % n;
            colidx[k] = col;
            a[k] = col == i ? NONZEROS_PER_ROW + 1.0 : 0.5 * random_unit();
        }
    }
    rowstr[n] = k;
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

int main(int argc, char **argv)
{
    n_rows = argc > 1 ? atoi(argv[1]) : 20000;
    int iterations = argc > 2 ? atoi(argv[2]) : 12;
    const double shift = 10.0;
    make_matrix(n_rows);
    vectors_alloc(n_rows);
    double zeta = 0, rnorm = 0;
    for (int it = 1; it <= iterations; it++) {
        conj_grad(&rnorm);
        double norm_temp1 = dot(x, z, n_rows);
        double norm_temp2 = 1.0 / sqrt(dot(z, z, n_rows));
        zeta = shift + 1.0 / norm_temp1;
        for (int i = 0; i < n_rows; i++)
            x[i] = norm_temp2 * z[i];
        printf("iteration %2d residual %.6e zeta %.10f\n", it, rnorm, zeta);
    }
    printf("zeta %.10f\n", zeta);
    free(rowstr);
    free(colidx);
    free(a);
    free(x);
    free(z);
    free(p);
    free(q);
    free(r);
    return 0;
}

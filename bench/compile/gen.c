/* Generates a large C translation unit that looks like HPC code, to time the
 * ppw pass against a plain compile.
 *
 *   gen [MODULES] > big.c        (default 46 modules, about 21.6k lines)
 *
 * Each module has its own structs with array and pointer fields, globals,
 * small static helpers, and external kernels: stencils writing through a
 * struct pointer, switch/if chains, reductions returning values, loop nests
 * over 2-D arrays, histogram updates of globals, and a driver calling them.
 * Constants vary per module through a fixed LCG, so output is deterministic
 * and the functions are not copies of each other. */
#include <stdio.h>
#include <stdlib.h>

static unsigned long long lcg_state = 0x9e3779b97f4a7c15ULL;

/* A deterministic pseudo-random integer in [lo, hi]. */
static int pick(int lo, int hi)
{
    lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (int)((lcg_state >> 33) % (unsigned long long)(hi - lo + 1));
}

static void emit_types(int m)
{
    printf("struct grid_%d {\n"
           "    int n, steps;\n"
           "    double lo, hi;\n"
           "    double *cur, *next;\n"
           "    double coef[%d];\n"
           "};\n\n",
           m, pick(4, 9));
    printf("struct particle_%d {\n"
           "    double pos[3], vel[3], force[3];\n"
           "    double mass;\n"
           "    int kind, cell;\n"
           "};\n\n",
           m);
    printf("struct block_%d {\n"
           "    int rows, cols;\n"
           "    double a[%d][%d];\n"
           "    int pivot[%d];\n"
           "    struct grid_%d *owner;\n"
           "};\n\n",
           m, 16, 16, 16, m);
    printf("double g_norm_%d;\n"
           "long g_sweeps_%d;\n"
           "int g_hist_%d[%d];\n"
           "static double g_scale_%d = %d.%d;\n\n",
           m, m, m, 32, m, pick(1, 3), pick(0, 99));
}

static void emit_helpers(int m)
{
    printf("static inline double clamp_%d(double x, double lo, double hi)\n"
           "{\n"
           "    if (x < lo)\n"
           "        return lo;\n"
           "    if (x > hi)\n"
           "        return hi;\n"
           "    return x;\n"
           "}\n\n",
           m);
    printf("static double weight_%d(int i, int n)\n"
           "{\n"
           "    double t = (double)i / (double)(n > 1 ? n - 1 : 1);\n"
           "    return %d.0 * t * (1.0 - t) + 0.%d;\n"
           "}\n\n",
           m, pick(2, 6), pick(1, 9));
}

static void emit_stencil(int m, int k)
{
    printf("void stencil_%d_%d(struct grid_%d *g, double alpha)\n"
           "{\n"
           "    int n = g->n;\n"
           "    for (int i = %d; i < n - %d; i++) {\n"
           "        double l = g->cur[i - 1], c = g->cur[i], r = g->cur[i + 1];\n"
           "        double v = c + alpha * (l - 2.0 * c + r) * g->coef[%d];\n"
           "        if (v > g->hi)\n"
           "            v = g->hi;\n"
           "        else if (v < g->lo)\n"
           "            v = g->lo;\n"
           "        g->next[i] = clamp_%d(v * weight_%d(i, n), g->lo, g->hi);\n"
           "    }\n"
           "    double *t = g->cur;\n"
           "    g->cur = g->next;\n"
           "    g->next = t;\n"
           "    g->steps++;\n"
           "    g_sweeps_%d++;\n"
           "}\n\n",
           m, k, m, 1, 1, pick(0, 3), m, m, m);
}

static void emit_classify(int m, int k)
{
    printf("int classify_%d_%d(const struct particle_%d *p, int mode)\n"
           "{\n"
           "    double e = 0.5 * p->mass * (p->vel[0] * p->vel[0] + p->vel[1] * p->vel[1]"
           " + p->vel[2] * p->vel[2]);\n"
           "    int c;\n"
           "    switch (mode) {\n",
           m, k, m);
    int cases = pick(4, 8);
    for (int c = 0; c < cases; c++)
        printf("    case %d:\n"
               "        c = e > %d.0 ? %d : (p->kind == %d ? %d : %d);\n"
               "        break;\n",
               c, pick(1, 50), c, pick(0, 4), c + 1, c + 2);
    printf("    default:\n"
           "        c = -1;\n"
           "    }\n"
           "    if (c < 0)\n"
           "        return p->cell;\n"
           "    else if (c > %d)\n"
           "        return c - %d;\n"
           "    return c;\n"
           "}\n\n",
           cases / 2, cases / 2);
}

static void emit_forces(int m, int k)
{
    printf("void forces_%d_%d(struct particle_%d *ps, int np, double cutoff)\n"
           "{\n"
           "    for (int i = 0; i < np; i++)\n"
           "        for (int d = 0; d < 3; d++)\n"
           "            ps[i].force[d] = 0.0;\n"
           "    for (int i = 0; i < np; i++) {\n"
           "        for (int j = i + 1; j < np; j++) {\n"
           "            double dx[3], r2 = 0.0;\n"
           "            for (int d = 0; d < 3; d++) {\n"
           "                dx[d] = ps[i].pos[d] - ps[j].pos[d];\n"
           "                r2 += dx[d] * dx[d];\n"
           "            }\n"
           "            if (r2 > cutoff * cutoff || r2 == 0.0)\n"
           "                continue;\n"
           "            double inv = 1.0 / r2, s = %d.0 * inv * inv * inv * g_scale_%d;\n"
           "            for (int d = 0; d < 3; d++) {\n"
           "                ps[i].force[d] += s * dx[d];\n"
           "                ps[j].force[d] -= s * dx[d];\n"
           "            }\n"
           "        }\n"
           "        ps[i].cell = classify_%d_%d(&ps[i], i %% %d);\n"
           "    }\n"
           "}\n\n",
           m, k, m, pick(12, 48), m, m, k, pick(3, 8));
}

static void emit_matvec(int m, int k)
{
    printf("double matvec_%d_%d(struct block_%d *b, const double *x, double *y)\n"
           "{\n"
           "    double norm = 0.0;\n"
           "    for (int i = 0; i < b->rows && i < 16; i++) {\n"
           "        double s = 0.0;\n"
           "        for (int j = 0; j < b->cols && j < 16; j++)\n"
           "            s += b->a[i][j] * x[b->pivot[j] & 15];\n"
           "        y[i] = s * %d.%d;\n"
           "        norm += s * s;\n"
           "    }\n"
           "    if (b->owner)\n"
           "        b->owner->coef[%d] = norm;\n"
           "    g_norm_%d += norm;\n"
           "    return norm;\n"
           "}\n\n",
           m, k, m, pick(0, 2), pick(1, 99), pick(0, 3), m);
}

static void emit_factor(int m, int k)
{
    printf("int factor_%d_%d(struct block_%d *b)\n"
           "{\n"
           "    int n = b->rows < 16 ? b->rows : 16;\n"
           "    for (int c = 0; c < n; c++) {\n"
           "        int p = c;\n"
           "        for (int r = c + 1; r < n; r++)\n"
           "            if (b->a[r][c] * b->a[r][c] > b->a[p][c] * b->a[p][c])\n"
           "                p = r;\n"
           "        b->pivot[c] = p;\n"
           "        if (b->a[p][c] == 0.0)\n"
           "            return -1;\n"
           "        if (p != c)\n"
           "            for (int j = 0; j < n; j++) {\n"
           "                double t = b->a[c][j];\n"
           "                b->a[c][j] = b->a[p][j];\n"
           "                b->a[p][j] = t;\n"
           "            }\n"
           "        for (int r = c + 1; r < n; r++) {\n"
           "            double f = b->a[r][c] / b->a[c][c];\n"
           "            for (int j = c; j < n; j++)\n"
           "                b->a[r][j] -= f * b->a[c][j] * %d.0e-%d;\n"
           "        }\n"
           "    }\n"
           "    return 0;\n"
           "}\n\n",
           m, k, m, pick(1, 9), pick(0, 2));
}

static void emit_histogram(int m, int k)
{
    printf("void histogram_%d_%d(const struct grid_%d *g, int *counts, int nbins)\n"
           "{\n"
           "    double width = (g->hi - g->lo) / (double)nbins;\n"
           "    for (int i = 0; i < g->n; i++) {\n"
           "        int b = width > 0.0 ? (int)((g->cur[i] - g->lo) / width) : 0;\n"
           "        if (b < 0)\n"
           "            b = 0;\n"
           "        else if (b >= nbins)\n"
           "            b = nbins - 1;\n"
           "        counts[b]++;\n"
           "        g_hist_%d[b & 31] += %d;\n"
           "    }\n"
           "}\n\n",
           m, k, m, m, pick(1, 3));
}

static void emit_driver(int m, int kernels)
{
    printf("double run_%d(struct grid_%d *g, struct particle_%d *ps, int np,\n"
           "             struct block_%d *b, double *x, double *y, int steps)\n"
           "{\n"
           "    int counts[32] = {0};\n"
           "    double total = 0.0;\n"
           "    for (int s = 0; s < steps; s++) {\n"
           "        switch (s %% %d) {\n",
           m, m, m, m, kernels);
    for (int k = 0; k < kernels; k++)
        printf("        case %d:\n"
               "            stencil_%d_%d(g, 0.%d);\n"
               "            forces_%d_%d(ps, np, %d.0);\n"
               "            total += matvec_%d_%d(b, x, y);\n"
               "            if (factor_%d_%d(b) != 0)\n"
               "                total -= 1.0;\n"
               "            histogram_%d_%d(g, counts, 32);\n"
               "            break;\n",
               k, m, k, pick(1, 4), m, k, pick(2, 5), m, k, m, k, m, k);
    printf("        }\n"
           "    }\n"
           "    for (int i = 0; i < 32; i++)\n"
           "        total += counts[i] * weight_%d(i, 32);\n"
           "    return total;\n"
           "}\n\n",
           m);
}

int main(int argc, char **argv)
{
    int modules = argc > 1 ? atoi(argv[1]) : 46;
    if (modules < 1) {
        fprintf(stderr, "usage: gen [MODULES>=1] > out.c\n");
        return 2;
    }
    printf("/* Generated by bench/compile/gen.c (%d modules); do not edit. */\n\n", modules);
    for (int m = 0; m < modules; m++) {
        int kernels = pick(2, 4);
        emit_types(m);
        emit_helpers(m);
        for (int k = 0; k < kernels; k++) {
            emit_stencil(m, k);
            emit_classify(m, k);
            emit_forces(m, k);
            emit_matvec(m, k);
            emit_factor(m, k);
            emit_histogram(m, k);
        }
        emit_driver(m, kernels);
    }
    return 0;
}

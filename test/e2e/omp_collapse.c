/* An escape-time image computed under collapse(2): every pixel's iterations
 * end in a store to image[y][x], so image (main's array) carries the time. */
#include <stdio.h>
#include <stdlib.h>

#define W 400
#define H 300

int main(int argc, char **argv)
{
    int depth = argc > 1 ? atoi(argv[1]) : 16000;
    int(*image)[W] = calloc(H, sizeof *image);
#pragma omp parallel for collapse(2) schedule(dynamic, 64)
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            double cr = -2.0 + 2.5 * x / W, ci = -1.25 + 2.5 * y / H;
            double zr = 0, zi = 0;
            int k = 0;
            while (k < depth && zr * zr + zi * zi < 4.0) {
                double t = zr * zr - zi * zi + cr;
                zi = 2 * zr * zi + ci;
                zr = t;
                k++;
            }
            image[y][x] = k;
        }
    long total = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            total += image[y][x];
    printf("%ld\n", total);
    free(image);
    return 0;
}

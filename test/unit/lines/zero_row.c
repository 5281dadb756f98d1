/* Built by test_lines.sh through its assembly, edited so that f's line
 * sequence ends with a row of zero length (at its end address) and g,
 * whose sequence comes first in the line program, is linked right after f.
 * Keep g first, f second and their lines where they are: the test names
 * f's closing line. */
int g(int x)
{
    return x * 3;
}

int f(int x)
{
    return x + 1;
}

int main(int argc, char **argv)
{
    (void)argv;
    return f(argc) + g(argc);
}

/* lines fixture: a function defined in a header, first in .text, so its
 * line rows come before any DW_LNS_set_file (the default file 1). */
int first(int x)
{
    return x * 3 + 1;
}

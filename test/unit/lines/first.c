/* lines fixture: see first.h. */
#include "first.h"

int main(int argc, char **argv)
{
    (void)argv;
    return first(argc) == 4 ? 0 : 1;
}

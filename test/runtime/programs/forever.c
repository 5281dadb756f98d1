/* Burns CPU until killed: the SIGKILL durability test. */
int main(void)
{
    volatile double x = 1;
    for (;;)
        x = x * 1.0000001 + 1e-9;
}

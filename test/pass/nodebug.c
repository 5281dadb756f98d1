/* Two functions without debug info and one with: the plugin analyses the
 * one it can and warns once for the unit. */
__attribute__((nodebug)) int hidden_a(int x) { return x + 1; }
__attribute__((nodebug)) int hidden_b(int x) { return x * 2; }

int visible(int x)
{
    int y = hidden_a(x);
    return hidden_b(y);
}

int main(void)
{
    return visible(3) == 8 ? 0 : 1;
}

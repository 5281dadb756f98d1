/* Long names and deep recursion: every view's text stays within 100
 * columns. */
struct a_rather_long_structure_name_for_testing_widths {
    double an_exceedingly_long_field_name_that_goes_on_and_on;
};

static double
a_function_with_a_really_long_name_to_check_the_widths_of_every_view_of_ppw_blame(
    struct a_rather_long_structure_name_for_testing_widths *the_argument_with_a_long_name,
    int depth)
{
    if (depth > 0)
        return a_function_with_a_really_long_name_to_check_the_widths_of_every_view_of_ppw_blame(
            the_argument_with_a_long_name, depth - 1);
    the_argument_with_a_long_name->an_exceedingly_long_field_name_that_goes_on_and_on += 1;
    return the_argument_with_a_long_name->an_exceedingly_long_field_name_that_goes_on_and_on;
}

int main(void)
{
    struct a_rather_long_structure_name_for_testing_widths s = {0};
    return (int)a_function_with_a_really_long_name_to_check_the_widths_of_every_view_of_ppw_blame(
               &s, 40) - 1;
}

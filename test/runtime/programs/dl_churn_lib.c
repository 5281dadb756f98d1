/* The library runtime.dl_churn opens and closes. */
int dl_churn_value(void);
int dl_churn_value(void)
{
    return 42;
}

/* libppw entry points.  The GASP interface and the sampler arrive with the
 * runtime issue; this shell keeps `-lppw` linkable meanwhile. */
#define PPW_EXPORT __attribute__((visibility("default")))

PPW_EXPORT const char *ppw_runtime_version(void);

PPW_EXPORT const char *ppw_runtime_version(void)
{
    return "0.1.0";
}

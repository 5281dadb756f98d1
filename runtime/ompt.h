/* OMPT tool registration (ompt_start_tool is exported from ompt.c). */
#ifndef PPW_RUNTIME_OMPT_H
#define PPW_RUNTIME_OMPT_H

/* 1 once libomp has accepted our callbacks. */
int ppw_ompt_active(void);

#endif

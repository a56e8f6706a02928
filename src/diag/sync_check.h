/* The sync checker's queryable side (the checking itself hooks into dispatch). */
#ifndef HWI_SYNC_CHECK_H
#define HWI_SYNC_CHECK_H

#include "hwrt.h"

uint64_t hwi_sync_check_hazards(void);
void hwi_sync_check_last(char *buf, size_t len);
void hwi_sync_check_reset(void);
/* The block at base is being freed: the pool orders its reuse, so a new allocation at
 * the same address starts with no history. */
void hwi_sync_check_forget(const void *base);
/* An internal event (hwi_event.internal) is going away. */
void hwi_sync_check_forget_event(const void *handle);

#endif

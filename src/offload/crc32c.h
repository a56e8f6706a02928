/* CRC-32C (Castagnoli, polynomial 0x1EDC6F41 reflected 0x82F63B78, as in iSCSI, ext4 and
 * SSE4.2's crc32 instruction): the checksum the disk tier keeps for every tensor it
 * writes and verifies on every read-back. */
#ifndef HWI_CRC32C_H
#define HWI_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continue a CRC over buf: start with crc = 0; crc32c("123456789") = 0xE3069283. */
uint32_t hwi_crc32c(uint32_t crc, const void *buf, size_t n);
/* The same through the portable tables only (the unit test compares the two). */
uint32_t hwi_crc32c_soft(uint32_t crc, const void *buf, size_t n);

#endif

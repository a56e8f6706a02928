/* The disk tier's checksum is CRC-32C: the published check values (RFC 3720 B.4 and the
 * "123456789" check), the hardware and table paths agree on every length and alignment,
 * and a CRC continued over pieces equals the CRC of the whole. */
#include "harness.h"
#include "offload/crc32c.c"             /* internal (hidden in libhwrt): built in */

#include <stdint.h>

int main(void)
{
    TEST_CASE("check values");
    EXPECT(hwi_crc32c(0, "123456789", 9) == 0xE3069283u);
    EXPECT(hwi_crc32c_soft(0, "123456789", 9) == 0xE3069283u);
    unsigned char z[32] = {0}, ff[32], inc[32], dec[32];
    for (int i = 0; i < 32; i++) { ff[i] = 0xff; inc[i] = (unsigned char)i; dec[i] = (unsigned char)(31 - i); }
    EXPECT(hwi_crc32c(0, z, 32) == 0x8A9136AAu);
    EXPECT(hwi_crc32c(0, ff, 32) == 0x62A8AB43u);
    EXPECT(hwi_crc32c(0, inc, 32) == 0x46DD794Eu);
    EXPECT(hwi_crc32c(0, dec, 32) == 0x113FDB5Cu);
    EXPECT(hwi_crc32c(0, "", 0) == 0);

    TEST_CASE("hardware and tables agree, pieces equal the whole");
    static unsigned char b[70000];
    uint64_t s = 88172645463325252ull;
    for (size_t i = 0; i < sizeof b; i++) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; b[i] = (unsigned char)s; }
    int agree = 1, pieces = 1;
    for (int k = 0; k < 400; k++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        size_t off = s % 64, len = (s >> 8) % (sizeof b - 64), cut = len ? (s >> 32) % len : 0;
        uint32_t whole = hwi_crc32c(0, b + off, len);
        agree &= whole == hwi_crc32c_soft(0, b + off, len);
        pieces &= whole == hwi_crc32c(hwi_crc32c(0, b + off, cut), b + off + cut, len - cut);
    }
    EXPECT(agree);
    EXPECT(pieces);
    return test_report();
}

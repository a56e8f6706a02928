/* The compile-time version (hwrt_version.h), the loaded library's (hwrt_version()) and
 * the CMake package's (hwrt_VERSION, passed in as PACKAGE_VERSION) are one version. */
#include <hwrt.h>
#include <stdio.h>
#include <string.h>

#if !defined(HWRT_VERSION_MAJOR) || !defined(HWRT_VERSION_MINOR) || !defined(HWRT_VERSION_PATCH)
#error "hwrt.h defines no HWRT_VERSION_MAJOR/MINOR/PATCH"
#endif
#if HWRT_VERSION_NUMBER < HWRT_MAKE_VERSION(0, 1, 0)
#error "HWRT_VERSION_NUMBER is below 0.1.0"
#endif

int main(void)
{
    char parts[32];
    snprintf(parts, sizeof parts, "%d.%d.%d", HWRT_VERSION_MAJOR, HWRT_VERSION_MINOR,
             HWRT_VERSION_PATCH);
    printf("header %s (%s), library %s, package %s\n", HWRT_VERSION_STRING, parts,
           hwrt_version(), PACKAGE_VERSION);
    return strcmp(parts, HWRT_VERSION_STRING) || strcmp(hwrt_version(), HWRT_VERSION_STRING) ||
           strcmp(PACKAGE_VERSION, HWRT_VERSION_STRING);
}

/* hwrt public API — the version this header belongs to, for compile-time checks.
 * Include <hwrt.h>, not this file.
 *
 * This file is the one place the version is written: CMakeLists.txt reads it for
 * project(VERSION), the SONAME (libhwrt.so.MAJOR), hwrtConfigVersion.cmake and hwrt.pc.
 * hwrt_version() (hwrt_core.h) returns the version of the library actually loaded, which
 * may be newer than the header a program was built with:
 *
 *   #if HWRT_VERSION_NUMBER >= HWRT_MAKE_VERSION(0, 1, 0)  ...  #endif
 *   printf("built with %s, running %s\n", HWRT_VERSION_STRING, hwrt_version());
 */
#ifndef HWRT_VERSION_H
#define HWRT_VERSION_H

#define HWRT_VERSION_MAJOR 0
#define HWRT_VERSION_MINOR 1
#define HWRT_VERSION_PATCH 0

#define HWRT_VERSION_STRING "0.1.0"

/* One comparable integer: MAJOR*10000 + MINOR*100 + PATCH (0.1.0 -> 100). */
#define HWRT_MAKE_VERSION(major, minor, patch) ((major) * 10000 + (minor) * 100 + (patch))
#define HWRT_VERSION_NUMBER \
    HWRT_MAKE_VERSION(HWRT_VERSION_MAJOR, HWRT_VERSION_MINOR, HWRT_VERSION_PATCH)

#endif

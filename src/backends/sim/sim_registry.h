/* The simulated NPU's cross-process view: a per-user shared-memory registry where every
 * process publishes what it holds on each simulated device, as a real driver knows every
 * context on a card. Device-wide `used` and free capacity include other processes, and
 * exclusive mode refuses a second opener. Env HWRT_SIM_REGISTRY names the shared-memory
 * object (default "/hwrt-sim-<uid>-v<layout version>"; a given name gets the same
 * version suffix; "off" disables sharing). A registry that cannot be used (another
 * user's object, wrong mode or size, truncated while in use) is reported on stderr, and
 * HWRT_SIM_EXCLUSIVE then makes opening a device fail (UNAVAILABLE): exclusivity cannot
 * be enforced without it. */
#ifndef SIM_REGISTRY_H
#define SIM_REGISTRY_H

#include "sim.h"

/* Claim this process's slot for device d; DEVICE_BUSY if another live process (in any
 * pid namespace) holds the device and exclusive mode is on (either side); UNAVAILABLE
 * if exclusive mode is asked for and the registry is off or unusable. */
hwrt_status sim_registry_attach(sim_dev *d);
void sim_registry_detach(sim_dev *d);
/* Publish this process's figures for d (called on every change; cheap). */
void sim_registry_publish(sim_dev *d);
void sim_registry_report_pool(hwrt_bdev *d, size_t reserved, size_t allocated);
/* Bytes other live processes use on the same simulated device (same ordinal and
 * capacity: a process configured with another HWRT_SIM_MEMORY simulates another card). */
size_t sim_registry_others_used(const sim_dev *d);
hwrt_status sim_registry_monitor(hwrt_smi_snapshot *out);

#endif

/* The device-target part of the module (see target.c), split by concern; private to
 * these files:
 *   target.c               the process's one choice (set_device), targets -> backends,
 *                          the stand-in models (presets) and HWRT_SIMULATE;
 *   target_deterministic.c set_deterministic;
 *   target_props.c         DeviceInfo (get_current_device) and DeviceProperties;
 *   target_hal.c           hwrt.hal's device functions;
 *   target_devctx.c        hwrt.device_context.{ascend,gpu,cpu}. */
#ifndef HWPY_TARGET_H
#define HWPY_TARGET_H

#include "hwpy.h"

#define KW(fn) (PyCFunction)(void (*)(void))(fn), METH_VARARGS | METH_KEYWORDS

/* A product the simulated NPU stands in for (target.c's presets). */
typedef struct hwpy_preset {
    const char *target;      /* MindSpore's name */
    const char *name;        /* device name reported (always says simulated) */
    const char *memory;      /* HWRT_SIM_MEMORY of the model */
    const char *devices;     /* HWRT_SIM_DEVICES: cards per node */
    int major, minor;        /* compute capability (GPU); -1: none */
    int sm_count;            /* multi_processor_count (GPU); 0: none */
    const char *source;
} hwpy_preset;

/* The process's choice: written only by target.c (hwpy_choose_device). */
typedef struct hwpy_choice {
    int chosen;              /* set_device succeeded */
    char target[16];         /* as the user wrote it ("Ascend") */
    char ms_target[16];      /* MindSpore's spelling ("Ascend", "GPU", "CPU") or "" */
    char backend[16];        /* the backend it runs on ("sim" for a stand-in) */
    int device_id;
    const hwpy_preset *model;     /* NULL: no stand-in */
    int memory_overridden;   /* HWRT_SIM_MEMORY given by the user */
    int by_set_device;       /* chosen by set_device (fixed), not only set_context */
    int set_memory_env, set_devices_env;   /* apply_model wrote these variables */
} hwpy_choice;
extern hwpy_choice hwpy_chosen;

/* MindSpore's spelling of a target ("Ascend", "GPU", "CPU") or NULL. */
const char *hwpy_ms_name(const char *target);
/* The stand-in model of ms ("Ascend", "GPU"), or NULL. */
const hwpy_preset *hwpy_preset_of(const char *ms);
/* HWRT_SIMULATE allows the sim to stand in for ms ("Ascend" / "GPU")? */
int hwpy_simulate_allowed(const char *ms);

/* target_deterministic.c: hwrt.set_deterministic. */
PyObject *hwpy_set_deterministic(PyObject *m, PyObject *arg);

/* target_props.c: the types, and the functions that make them. */
int hwpy_target_props_init(PyObject *module, PyObject *hal);
PyObject *hwpy_get_current_device(PyObject *m, PyObject *unused);
PyObject *hwpy_get_device_props(PyObject *m, PyObject *args);
/* DeviceProperties of device id (NULL with the exception set). */
PyObject *hwpy_props_object(int id);
/* total_memory and free_memory of a DeviceProperties made 0. 0 / -1. */
int hwpy_props_zero_memory(PyObject *props);
/* The device name as reported: the model's when the sim stands in. */
void hwpy_device_name(const hwrt_device_props *p, char *buf, size_t len);

/* target_hal.c: can hwrt run ms ("CPU", "GPU", "Ascend") in this process; its device
 * count (0 / -1). */
int hwpy_target_available(const char *ms);
int hwpy_target_count(const char *t, int *n);

/* target_devctx.c: the submodules hwrt.device_context.{ascend,gpu,cpu}. */
int hwpy_devctx_init(PyObject *devctx);

#endif

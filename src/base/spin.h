/* The pause instruction of a spin-wait loop (x86 PAUSE, Arm YIELD; nothing elsewhere):
 * it lets the sibling hyperthread run and saves power while a thread polls a flag. */
#ifndef HWI_SPIN_H
#define HWI_SPIN_H

static inline void hwi_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif
